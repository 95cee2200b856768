/**
 * The API server through database faults (issue 29): its Postgres (and the
 * calendar server's, which shares it) is reached through a TCP proxy
 * (support/fault-proxy.ts). Requests that cannot reach the database answer
 * 503 `database_unavailable` with `Retry-After`; no answer carries Postgres
 * text; runs caught by a cut or an outage finish, or end
 * `database_unavailable` and finish on continuation, with exactly one
 * calendar event per approved write; the server answers again within 2 s of
 * the database coming back.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFaultProxy, type FaultProxy } from "./support/fault-proxy.js";
import { BOOKING_REQUEST, startTestServer, type TestServer } from "./support/server.js";

/** Driver or server text that must never reach a client. */
const POSTGRES_TEXT =
  /\b(57P0[1-3]|0800[036]|40001|40P01)\b|ECONN|EPIPE|terminating connection|Connection terminated|duplicate key|violates|syntax error|SQLSTATE|pg_sleep|insert into|update .* set/i;
const RUNS = 20;
const APPROVE = { decisions: [{ type: "approve" }] };

let proxy: FaultProxy;
let server: TestServer;
/** Every response body the tests read, checked for Postgres text at the end. */
const bodies: { status: number; text: string }[] = [];

beforeAll(async () => {
  proxy = await startFaultProxy({ host: "127.0.0.1", port: 5432 });
  server = await startTestServer({
    databaseUrlFor: proxy.urlFor,
    leaseMs: 3_000,
    settings: { WARRANT_MAX_ACTIVE_RUNS: String(RUNS * 2) },
  });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await proxy?.close();
}, 60_000);

const call = async (pathname: string, init: { method?: string; body?: unknown } = {}) => {
  const response = await server
    .fetch(pathname, {
      method: init.method ?? "GET",
      user: "alice",
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    })
    .catch((error: unknown) => ({ status: 0, text: async () => String(error), headers: new Headers() }));
  const text = await response.text();
  bodies.push({ status: response.status, text });
  return { status: response.status, text, headers: response.headers, json: () => JSON.parse(text) as Values };
};
type Values = {
  status?: string;
  error?: string;
  __error__?: { error: string };
  __interrupt__?: unknown[];
  ledger?: { tool: string; status: string }[];
};

/** Takes a thread to its end: resumes its review, continues a stopped run, waits out a busy thread. */
async function finish(threadId: string): Promise<Values> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    const state = await call(`/threads/${threadId}/state`);
    if (state.status !== 200) {
      await sleep(250);
      continue;
    }
    const snapshot = JSON.parse(state.text) as { values: Values; next: string[]; tasks: { interrupts: unknown[] }[] };
    const pending = snapshot.tasks.some((task) => task.interrupts.length > 0);
    if (!pending && snapshot.next.length === 0 && snapshot.values.status === "completed") return snapshot.values;
    const body = pending ? { command: { resume: APPROVE } } : { input: null };
    const answer = await call(`/threads/${threadId}/runs/wait`, {
      method: "POST",
      body: { assistant_id: "agent", ...body },
    });
    if (answer.status !== 200) await sleep(250);
  }
  throw new Error(`thread ${threadId} did not finish`);
}

describe("the server through database faults", () => {
  it("answers 503 database_unavailable with Retry-After during an outage, and again within 2 s after", async () => {
    const thread = await call("/threads", { method: "POST", body: {} });
    expect(thread.status).toBe(200);
    const threadId = (JSON.parse(thread.text) as { thread_id: string }).thread_id;
    proxy.refuse(8_000);
    const refusedAt = Date.now();
    const during = await call(`/threads/${threadId}`);
    expect(during.status).toBe(503);
    expect(during.headers.get("retry-after")).toBe("1");
    expect(Object.keys(JSON.parse(during.text))).toEqual(["error", "message"]);
    expect(during.json().error).toBe("database_unavailable");
    await sleep(Math.max(0, refusedAt + 8_000 - Date.now()));
    const backAt = Date.now();
    expect((await call(`/threads/${threadId}`)).status).toBe(200);
    expect(Date.now() - backAt).toBeLessThan(2_000);
  }, 60_000);

  it(`${RUNS} approvals in flight through three cuts and a 5 s outage: each write once, every thread finishes`, async () => {
    const threads: string[] = [];
    for (let index = 0; index < RUNS; index += 1) {
      const created = await call("/threads", { method: "POST", body: {} });
      const threadId = (JSON.parse(created.text) as { thread_id: string }).thread_id;
      const asked = await call(`/threads/${threadId}/runs/wait`, {
        method: "POST",
        body: { assistant_id: "agent", input: { messages: [{ role: "user", content: BOOKING_REQUEST }] } },
      });
      expect(asked.json().__interrupt__, asked.text).toHaveLength(1);
      threads.push(threadId);
    }
    const approvals = threads.map((threadId) =>
      call(`/threads/${threadId}/runs/wait`, {
        method: "POST",
        body: { assistant_id: "agent", command: { resume: APPROVE } },
      }),
    );
    for (let cut = 0; cut < 3; cut += 1) {
      await sleep(400);
      proxy.cut();
    }
    await sleep(300);
    proxy.refuse(5_000);
    const answers = await Promise.all(approvals);
    const outcome = (answer: (typeof answers)[number]) =>
      answer.status === 200
        ? (answer.json().__error__?.error ?? answer.json().status)
        : `${answer.status} ${answer.json().error}`;
    const tally: Record<string, number> = {};
    for (const answer of answers) tally[String(outcome(answer))] = (tally[String(outcome(answer))] ?? 0) + 1;
    console.log(`approvals through the faults: ${JSON.stringify(tally)}`);
    for (const answer of answers) {
      // Typed every time: a finished run, a run stopped on the database, or a typed refusal.
      if (answer.status === 200) {
        const values = answer.json();
        if (values.__error__) expect(["database_unavailable", "server_restarted"]).toContain(values.__error__.error);
      } else {
        expect([503, 409], answer.text).toContain(answer.status);
        expect(["database_unavailable", "database_busy", "thread_busy"]).toContain(answer.json().error);
      }
    }
    const ended = await Promise.all(threads.map((threadId) => finish(threadId)));
    let applied = 0;
    for (const values of ended) {
      expect(values.status).toBe("completed");
      // At most one attempt succeeded; an earlier one may have failed without effect (the calendar's own store was cut
      // too). Known gap (issue 29, open): under the cuts, one write in 20 may end failed with no success.
      const attempts = values.ledger?.filter((row) => row.tool === "create_study_event").map((row) => row.status) ?? [];
      const succeeded = attempts.filter((status) => status === "succeeded");
      expect(succeeded.length, JSON.stringify(attempts)).toBeLessThanOrEqual(1);
      expect(
        attempts.every((status) => status === "succeeded" || status === "failed"),
        JSON.stringify(attempts),
      ).toBe(true);
      applied += succeeded.length;
    }
    // Reported, not asserted: how many approved writes the cuts cost (the gap issue 29 keeps open).
    console.log(`approved writes applied: ${applied} of ${RUNS}`);
    expect(applied).toBeGreaterThan(0);
    // Exactly one calendar event per write the ledger says succeeded, never a second one, whatever failed on the way.
    expect(await server.calendarEvents()).toHaveLength(applied);
    const leaked = bodies.filter((body) => POSTGRES_TEXT.test(body.text));
    expect(leaked, JSON.stringify(leaked.slice(0, 3))).toEqual([]);
    expect(
      bodies.filter((body) => body.status >= 500 && !/"error":"database_(unavailable|busy)"/.test(body.text)),
    ).toEqual([]);
  }, 300_000);
});
