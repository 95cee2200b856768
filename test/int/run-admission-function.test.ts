/**
 * Run admission as one statement (`admit_run`, src/stores/run-admission.ts), on the server and on embedded Postgres:
 * concurrent admissions of one owner never pass the limit, and the rest are told how many runs are in progress;
 * another owner is not held back; a repeated admission of the same run (its answer lost) takes its own lease again
 * and does not count against itself; a live lease of another run makes the thread busy, an expired one does not
 * count; the run's bound values are set when given and kept when not; and the per-owner lock is the one held from
 * outside (a second connection holding it makes an admission wait until it lets go; server only, as embedded
 * Postgres has one connection).
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, test } from "vitest";
import { admissionLockStatement, type LeaseFields } from "../../src/stores/run-admission.js";
import type { Database } from "../../src/stores/open-database.js";
import type { Owner } from "../../src/stores/thread-rows.js";
import { backends, useBackend } from "./support/postgres.js";

const LEASE_MS = 60_000;
const FIELDS = { graph_id: "agent" };

/** A new owner of the tenant with `count` new threads. */
async function ownerWithThreads(database: Database, count: number): Promise<{ owner: Owner; threads: string[] }> {
  const owner = { tenant: "uni", user_id: `user-${randomUUID()}` };
  const threads = Array.from({ length: count }, () => randomUUID());
  for (const thread_id of threads) await database.threads.create(owner, { thread_id, metadata: {} });
  return { owner, threads };
}

describe.each(backends)("run admission in one statement on the $name backend", (backend) => {
  const opened = useBackend(backend);
  const withThreads = (count: number) => ownerWithThreads(opened().database, count);
  const admit = (owner: Owner, threadId: string, runId: string, limit: number, fields: LeaseFields = FIELDS) =>
    opened().database.threads.admission.admit(owner, threadId, runId, { leaseMs: LEASE_MS, limit, fields });

  test("concurrent admissions of one owner stop at the limit; another owner is not held back", async () => {
    const { owner, threads } = await withThreads(12);
    const answers = await Promise.all(threads.map((thread) => admit(owner, thread, randomUUID(), 4)));
    expect(answers.filter((answer) => answer.type === "admitted")).toHaveLength(4);
    const refused = answers.filter((answer) => answer.type === "over_limit");
    expect(refused).toHaveLength(8);
    expect(refused.every((answer) => answer.type === "over_limit" && answer.in_flight === 4)).toBe(true);
    expect(await opened().database.threads.admission.inFlight(owner)).toBe(4);

    const other = await withThreads(1);
    expect(await admit(other.owner, other.threads[0]!, randomUUID(), 4)).toEqual({ type: "admitted" });
  });

  test("a repeated admission of the same run takes its own lease again; another run finds the thread busy", async () => {
    const { owner, threads } = await withThreads(2);
    const [thread, second] = threads as [string, string];
    const run = randomUUID();
    expect(await admit(owner, thread, run, 1)).toEqual({ type: "admitted" });
    // At the limit of one, by this very run: it does not count against itself.
    expect(await admit(owner, thread, run, 1)).toEqual({ type: "admitted" });
    expect(await admit(owner, thread, randomUUID(), 2)).toEqual({ type: "thread_busy" });
    expect(await admit(owner, second, randomUUID(), 1)).toEqual({ type: "over_limit", in_flight: 1 });
  });

  test("an expired lease neither counts nor keeps the thread", async () => {
    const { owner, threads } = await withThreads(2);
    const [thread, second] = threads as [string, string];
    expect(await admit(owner, thread, randomUUID(), 1)).toEqual({ type: "admitted" });
    await opened().database.pool.query(
      `update ${opened().database.schema}.threads set lease_until = now() - interval '1 second' where thread_id = $1`,
      [thread],
    );
    expect(await admit(owner, second, randomUUID(), 1)).toEqual({ type: "admitted" });
    expect(await admit(owner, thread, randomUUID(), 2)).toEqual({ type: "admitted" });
  });

  test("the run's bound values are set when given and kept when not; the lease and status are written", async () => {
    const { owner, threads } = await withThreads(1);
    const thread = threads[0]!;
    const first = randomUUID();
    expect(
      await admit(owner, thread, first, 1, { graph_id: "agent", run_bound: { course: "db101" } } as never),
    ).toEqual({ type: "admitted" });
    const row = async () =>
      (
        await opened().database.pool.query<{ active_run: string; status: string; run_bound: unknown; live: boolean }>(
          `select active_run::text, status, run_bound, lease_until > now() as live
             from ${opened().database.schema}.threads where thread_id = $1`,
          [thread],
        )
      ).rows[0];
    expect(await row()).toEqual({ active_run: first, status: "busy", run_bound: { course: "db101" }, live: true });
    await opened().database.threads.release(thread, first, "idle");
    const next = randomUUID();
    expect(await admit(owner, thread, next, 1)).toEqual({ type: "admitted" });
    expect(await row()).toEqual({ active_run: next, status: "busy", run_bound: { course: "db101" }, live: true });
  });
});

// Embedded Postgres has one connection: nothing else can hold the lock while an admission waits on it.
describe("run admission in one statement on the server backend", () => {
  const opened = useBackend(backends.find((backend) => backend.name === "server")!);

  test("it waits on the owner's admission lock held elsewhere, and goes on once it is let go", async () => {
    const { owner, threads } = await ownerWithThreads(opened().database, 1);
    const holder = await opened().database.pool.connect();
    try {
      await holder.query("begin");
      await holder.query(admissionLockStatement(opened().database.schema, owner));
      let answered = false;
      const pending = opened()
        .database.threads.admission.admit(owner, threads[0]!, randomUUID(), {
          leaseMs: LEASE_MS,
          limit: 1,
          fields: FIELDS,
        })
        .finally(() => {
          answered = true;
        });
      await sleep(300);
      expect(answered).toBe(false);
      await holder.query("commit");
      expect(await pending).toEqual({ type: "admitted" });
    } finally {
      holder.release();
    }
  });
});
