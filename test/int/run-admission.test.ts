/**
 * The per-principal run limit holds under concurrency, across instances:
 * two server processes on one Postgres, three principals in two tenants,
 * every request fired at once. While they run, the admission state (live
 * thread leases) and the unfinished run rows are sampled: no principal ever
 * has more than the limit in progress, and the surplus gets 429
 * `too_many_runs` with `Retry-After`.
 */
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NOTES_QUESTION } from "./support/server.js";
import { createServerSandbox, type ServerProcess, type ServerSandbox } from "./support/server-process.js";

const LIMIT = 2;
const PER_PRINCIPAL = 8;
/** alice and bob (tenant uni) read notes slowly; dana (tenant acme) has none to read, so her runs are short. */
const PRINCIPALS = ["alice", "bob", "dana"] as const;

let sandbox: ServerSandbox;
let servers: ServerProcess[];
let sampler: pg.Client;

beforeAll(async () => {
  sandbox = await createServerSandbox();
  // Each notes read takes 300 ms, so an admitted notes run stays in progress for about a second.
  const extra = { WARRANT_MAX_ACTIVE_RUNS: String(LIMIT), WARRANT_NOTES_DELAY_MS: "300", WARRANT_PG_POOL_MAX: "6" };
  servers = await Promise.all([sandbox.start(extra), sandbox.start(extra)]);
  sampler = new pg.Client({ connectionString: sandbox.databaseUrl });
  await sampler.connect();
}, 120_000);

afterAll(async () => {
  await sampler?.end();
  await sandbox?.cleanup();
});

/** Per owner, the most runs seen in progress at one sampled moment, by two measures. */
interface Peaks {
  leases: Map<string, number>;
  runs: Map<string, number>;
  samples: number;
}

async function sampleUntil(done: () => boolean): Promise<Peaks> {
  const peaks: Peaks = { leases: new Map(), runs: new Map(), samples: 0 };
  const raise = (map: Map<string, number>, rows: { owner: string; n: number }[]) => {
    for (const row of rows) map.set(row.owner, Math.max(map.get(row.owner) ?? 0, row.n));
  };
  while (!done()) {
    const leases = await sampler.query<{ owner: string; n: number }>(
      "select owner, count(*)::int as n from warrant.threads where active_run is not null and lease_until > now() group by owner",
    );
    const runs = await sampler.query<{ owner: string; n: number }>(
      "select owner, count(*)::int as n from warrant.runs where status in ('pending', 'running') group by owner",
    );
    raise(peaks.leases, leases.rows);
    raise(peaks.runs, runs.rows);
    peaks.samples += 1;
    await sleep(10);
  }
  return peaks;
}

describe("per-principal run admission", () => {
  it("never has more than the limit in progress per principal, on two instances, and answers the rest 429 with Retry-After", async () => {
    const threads = await Promise.all(
      PRINCIPALS.flatMap((user) =>
        Array.from({ length: PER_PRINCIPAL }, async (_, index) => {
          const server = servers[index % 2]!;
          const client = await sandbox.client(server, user);
          return { user, server, thread_id: (await client.threads.create()).thread_id };
        }),
      ),
    );
    let finished = false;
    // Sampled from the first request until every admitted run has ended.
    const sampling = sampleUntil(() => finished);
    const results = await Promise.all(
      threads.map(async ({ user, server, thread_id }) => {
        const response = await sandbox.fetch(server, `/threads/${thread_id}/runs`, {
          method: "POST",
          user,
          body: JSON.stringify({
            assistant_id: "agent",
            input: { messages: [{ role: "user", content: NOTES_QUESTION }] },
          }),
        });
        const body = (await response.json()) as { run_id?: string; error?: string };
        return {
          user,
          server,
          thread_id,
          status: response.status,
          retryAfter: response.headers.get("retry-after"),
          body,
        };
      }),
    );
    const admitted = results.filter((result) => result.status === 200);
    const refused = results.filter((result) => result.status === 429);
    expect(admitted.length + refused.length).toBe(results.length);
    await Promise.all(
      admitted.map(async ({ user, server, thread_id, body }) =>
        (await sandbox.client(server, user)).runs.join(thread_id, String(body.run_id)),
      ),
    );
    finished = true;
    const peaks = await sampling;

    for (const result of refused) {
      expect(result.body.error).toBe("too_many_runs");
      expect(Number(result.retryAfter)).toBeGreaterThan(0);
    }
    for (const user of PRINCIPALS) {
      expect(refused.filter((result) => result.user === user).length, `429s for ${user}`).toBeGreaterThan(0);
      expect(peaks.leases.get(user) ?? 0, `leases in progress for ${user}`).toBeLessThanOrEqual(LIMIT);
      expect(peaks.runs.get(user) ?? 0, `unfinished runs for ${user}`).toBeLessThanOrEqual(LIMIT);
    }
    // The slow principals filled their limit at some moment (the limit, not serialization, is what refused them).
    expect(peaks.leases.get("alice")).toBe(LIMIT);
    expect(peaks.samples).toBeGreaterThan(10);

    // A refused request wrote nothing: no run row on its thread.
    const refusedThreads = refused.map((result) => result.thread_id);
    const rows = await sampler.query<{ n: number }>(
      "select count(*)::int as n from warrant.runs where thread_id = any($1::uuid[])",
      [refusedThreads],
    );
    expect(rows.rows[0]?.n).toBe(0);
    // Every admitted run ended, and every lease was released.
    const unfinished = await sampler.query<{ n: number }>(
      "select count(*)::int as n from warrant.runs where status in ('pending', 'running')",
    );
    expect(unfinished.rows[0]?.n).toBe(0);
    const leased = await sampler.query<{ n: number }>(
      "select count(*)::int as n from warrant.threads where active_run is not null",
    );
    expect(leased.rows[0]?.n).toBe(0);
  }, 120_000);
});
