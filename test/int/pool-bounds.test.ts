/**
 * Connection discipline: one bounded pool per process. With every
 * connection held, a query queues for `waitMs` and then fails with the typed
 * `database_busy` (503 with `Retry-After` over HTTP), never hangs; the
 * process never opens more connections than its pool size.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../src/stores/open-database.js";
import { admissionLockStatement } from "../../src/stores/run-admission.js";
import { createTestDatabase, createEmbeddedDir, type EmbeddedDir, type TestDatabase } from "./support/postgres.js";
import { NOTES_QUESTION, startTestServer, type TestServer } from "./support/server.js";
import { waitUntil } from "./support/server-process.js";

const WAIT_MS = 300;
const owner = { tenant: "uni", user_id: "alice" };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serverDatabase(max: number): Promise<{ database: Database; test: TestDatabase }> {
  const test = await createTestDatabase();
  cleanups.push(() => test.drop());
  const database = await openDatabase({ databaseUrl: test.url, dataDir: "unused", pool: { max, waitMs: WAIT_MS } });
  cleanups.push(() => database.close());
  return { database, test };
}

/** Checks out every connection of the pool; the returned function gives them back. */
async function holdAll(database: Database, count: number): Promise<() => void> {
  const clients = await Promise.all(Array.from({ length: count }, () => database.pool.connect()));
  return () => {
    for (const client of clients) client.release();
  };
}

async function connectionsTo(url: string): Promise<number> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const name = new URL(url).pathname.slice(1);
    // Minus this admin connection itself.
    const row = await admin.query<{ n: number }>(
      "select count(*)::int - 1 as n from pg_stat_activity where datname = $1",
      [name],
    );
    return row.rows[0]?.n ?? 0;
  } finally {
    await admin.end();
  }
}

async function timedFailure(work: Promise<unknown>): Promise<{ error: unknown; elapsedMs: number }> {
  const started = Date.now();
  const error = await work.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  return { error, elapsedMs: Date.now() - started };
}

describe("a bounded pool", () => {
  it(
    "server mode: a query that cannot get a connection within the wait fails with database_busy, " +
      "then works once one is free",
    async () => {
      const { database } = await serverDatabase(2);
      const giveBack = await holdAll(database, 2);
      const { error, elapsedMs } = await timedFailure(database.threads.get(owner, randomUUID()));
      expect(error).toMatchObject({ code: "database_busy" });
      expect(elapsedMs).toBeGreaterThanOrEqual(WAIT_MS - 50);
      expect(elapsedMs).toBeLessThan(WAIT_MS + 2_000);
      // Callback-style checkouts (pg-pool's own query path) get the same typed error.
      const viaCallback = await new Promise<unknown>((resolve) => database.pool.connect((failure) => resolve(failure)));
      expect(viaCallback).toMatchObject({ code: "database_busy" });
      giveBack();
      expect(await database.threads.get(owner, randomUUID())).toBeUndefined();
    },
  );

  it("server mode: never opens more connections than its size, however many queries wait", async () => {
    const { database, test } = await serverDatabase(3);
    let done = false;
    let peak = 0;
    const sampling = (async () => {
      while (!done) {
        peak = Math.max(peak, await connectionsTo(test.url));
        await sleep(10);
      }
    })();
    // 12 queries of 50 ms on 3 connections: the last waits about 200 ms, within WAIT_MS.
    await Promise.all(Array.from({ length: 12 }, () => database.pool.query("select pg_sleep(0.05)")));
    done = true;
    await sampling;
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(3);
  });

  it("embedded mode: its one connection held, a query fails with database_busy instead of hanging", async () => {
    const directory: EmbeddedDir = await createEmbeddedDir();
    cleanups.push(() => directory.remove());
    const database = await openDatabase({ dataDir: directory.dir, pool: { waitMs: WAIT_MS } });
    cleanups.push(() => database.close());
    const giveBack = await holdAll(database, 1);
    const { error, elapsedMs } = await timedFailure(database.threads.get(owner, randomUUID()));
    expect(error).toMatchObject({ code: "database_busy" });
    expect(elapsedMs).toBeLessThan(WAIT_MS + 2_000);
    giveBack();
    expect(await database.threads.get(owner, randomUUID())).toBeUndefined();
  }, 120_000); // opening PGlite takes long on a loaded machine
});

describe("a server whose pool is exhausted", () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("answers 503 database_busy with Retry-After within the wait, and the requests holding the connections still complete", async () => {
    server = await startTestServer({
      settings: { WARRANT_PG_POOL_MAX: "2", WARRANT_PG_POOL_WAIT_MS: String(WAIT_MS) },
    });
    const alice = await server.client("alice");
    const threads = await Promise.all([alice.threads.create(), alice.threads.create()]);
    // Hold alice's admission lock from outside: each of her run requests then waits on it
    // inside its admission transaction, holding one of the server's two connections.
    const blocker = new pg.Client({ connectionString: server.databaseUrl });
    // Dropping the test database terminates it if the test fails before ending it.
    blocker.on("error", () => undefined);
    await blocker.connect();
    cleanups.push(() => blocker.end().catch(() => undefined));
    await blocker.query("begin");
    await blocker.query(admissionLockStatement("warrant", owner));
    const runs = threads.map((thread) =>
      server!.fetch(`/threads/${thread.thread_id}/runs`, {
        method: "POST",
        user: "alice",
        body: JSON.stringify({
          assistant_id: "agent",
          input: { messages: [{ role: "user", content: NOTES_QUESTION }] },
        }),
      }),
    );
    const waitingOnLock = async () =>
      (
        await blocker.query<{ n: number }>(
          "select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted",
        )
      ).rows[0]?.n === 2;
    await waitUntil(waitingOnLock, "both run requests to wait on the admission lock", 10_000);

    const started = Date.now();
    const busy = await server.fetch("/threads/search", { method: "POST", user: "bob", body: JSON.stringify({}) });
    expect(Date.now() - started).toBeLessThan(WAIT_MS + 2_000);
    expect(busy.status).toBe(503);
    expect(busy.headers.get("retry-after")).toBe("1");
    expect(await busy.json()).toMatchObject({ error: "database_busy" });

    await blocker.query("rollback");
    await blocker.end();
    const answered = await Promise.all(runs);
    expect(answered.map((response) => response.status)).toEqual([200, 200]);
    for (const [index, response] of answered.entries()) {
      const run = (await response.json()) as { run_id: string };
      await alice.runs.join(threads[index]!.thread_id, run.run_id);
    }
    expect(
      (await server.fetch("/threads/search", { method: "POST", user: "bob", body: JSON.stringify({}) })).status,
    ).toBe(200);
  }, 90_000);
});
