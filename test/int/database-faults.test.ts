/**
 * The retry policy (src/db/retry.ts) against real faults: the
 * process's pool reaches a throwaway database through a TCP proxy
 * (support/fault-proxy.ts) that cuts every connection, refuses new ones for
 * a while or adds latency; serialization failures and terminated backends
 * come from the real server. What may be repeated is, and nothing else: a
 * write whose connection died under it is not sent twice.
 */
import pg from "pg";
import { beforeEach, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { IDEMPOTENT } from "../../src/db/retry.js";
import { openDatabase, type Database } from "../../src/stores/open-database.js";
import { startFaultProxy, type FaultProxy } from "./support/fault-proxy.js";
import { createTestDatabase, statementDone, statementInFlight, type TestDatabase } from "./support/postgres.js";
import os from "node:os";

let database: TestDatabase;
let proxy: FaultProxy;
let db: Database;
let admin: pg.Client;

const fixture = useSandbox("each");
beforeEach(async () => {
  database = fixture.add(await createTestDatabase());
  const url = new URL(database.url);
  proxy = await startFaultProxy({ host: url.hostname, port: Number(url.port || 5432) });
  // Not fixture.add: the proxy's drop(direction) is a fault to inject, not its teardown.
  fixture.defer(() => proxy.close());
  db = fixture.add(
    await openDatabase({ databaseUrl: proxy.urlFor(database.url), dataDir: os.tmpdir(), pool: { max: 4 } }),
  );
  admin = new pg.Client({ connectionString: database.url });
  fixture.defer(() => admin.end());
  await admin.connect();
  await admin.query("create table faults (n int)");
  await admin.query("create sequence attempts");
}, 60_000);

const count = async () => Number((await admin.query("select count(*)::int as n from faults")).rows[0].n);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/**
 * Statements that sleep on the server long enough that a cut lands while they run: the test waits until the server
 * executes one (statementInFlight), never a fixed time, and the sleep only has to outlast that wait's last poll.
 */
const SLOW_READ = "select pg_sleep(2), 7 as n";
const SLOW_WRITE = "insert into faults select 1 from pg_sleep(2)";
const SLOW_MARKED_WRITE = `${IDEMPOTENT}${SLOW_WRITE}`;

/** A database error as a client would be shown it must carry no Postgres text. */
const expectTyped = (error: unknown) => {
  expect(error).toMatchObject({ code: "database_unavailable" });
  expect(String((error as Error).message)).not.toMatch(/terminat|connection|ECONN|57P0|08006|select|insert/i);
};

describe("transient database errors", () => {
  it("a read in flight when every connection is cut is sent again on a fresh connection", async () => {
    await db.pool.query("select 1");
    const reading = db.pool.query(SLOW_READ);
    await statementInFlight(admin, SLOW_READ);
    proxy.cut();
    expect((await reading).rows[0].n).toBe(7);
  });

  it("a write in flight when its connection is cut is not repeated; one marked idempotent is", async () => {
    await db.pool.query("select 1");
    const writing = db.pool.query(SLOW_WRITE);
    await statementInFlight(admin, SLOW_WRITE);
    proxy.cut();
    await writing.then(
      () => expect.unreachable("a write whose connection died must not be repeated"),
      (error: unknown) => expectTyped(error),
    );
    // Postgres finished and committed it (it did not notice the client go): sending it again would have written twice.
    await statementDone(admin, SLOW_WRITE);
    expect(await count()).toBe(1);

    const marked = db.pool.query(SLOW_MARKED_WRITE);
    await statementInFlight(admin, SLOW_MARKED_WRITE);
    proxy.cut();
    await marked;
    await statementDone(admin, SLOW_MARKED_WRITE);
    // Sent again (which only a statement written to be repeated may be): both attempts committed here.
    expect(await count()).toBe(3);
  });

  it("a write whose backend the server terminated (57P01) is repeated: nothing of it committed", async () => {
    const writing = db.pool.query(SLOW_WRITE);
    await statementInFlight(admin, SLOW_WRITE);
    const killed = await admin.query(
      "select pg_terminate_backend(pid) as done from pg_stat_activity where query like 'insert into faults%' and pid <> pg_backend_pid()",
    );
    expect(killed.rows).toEqual([{ done: true }]);
    await writing;
    expect(await count()).toBe(1);
  });

  it("a serialization failure (40001) is retried", async () => {
    await db.pool.query(
      "do $$ begin if nextval('attempts') = 1 then raise exception 'conflict' using errcode = '40001'; end if; end $$",
    );
    expect((await admin.query("select last_value::int as n from attempts")).rows[0].n).toBe(2);
  });

  it("rides out a 1 s outage; a longer one than the budget fails typed, and the pool works again at once", async () => {
    await db.pool.query("select 1");
    proxy.refuse(1_000);
    const startedAt = Date.now();
    expect((await db.threads.get({ tenant: "t", user_id: "u" }, crypto.randomUUID())) ?? null).toBeNull();
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(900);

    proxy.refuse(7_000);
    const refusedAt = Date.now();
    await db.pool.query("select 1").then(
      () => expect.unreachable("the database was refused for longer than the budget"),
      (error: unknown) => expectTyped(error),
    );
    await sleep(Math.max(0, refusedAt + 7_000 - Date.now()));
    const backAt = Date.now();
    await db.pool.query("select 1");
    expect(Date.now() - backAt).toBeLessThan(2_000);
  }, 30_000);

  it("works through 200 ms of added latency", async () => {
    proxy.latency(200);
    proxy.cut();
    const results = await Promise.all(Array.from({ length: 8 }, (_, n) => db.pool.query("select $1::int as n", [n])));
    expect(results.map((result) => result.rows[0].n)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // The pool's bound holds: at most its 4 connections went through the proxy.
    expect(proxy.open()).toBeLessThanOrEqual(4);
  }, 30_000);
});
