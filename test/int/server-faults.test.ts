/**
 * The API server through database faults (issue 29), on two instances that
 * share one database: their Postgres (and their calendar servers', which
 * share it too) is reached through a TCP proxy (support/fault-proxy.ts).
 * Requests that cannot reach the database answer 503 `database_unavailable`
 * with `Retry-After`; no answer carries Postgres text; runs caught by cuts
 * or an outage finish, or end `database_unavailable` and finish on
 * continuation, with exactly one calendar event per approved write; both
 * instances answer again soon after the database comes back (the figure is
 * reported; the bound asserted is generous, so CPU contention cannot fail it).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POSTGRES_CODES, POSTGRES_WORDS } from "../../load/faults.js";
import { startFaultProxy, type FaultProxy } from "./support/fault-proxy.js";
import { BOOKING_REQUEST, startTestServer, type TestServer } from "./support/server.js";

/** The database's error words (load/faults.ts), and bits of the SQL this suite runs, as alternatives. */
const ERROR_WORDS = [POSTGRES_WORDS, "pg_sleep", "insert into", "update .* set"].join("|");
/** Driver or server text that must never reach a client. */
const POSTGRES_TEXT = new RegExp(`${POSTGRES_CODES}|${ERROR_WORDS}`, "i");
const RUNS = 20;
const APPROVE = { decisions: [{ type: "approve" }] };
/** How long an instance may take to answer again after the database is back before the test fails (generous). */
const RECOVERY_BOUND_MS = 15_000;

let proxy: FaultProxy;
/** Two instances on one database, both through the proxy. */
let servers: TestServer[] = [];
/** Every response body the tests read, checked for Postgres text at the end. */
const bodies: { status: number; text: string }[] = [];

beforeAll(async () => {
  proxy = await startFaultProxy({ host: "127.0.0.1", port: 5432 });
  const options = {
    databaseUrlFor: proxy.urlFor,
    leaseMs: 3_000,
    settings: { WARRANT_MAX_ACTIVE_RUNS: String(RUNS * 2) },
  };
  const first = await startTestServer(options);
  servers = [first, await startTestServer({ ...options, database: first.database })];
}, 120_000);
afterAll(async () => {
  // The second instance first: the first one owns (and drops) the database.
  for (const server of [...servers].reverse()) await server.close();
  await proxy?.close();
}, 60_000);

type Values = {
  status?: string;
  error?: string;
  __error__?: { error: string };
  __interrupt__?: unknown[];
  ledger?: { tool: string; status: string; idempotency_key: string | null }[];
};

const call = async (server: TestServer, pathname: string, init: { method?: string; body?: unknown } = {}) => {
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

/** Milliseconds until `server`'s /healthz answers 200 (polled every 50 ms), or Infinity past the bound. */
async function recovery(server: TestServer, since: number): Promise<number> {
  while (Date.now() - since < RECOVERY_BOUND_MS) {
    const health = await server.fetch("/healthz").catch(() => undefined);
    if (health?.status === 200) return Date.now() - since;
    await sleep(50);
  }
  return Number.POSITIVE_INFINITY;
}

/**
 * Takes a thread to its end, through both instances in turn: resumes its
 * review, continues a stopped run (`input: null`), waits out a busy thread.
 */
async function finish(threadId: string, first: number): Promise<Values> {
  const deadline = Date.now() + 120_000;
  for (let turn = first; Date.now() < deadline; turn += 1) {
    const server = servers[turn % servers.length]!;
    const state = await call(server, `/threads/${threadId}/state`);
    if (state.status !== 200) {
      await sleep(250);
      continue;
    }
    const snapshot = JSON.parse(state.text) as { values: Values; next: string[]; tasks: { interrupts: unknown[] }[] };
    const pending = snapshot.tasks.some((task) => task.interrupts.length > 0);
    if (!pending && snapshot.next.length === 0 && snapshot.values.status === "completed") return snapshot.values;
    const body = pending ? { command: { resume: APPROVE } } : { input: null };
    const answer = await call(server, `/threads/${threadId}/runs/wait`, {
      method: "POST",
      body: { assistant_id: "agent", ...body },
    });
    // The state read may be stale by the time the resume or continuation lands (another try resumed or
    // finished it): typed, and the loop reads the state again.
    const stale =
      answer.status === 409 && ["no_pending_interrupt", "nothing_to_run"].includes(String(answer.json().error));
    if (!stale) expectTyped(answer);
    if (answer.status !== 200) await sleep(250);
  }
  throw new Error(`thread ${threadId} did not finish`);
}

/** A run's answer is typed: a finished run, a run stopped on the database, or a typed refusal. */
function expectTyped(answer: Awaited<ReturnType<typeof call>>): void {
  if (answer.status === 200) {
    const values = answer.json();
    if (values.__error__) expect(["database_unavailable", "server_restarted"]).toContain(values.__error__.error);
  } else {
    expect([503, 409], answer.text).toContain(answer.status);
    expect(["database_unavailable", "database_busy", "thread_busy"]).toContain(answer.json().error);
    if (answer.status === 503) expect(answer.headers.get("retry-after")).toBe("1");
  }
}

describe("two instances through database faults", () => {
  it("answer 503 database_unavailable with Retry-After during an outage, and healthy again soon after", async () => {
    const [first, second] = servers as [TestServer, TestServer];
    const thread = await call(first, "/threads", { method: "POST", body: {} });
    expect(thread.status).toBe(200);
    const threadId = (JSON.parse(thread.text) as { thread_id: string }).thread_id;
    proxy.refuse(8_000);
    const refusedAt = Date.now();
    // Both at once: each request rides out the outage for the retry budget (5 s) before answering.
    const during = await Promise.all(servers.map((server) => call(server, `/threads/${threadId}`)));
    for (const answer of during) {
      expect(answer.status).toBe(503);
      expect(answer.headers.get("retry-after")).toBe("1");
      expect(Object.keys(JSON.parse(answer.text))).toEqual(["error", "message"]);
      expect(answer.json().error).toBe("database_unavailable");
    }
    await sleep(Math.max(0, refusedAt + 8_000 - Date.now()));
    const backAt = Date.now();
    const recovered = await Promise.all(servers.map((server) => recovery(server, backAt)));
    console.log(`healthy again after the database: ${recovered.map((ms) => `${ms} ms`).join(", ")}`);
    for (const ms of recovered) expect(ms).toBeLessThan(RECOVERY_BOUND_MS);
    expect((await call(first, `/threads/${threadId}`)).status).toBe(200);
    expect((await call(second, `/threads/${threadId}`)).status).toBe(200);
  }, 60_000);

  it("a cut under the calendar's insert, twice in a row: the approved write is applied once", async () => {
    const [first] = servers as [TestServer];
    const created = await call(first, "/threads", { method: "POST", body: {} });
    const threadId = (JSON.parse(created.text) as { thread_id: string }).thread_id;
    const asked = await call(first, `/threads/${threadId}/runs/wait`, {
      method: "POST",
      body: { assistant_id: "agent", input: { messages: [{ role: "user", content: BOOKING_REQUEST }] } },
    });
    expect(asked.json().__interrupt__, asked.text).toHaveLength(1);
    // Each cut falls before the insert reaches Postgres: nothing was written, and the statement is lost with its socket.
    proxy.cutOn(/insert into "calendar"\.events/, 2);
    let values: Values;
    try {
      values = await finish(threadId, 0);
    } finally {
      proxy.cutOn(/$^/, 0);
    }
    expect(proxy.targetedCuts()).toBe(2);
    expect(values.status).toBe("completed");
    const writes = values.ledger?.filter((row) => row.tool === "create_study_event") ?? [];
    expect(
      writes.filter((row) => row.status === "succeeded"),
      JSON.stringify(writes),
    ).toHaveLength(1);
    const key = writes.find((row) => row.status === "succeeded")?.idempotency_key;
    const events = (await first.calendarEvents()) as { idempotency_key: string }[];
    expect(events.filter((event) => event.idempotency_key === key)).toHaveLength(1);
  }, 120_000);

  it(`${RUNS} approvals on two instances through cuts and a 5 s outage: each approved write applied once`, async () => {
    const earlier = (await servers[0]!.calendarEvents()).length;
    const threads: string[] = [];
    for (let index = 0; index < RUNS; index += 1) {
      const server = servers[index % 2]!;
      const created = await call(server, "/threads", { method: "POST", body: {} });
      const threadId = (JSON.parse(created.text) as { thread_id: string }).thread_id;
      const asked = await call(server, `/threads/${threadId}/runs/wait`, {
        method: "POST",
        body: { assistant_id: "agent", input: { messages: [{ role: "user", content: BOOKING_REQUEST }] } },
      });
      expect(asked.json().__interrupt__, asked.text).toHaveLength(1);
      threads.push(threadId);
    }
    // Each approval goes to the other instance than the one that asked.
    const approvals = threads.map((threadId, index) =>
      call(servers[(index + 1) % 2]!, `/threads/${threadId}/runs/wait`, {
        method: "POST",
        body: { assistant_id: "agent", command: { resume: APPROVE } },
      }),
    );
    // Faults while the approvals run, and again while the stopped runs are continued (writes in flight).
    const faults = (async () => {
      for (let cut = 0; cut < 3; cut += 1) {
        await sleep(400);
        proxy.cut();
      }
      await sleep(300);
      proxy.refuse(5_000);
      await sleep(5_000);
      // Slower statements, so cuts catch more of them mid-flight (the calendar's writes among them).
      proxy.latency(20);
      for (let cut = 0; cut < 12; cut += 1) {
        await sleep(300 + Math.floor(Math.random() * 400));
        proxy.cut();
      }
      proxy.latency(0);
    })();
    const answers = await Promise.all(approvals);
    const outcome = (answer: (typeof answers)[number]) =>
      answer.status === 200
        ? (answer.json().__error__?.error ?? answer.json().status)
        : `${answer.status} ${answer.json().error}`;
    const tally: Record<string, number> = {};
    for (const answer of answers) tally[String(outcome(answer))] = (tally[String(outcome(answer))] ?? 0) + 1;
    console.log(`approvals through the faults: ${JSON.stringify(tally)}`);
    for (const answer of answers) expectTyped(answer);
    const ended = await Promise.all(threads.map((threadId, index) => finish(threadId, index)));
    await faults;
    const keys: string[] = [];
    for (const values of ended) {
      expect(values.status).toBe("completed");
      // Exactly one attempt of each approved write succeeded; an earlier one may have failed without effect.
      const attempts = values.ledger?.filter((row) => row.tool === "create_study_event") ?? [];
      const succeeded = attempts.filter((row) => row.status === "succeeded");
      expect(succeeded, JSON.stringify(values.ledger)).toHaveLength(1);
      keys.push(String(succeeded[0]?.idempotency_key));
    }
    // Exactly one calendar event per approved write: its key, never a second one.
    const events = (await servers[0]!.calendarEvents()) as { idempotency_key: string }[];
    const mine = new Set(keys);
    expect(
      events
        .filter((event) => mine.has(event.idempotency_key))
        .map((event) => event.idempotency_key)
        .sort(),
    ).toEqual(keys.sort());
    // Nothing else was written: the earlier tests' events and these.
    expect(events).toHaveLength(earlier + RUNS);
    const leaked = bodies.filter((body) => POSTGRES_TEXT.test(body.text));
    expect(leaked, JSON.stringify(leaked.slice(0, 3))).toEqual([]);
    expect(
      bodies.filter((body) => body.status >= 500 && !/"error":"database_(unavailable|busy)"/.test(body.text)),
    ).toEqual([]);
  }, 300_000);
});
