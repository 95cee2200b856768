/**
 * Stored run events go to Postgres in groups: appends of several runs that
 * arrive while one insert is in flight are written by the next statement
 * together (group commit), each run's rows in order, and one run's bad rows
 * (its run row gone) fail that run's append alone.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/stores/open-database.js";
import type { StoredEvent } from "../../src/stores/run-events-store.js";
import { useSandbox } from "../support/sandbox.js";
import { openTestDatabase } from "./support/postgres.js";

const owner = { tenant: "uni", user_id: "alice" };
const fixture = useSandbox();
let database: Database;

beforeAll(async () => {
  database = fixture.add(await openTestDatabase());
}, 60_000);

async function newRun(): Promise<string> {
  const threadId = randomUUID();
  const runId = randomUUID();
  await database.threads.create(owner, { thread_id: threadId, metadata: {} });
  await database.threads.createRun(owner, {
    run_id: runId,
    thread_id: threadId,
    assistant_id: "agent",
    status: "running",
    metadata: {},
    kwargs: {},
  });
  return runId;
}

const events = (from: number, count: number): StoredEvent[] =>
  Array.from({ length: count }, (_, index) => ({
    seq: from + index,
    event: "updates",
    chain: null,
    delta: false,
    data: JSON.stringify({ step: from + index }),
  }));

/** Counts the statements the pool sends while `work` runs. */
async function statementsDuring(work: () => Promise<unknown>): Promise<number> {
  const pool = database.pool as unknown as { query: (...args: unknown[]) => Promise<unknown> };
  const query = pool.query;
  let count = 0;
  pool.query = (...args: unknown[]) => {
    count += 1;
    return query.apply(database.pool, args);
  };
  try {
    await work();
  } finally {
    pool.query = query;
  }
  return count;
}

describe("run events group commit", () => {
  it("writes the appends of many runs that wait behind one insert in one statement, each run's rows in order", async () => {
    const runs = await Promise.all(Array.from({ length: 20 }, newRun));
    const statements = await statementsDuring(async () => {
      // The first append is in flight alone; the other 39 wait and go together.
      await Promise.all(runs.flatMap((runId) => [database.runEvents.append(runId, events(0, 3))]));
      await Promise.all(runs.map((runId) => database.runEvents.append(runId, events(3, 2))));
    });
    expect(statements).toBeLessThanOrEqual(4);
    for (const runId of runs) {
      const stored = await database.runEvents.read(runId, -1, { limit: 100, withBases: false });
      expect(stored.map((row) => row.seq)).toEqual([0, 1, 2, 3, 4]);
      expect(stored.map((row) => JSON.parse(row.data).step)).toEqual([0, 1, 2, 3, 4]);
    }
  });

  it("fails only the append whose rows cannot be stored; the others in its group land", async () => {
    const [first, second] = [await newRun(), await newRun()];
    const missing = randomUUID(); // no run row: the foreign key refuses its rows
    const results = await Promise.allSettled([
      database.runEvents.append(first, events(0, 1)),
      database.runEvents.append(second, events(0, 2)),
      database.runEvents.append(missing, events(0, 2)),
      database.runEvents.append(first, events(1, 1)),
    ]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect((results[2] as PromiseRejectedResult).reason).toMatchObject({ code: "23503" });
    expect((await database.runEvents.read(first, -1, { limit: 10, withBases: false })).map((row) => row.seq)).toEqual([
      0, 1,
    ]);
    expect((await database.runEvents.read(second, -1, { limit: 10, withBases: false })).length).toBe(2);
  });
});
