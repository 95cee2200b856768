/**
 * The calendar's Postgres store through database faults (issue 29): its
 * statements go through the TCP fault proxy to a throwaway database. A
 * connection cut while the insert is on its way, or after it committed but
 * before its answer came back, and a short outage, are ridden out by the one
 * retry policy: the create resolves, and the key holds exactly one row. An
 * outage longer than the store's retry budget fails the create (the server
 * answers `outcome_unknown`), and the status read settles it once the
 * database is back.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../tools/calendar/postgres-store.js";
import type { CalendarStoreBackend } from "../../tools/calendar/store.js";
import { databaseCalendarEvents } from "./support/calendar.js";
import { startFaultProxy, type FaultProxy } from "./support/fault-proxy.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";

let database: TestDatabase;
let proxy: FaultProxy;
let store: CalendarStoreBackend;

beforeAll(async () => {
  database = await createTestDatabase();
  proxy = await startFaultProxy({ host: "127.0.0.1", port: 5432 });
  store = await openPostgresStore(proxy.urlFor(database.url));
}, 60_000);
afterAll(async () => {
  await store?.close();
  await proxy?.close();
  await database?.drop();
}, 60_000);
beforeEach(() => proxy.latency(0));
afterEach(() => proxy.latency(0));

let keys = 0;
const input = () => ({
  user_id: "alice",
  idempotency_key: `faults-${(keys += 1)}`,
  title: "Study attention",
  start: "2026-12-02T18:00:00Z",
  end: "2026-12-02T19:00:00Z",
  timezone: "UTC",
  calendar: "study",
});

const rowsFor = async (key: string) =>
  (await databaseCalendarEvents(database.url)).filter((row) => row["idempotency_key"] === key);

describe("the calendar's Postgres store through database faults", () => {
  it("a cut before the insert reaches the database: created once", async () => {
    await store.count(); // warm one connection
    proxy.latency(200);
    const args = input();
    const creating = store.create(args);
    await sleep(80);
    proxy.cut();
    proxy.latency(0);
    const outcome = await creating;
    expect(outcome.kind).toBe("created");
    expect(await rowsFor(args.idempotency_key)).toHaveLength(1);
  }, 30_000);

  it("a cut after the insert committed, before its answer came back: settled as the one row, no second", async () => {
    await store.count();
    proxy.latency(300);
    const args = input();
    const creating = store.create(args);
    // The insert reaches Postgres after 300 ms and commits at once; its answer is still on its way back at 450 ms.
    for (let waited = 0; waited < 5_000 && (await rowsFor(args.idempotency_key)).length === 0; waited += 20)
      await sleep(20);
    proxy.cut();
    proxy.latency(0);
    const outcome = await creating;
    expect(outcome.kind).toBe("created");
    if (outcome.kind === "created") expect(outcome.result.event.idempotency_key).toBe(args.idempotency_key);
    expect(await rowsFor(args.idempotency_key)).toHaveLength(1);
  }, 30_000);

  it("a 1 s outage: create, status and list wait it out", async () => {
    const args = input();
    proxy.refuse(1_000);
    const outcome = await store.create(args);
    expect(outcome.kind).toBe("created");
    proxy.refuse(1_000);
    expect(await store.status(args)).toMatchObject({ applied: true });
    proxy.refuse(1_000);
    const listed = await store.list({ user_id: "alice" });
    expect(listed.ok && listed.result.events.some((event) => event.idempotency_key === args.idempotency_key)).toBe(
      true,
    );
    expect(await rowsFor(args.idempotency_key)).toHaveLength(1);
  }, 30_000);

  it("an outage longer than the retry budget fails the create; the status read settles it afterwards", async () => {
    const args = input();
    proxy.refuse(6_000);
    const refusedAt = Date.now();
    await expect(store.create(args)).rejects.toMatchObject({ code: "database_unavailable" });
    await sleep(Math.max(0, refusedAt + 6_000 - Date.now()));
    expect(await store.status(args)).toEqual({ applied: false });
    expect((await store.create(args)).kind).toBe("created");
    expect(await rowsFor(args.idempotency_key)).toHaveLength(1);
  }, 30_000);
});
