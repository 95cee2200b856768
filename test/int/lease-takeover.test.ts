/**
 * A run whose process stops past its lease (issue 46 item 7): instance A runs
 * alice's notes question with a slow read_note (15 s) and a short lease
 * (3 s); A is SIGSTOPped mid-step, the lease runs out, and instance B takes
 * the thread over with a run of its own, which completes. Then A is SIGCONTed:
 * its heartbeat finds the lease gone (`and active_run = $2` in
 * thread-store.ts's heartbeat), the run aborts with "lease lost", and A writes
 * nothing into the thread B owns: no checkpoint, no ledger row, the thread's
 * state as B left it. A heartbeat that renewed any lease of the thread would
 * keep A's run going, which then writes its own steps after the takeover.
 */
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { createServerSandbox, waitUntil, type ServerSandbox } from "./support/server-process.js";
import { NOTES_QUESTION } from "./support/server.js";

const LEASE_MS = 3_000;
const ask = (content: string) => ({ input: { messages: [{ role: "user" as const, content }] } });

let sandbox: ServerSandbox | undefined;
afterEach(async () => {
  await sandbox?.cleanup();
  sandbox = undefined;
}, 60_000);

async function rows<T extends pg.QueryResultRow>(databaseUrl: string, sql: string, params: unknown[]): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

describe("a run stopped past its lease", () => {
  it("another instance takes the thread over; on SIGCONT the first run aborts with lease lost and writes nothing", async () => {
    sandbox = await createServerSandbox();
    const url = sandbox.databaseUrl;
    const [a, b] = await Promise.all([
      sandbox.start({ WARRANT_RUN_LEASE_MS: String(LEASE_MS), WARRANT_NOTES_DELAY_MS: "15000" }),
      // B's own sweep is slow: the takeover is the request's.
      sandbox.start({ WARRANT_RUN_LEASE_MS: "60000" }),
    ]);
    const [onA, onB] = await Promise.all([sandbox.client(a, "alice"), sandbox.client(b, "alice")]);
    const thread = await onA.threads.create();
    const first = await onA.runs.create(thread.thread_id, "agent", ask(NOTES_QUESTION));
    await waitUntil(
      async () =>
        (
          await rows(url, "select 1 from warrant.threads where thread_id = $1 and active_run = $2", [
            thread.thread_id,
            first.run_id,
          ])
        ).length === 1,
      "A's run to hold the thread",
    );
    // Past the write-ahead's idle flush (2 s): what A held of its first steps is written before it stops.
    await sleep(3_000);
    a.signal("SIGSTOP");
    try {
      await sleep(LEASE_MS + 1_000);
      const second = (await onB.runs.wait(thread.thread_id, "agent", ask(NOTES_QUESTION))) as { status?: string };
      expect(second.status).toBe("completed");
      const owned = await rows<{ active_run: string | null }>(
        url,
        "select active_run::text from warrant.threads where thread_id = $1",
        [thread.thread_id],
      );
      expect(owned).toEqual([{ active_run: null }]);
    } finally {
      a.signal("SIGCONT");
    }
    const checkpoints = () =>
      rows<{ checkpoint_id: string }>(url, "select checkpoint_id from checkpoints where thread_id = $1 order by 1", [
        thread.thread_id,
      ]);
    const ledger = () =>
      rows<{ call_id: string }>(url, "select call_id from warrant.ledger where thread_id = $1 order by 1", [
        thread.thread_id,
      ]);
    const afterTakeover = { checkpoints: await checkpoints(), ledger: await ledger() };
    const stateAfterTakeover = (await onB.threads.getState(thread.thread_id)).values;

    // A's run learns at its next heartbeat that the lease is gone, and stops.
    await waitUntil(
      async () =>
        (
          await rows(url, "select 1 from warrant.run_events where run_id = $1 and event = 'error' and data like $2", [
            first.run_id,
            "%lease lost%",
          ])
        ).length === 1,
      "A's run to stop with lease lost",
      20_000,
    );
    // Longer than what was left of read_note's delay: a run still going would have written its steps by now.
    await sleep(12_000);
    expect(await checkpoints()).toEqual(afterTakeover.checkpoints);
    expect(await ledger()).toEqual(afterTakeover.ledger);
    expect((await onB.threads.getState(thread.thread_id)).values).toEqual(stateAfterTakeover);
    const ended = await rows<{ active_run: string | null; status: string }>(
      url,
      "select active_run::text, status from warrant.threads where thread_id = $1",
      [thread.thread_id],
    );
    expect(ended).toEqual([{ active_run: null, status: "idle" }]);
  }, 180_000);
});
