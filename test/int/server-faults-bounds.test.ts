/**
 * The API server's pool bounds through a slow or half-dead database link
 * (issue 29), through the TCP fault proxy (support/fault-proxy.ts), on a
 * small pool (3 connections, 1 s queue wait, 1.5 s query timeout):
 * - with 200 ms of added round-trip latency the runs finish, each approved
 *   write applied once, and a burst beyond the pool is answered 503
 *   `database_busy` with `Retry-After` (typed), never left hanging;
 * - with the database's answers dropped one way (the link silently stops
 *   delivering server → client bytes, the socket stays open), a request
 *   answers 503 `database_unavailable` (the client-side query timeout gives
 *   the connection up) instead of hanging, and the server is healthy again
 *   once the link is.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFaultProxy, type FaultProxy } from "./support/fault-proxy.js";
import { BOOKING_REQUEST, startTestServer, type TestServer } from "./support/server.js";

const APPROVE = { decisions: [{ type: "approve" }] };
const RUNS = 4;

let proxy: FaultProxy;
let server: TestServer;

beforeAll(async () => {
  proxy = await startFaultProxy({ host: "127.0.0.1", port: 5432 });
  server = await startTestServer({
    databaseUrlFor: proxy.urlFor,
    settings: {
      WARRANT_PG_POOL_MAX: "3",
      WARRANT_PG_POOL_WAIT_MS: "1000",
      WARRANT_PG_QUERY_TIMEOUT_MS: "1500",
      // The instance's background pollers (queued runs, crons, webhook deliveries) stay off the 3 connections,
      // so what is measured is the requests' own statements.
      WARRANT_QUEUE_POLL_MS: "600000",
      WARRANT_CRON_INTERVAL_MS: "600000",
      WARRANT_WEBHOOK_POLL_MS: "600000",
      WARRANT_MAX_ACTIVE_RUNS: String(RUNS * 2),
    },
  });
}, 120_000);
afterAll(async () => {
  proxy?.latency(0);
  proxy?.drop(undefined);
  await server?.close();
  await proxy?.close();
}, 60_000);

type Values = {
  status?: string;
  error?: string;
  __interrupt__?: unknown[];
  ledger?: { tool: string; status: string }[];
};

const call = async (pathname: string, init: { method?: string; body?: unknown } = {}) => {
  const response = await server.fetch(pathname, {
    method: init.method ?? "GET",
    user: "alice",
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await response.text();
  return { status: response.status, text, headers: response.headers, json: () => JSON.parse(text) as Values };
};

/** A refusal on the database is typed: 503 with a code and Retry-After, or a thread still busy. */
function expectTypedRefusal(answer: Awaited<ReturnType<typeof call>>): void {
  expect([503, 409], answer.text).toContain(answer.status);
  expect(["database_unavailable", "database_busy", "thread_busy"], answer.text).toContain(answer.json().error);
  if (answer.status === 503) expect(answer.headers.get("retry-after")).toBe("1");
}

/** Sends `body` to the thread until it is answered 200 (a typed refusal is retried after its Retry-After). */
async function runUntilAnswered(threadId: string, body: Record<string, unknown>): Promise<Values> {
  for (let tries = 0; tries < 40; tries += 1) {
    const answer = await call(`/threads/${threadId}/runs/wait`, {
      method: "POST",
      body: { assistant_id: "agent", ...body },
    });
    if (answer.status === 200) return answer.json();
    expectTypedRefusal(answer);
    await sleep(500);
  }
  throw new Error(`thread ${threadId}: no answer`);
}

describe("the pool's bounds through a slow or half-dead link", () => {
  it("200 ms of added latency: the runs finish, each write once; a burst beyond the pool is database_busy", async () => {
    proxy.latency(100); // each way: 200 ms per round trip
    try {
      const ended = await Promise.all(
        Array.from({ length: RUNS }, async () => {
          const created = await call("/threads", { method: "POST", body: {} });
          expect(created.status, created.text).toBe(200);
          const threadId = (JSON.parse(created.text) as { thread_id: string }).thread_id;
          const asked = await runUntilAnswered(threadId, {
            input: { messages: [{ role: "user", content: BOOKING_REQUEST }] },
          });
          expect(asked.__interrupt__).toHaveLength(1);
          let values = await runUntilAnswered(threadId, { command: { resume: APPROVE } });
          // A run stopped on the database (database_busy or _unavailable) is continued from its last checkpoint.
          for (let turn = 0; values.status !== "completed" && turn < 10; turn += 1)
            values = await runUntilAnswered(threadId, { input: null });
          return { threadId, values };
        }),
      );
      for (const { values } of ended) {
        expect(values.status).toBe("completed");
        const writes = values.ledger?.filter((row) => row.tool === "create_study_event" && row.status === "succeeded");
        expect(writes).toHaveLength(1);
      }
      expect(await server.calendarEvents()).toHaveLength(RUNS);

      // 40 reads at once on 3 connections, each statement 200 ms: the queue's 1 s bound answers the excess.
      const threadId = ended[0]!.threadId;
      const burst = await Promise.all(Array.from({ length: 40 }, () => call(`/threads/${threadId}/history`)));
      const tally: Record<string, number> = {};
      for (const answer of burst) {
        const key = answer.status === 200 ? "200" : `${answer.status} ${answer.json().error}`;
        tally[key] = (tally[key] ?? 0) + 1;
        if (answer.status !== 200) {
          expect(answer.status, answer.text).toBe(503);
          expect(answer.json().error).toBe("database_busy");
          expect(answer.headers.get("retry-after")).toBe("1");
          expect(Object.keys(answer.json())).toEqual(["error", "message"]);
        }
      }
      console.log(`40 reads on a 3-connection pool at +200 ms: ${JSON.stringify(tally)}`);
      expect(tally["503 database_busy"] ?? 0).toBeGreaterThan(0);
      expect(tally["200"] ?? 0).toBeGreaterThan(0);
    } finally {
      proxy.latency(0);
    }
  }, 240_000);

  it("answers dropped one way: database_unavailable instead of a hang, healthy again after", async () => {
    const created = await call("/threads", { method: "POST", body: {} });
    const threadId = (JSON.parse(created.text) as { thread_id: string }).thread_id;
    proxy.drop("down");
    let during: Awaited<ReturnType<typeof call>>;
    try {
      during = await call(`/threads/${threadId}`);
    } finally {
      proxy.drop(undefined);
    }
    expect(during.status, during.text).toBe(503);
    expect(during.json().error).toBe("database_unavailable");
    expect(during.headers.get("retry-after")).toBe("1");
    // The connections whose answers were lost were given up; fresh ones answer.
    let health = 0;
    for (let tries = 0; tries < 100 && health !== 200; tries += 1) {
      health = (await server.fetch("/healthz")).status;
      if (health !== 200) await sleep(100);
    }
    expect(health).toBe(200);
    expect((await call(`/threads/${threadId}`)).status).toBe(200);
  }, 60_000);
});
