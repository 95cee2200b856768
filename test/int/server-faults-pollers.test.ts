/**
 * Background work has its own connections (issue 46 item 5): with the
 * pollers ON (queued runs every 500 ms, webhook deliveries and cron ticks
 * every 200 ms) on a small pool (4 connections: 3 for requests, 1 for the
 * background, `WARRANT_PG_BACKGROUND_POOL_MAX`), the database's answers are
 * dropped one way (support/fault-proxy.ts). The pollers' statements hang on
 * their connection until the client-side query timeout, but only on the
 * background pool's: every request still gets a connection of its own and
 * answers the truth, 503 `database_unavailable` (never `database_busy`, which
 * is what a request that queued behind the pollers answered), and the server
 * is healthy again once the link is.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFaultProxy, type FaultProxy } from "./support/fault-proxy.js";
import { startTestServer, type TestServer } from "./support/server.js";

let proxy: FaultProxy;
let server: TestServer;

beforeAll(async () => {
  proxy = await startFaultProxy({ host: "127.0.0.1", port: 5432 });
  server = await startTestServer({
    databaseUrlFor: proxy.urlFor,
    settings: {
      WARRANT_PG_POOL_MAX: "4",
      WARRANT_PG_BACKGROUND_POOL_MAX: "1",
      WARRANT_PG_POOL_WAIT_MS: "1000",
      WARRANT_PG_QUERY_TIMEOUT_MS: "1500",
      // Every poller on, and often: the webhook sender only polls with a secret configured.
      WARRANT_QUEUE_POLL_MS: "500",
      WARRANT_CRON_INTERVAL_MS: "200",
      WARRANT_WEBHOOK_POLL_MS: "200",
      WARRANT_WEBHOOK_SECRET: "pollers-test-secret-0123456789abcdef",
    },
  });
}, 120_000);
afterAll(async () => {
  proxy?.drop(undefined);
  await server?.close();
  await proxy?.close();
}, 60_000);

const call = async (pathname: string, init: { method?: string; body?: unknown } = {}) => {
  const response = await server.fetch(pathname, {
    method: init.method ?? "GET",
    user: "alice",
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    text,
    headers: response.headers,
    json: () => JSON.parse(text) as { error?: string },
  };
};

describe("pollers on their own connections under a one-way drop", () => {
  it("requests answer 503 database_unavailable (not database_busy) while every poller is stuck", async () => {
    const created = await call("/threads", { method: "POST", body: {} });
    expect(created.status, created.text).toBe(200);
    const threadId = (JSON.parse(created.text) as { thread_id: string }).thread_id;

    proxy.drop("down");
    const answers: Awaited<ReturnType<typeof call>>[] = [];
    try {
      // Long enough for each poller to have sent a statement that now hangs on its connection.
      await sleep(1_200);
      // One request at a time (the requests' own 3 connections are theirs alone), each through the token gate too.
      for (const pathname of [`/threads/${threadId}`, `/threads/${threadId}/history`, `/threads/${threadId}`])
        answers.push(await call(pathname));
    } finally {
      proxy.drop(undefined);
    }
    for (const answer of answers) {
      expect(answer.status, answer.text).toBe(503);
      expect(answer.json().error, answer.text).toBe("database_unavailable");
      expect(answer.headers.get("retry-after")).toBe("1");
    }

    let health = 0;
    for (let tries = 0; tries < 100 && health !== 200; tries += 1) {
      health = (await server.fetch("/healthz")).status;
      if (health !== 200) await sleep(100);
    }
    expect(health).toBe(200);
    expect((await call(`/threads/${threadId}`)).status).toBe(200);
  }, 120_000);
});
