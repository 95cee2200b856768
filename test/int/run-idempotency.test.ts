/**
 * Run-level idempotency over HTTP (`Idempotency-Key` on run creation): the
 * SDK against our server on a real Postgres with real MCP children. A repeat
 * returns the same run and starts nothing; a repeat with another body is 422;
 * keys are per principal; two concurrent repeats start one run. The calendar
 * child shares the server's database, so events are counted in its table.
 */
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { Client } from "@langchain/langgraph-sdk";
import { databaseCalendarEvents } from "./support/calendar.js";
import { BOOKING_REQUEST, NOTES_QUESTION, startTestServer, type TestServer } from "./support/server.js";

let server: TestServer;

const fixture = useSandbox();
beforeAll(async () => {
  server = fixture.add(await startTestServer());
}, 120_000);

const ask = (content: string) => ({ assistant_id: "agent", input: { messages: [{ role: "user", content }] } });
const APPROVE = { decisions: [{ type: "approve" }] };
type Values = { status?: string; __interrupt__?: unknown[]; ledger?: { tool: string; status: string }[] };

/** An SDK client for `user` that sends `key` as Idempotency-Key on every request. */
async function keyed(user: string, key: string): Promise<Client> {
  return new Client({
    apiUrl: server.url,
    defaultHeaders: { Authorization: `Bearer ${await server.token(user)}`, "Idempotency-Key": key },
    callerOptions: { maxRetries: 0 },
  });
}

let keyCounter = 0;
const freshKey = () => `key-${Date.now()}-${(keyCounter += 1)}`;

async function sql(query: string, params: unknown[]): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    return (await client.query(query, params)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

const runsOf = (threadId: string) =>
  sql("select run_id::text as run_id from warrant.runs where thread_id = $1", [threadId]);
const post = (pathname: string, user: string, body: unknown, key?: string) =>
  server.fetch(pathname, {
    method: "POST",
    user,
    body: JSON.stringify(body),
    headers: { "Content-Type": "application/json", ...(key === undefined ? {} : { "Idempotency-Key": key }) },
  });

describe("Idempotency-Key on runs", () => {
  it("POST /threads/{id}/runs twice with one key: one run, the same run id, one execution", async () => {
    const key = freshKey();
    const alice = await keyed("alice", key);
    const thread = await alice.threads.create();
    const first = await alice.runs.create(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: NOTES_QUESTION }] },
    });
    const second = await alice.runs.create(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: NOTES_QUESTION }] },
    });
    expect(second.run_id).toBe(first.run_id);
    await alice.runs.join(thread.thread_id, first.run_id);
    const third = await alice.runs.create(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: NOTES_QUESTION }] },
    });
    expect(third.run_id).toBe(first.run_id);
    expect(await runsOf(thread.thread_id)).toHaveLength(1);
    const rows = await sql(
      "select owner, run_id::text as run_id from warrant.run_idempotency where idempotency_key = $1",
      [key],
    );
    expect(rows).toEqual([{ owner: "alice", run_id: first.run_id }]);
  }, 60_000);

  it("the same key with a different body is 422 idempotency_key_reused, and nothing starts", async () => {
    const key = freshKey();
    const alice = await keyed("alice", key);
    const thread = await alice.threads.create();
    const first = await alice.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: NOTES_QUESTION }] },
    });
    expect((first as Values).status).toBe("completed");
    const other = await post(`/threads/${thread.thread_id}/runs/wait`, "alice", ask("What is BM25?"), key);
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({ error: "idempotency_key_reused" });
    // The same body on another thread is another request too.
    const elsewhere = await (await keyed("alice", key)).threads.create();
    const moved = await post(`/threads/${elsewhere.thread_id}/runs/wait`, "alice", ask(NOTES_QUESTION), key);
    expect(moved.status).toBe(422);
    expect(await runsOf(thread.thread_id)).toHaveLength(1);
    expect(await runsOf(elsewhere.thread_id)).toHaveLength(0);
  }, 60_000);

  it("keys are per principal: bob's request with alice's key starts bob's own run", async () => {
    const key = freshKey();
    const aliceRun = await post("/runs", "alice", { ...ask(NOTES_QUESTION), on_completion: "keep" }, key);
    const bobRun = await post("/runs", "bob", { ...ask(NOTES_QUESTION), on_completion: "keep" }, key);
    const [a, b] = [
      (await aliceRun.json()) as { run_id: string; thread_id: string },
      (await bobRun.json()) as { run_id: string; thread_id: string },
    ];
    expect(a.run_id).not.toBe(b.run_id);
    // Bob cannot read alice's run through the key either.
    expect((await server.fetch(`/threads/${a.thread_id}/runs/${a.run_id}`, { user: "bob" })).status).toBe(404);
  }, 60_000);

  it("bounds the key: more than 255 characters or non-ASCII is 422 and nothing starts", async () => {
    const thread = await (await keyed("alice", "unused-key")).threads.create();
    for (const bad of ["k".repeat(256), "clé-é"]) {
      const response = await post(`/threads/${thread.thread_id}/runs`, "alice", ask(NOTES_QUESTION), bad);
      expect(response.status).toBe(422);
      expect(await response.json()).toMatchObject({ error: "invalid_request" });
    }
    expect(await runsOf(thread.thread_id)).toHaveLength(0);
    const longest = await post(`/threads/${thread.thread_id}/runs`, "alice", ask(NOTES_QUESTION), "k".repeat(255));
    expect(longest.status).toBe(200);
  }, 60_000);

  it("a resume sent twice with one key approves once and writes one event; wait returns the same run's result", async () => {
    const alice = await server.client("alice");
    const thread = await alice.threads.create();
    const paused = (await alice.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: BOOKING_REQUEST }] },
    })) as Values;
    expect(paused.__interrupt__).toHaveLength(1);
    const key = freshKey();
    const resumer = await keyed("alice", key);
    const first = (await resumer.runs.wait(thread.thread_id, "agent", { command: { resume: APPROVE } })) as Values;
    const again = (await resumer.runs.wait(thread.thread_id, "agent", { command: { resume: APPROVE } })) as Values;
    expect(first.status).toBe("completed");
    expect(again).toEqual(first);
    expect(again.ledger?.filter((row) => row.tool === "create_study_event").map((row) => row.status)).toEqual([
      "succeeded",
    ]);
    // Two runs on the thread: the booking request and the one resume.
    expect(await runsOf(thread.thread_id)).toHaveLength(2);
    const events = (await databaseCalendarEvents(server.databaseUrl)).filter(
      (row) => String(row["title"]) === "Attention study block",
    );
    expect(events.length).toBeGreaterThanOrEqual(1);
    const ofThisThread = await sql(
      "select count(*)::int as n from warrant.ledger where thread_id = $1 and tool = 'create_study_event' and status = 'succeeded'",
      [thread.thread_id],
    );
    expect(ofThisThread[0]?.["n"]).toBe(1);
  }, 90_000);

  it("two concurrent stateless /runs/wait with one key start one run and both get its result", async () => {
    const key = freshKey();
    const before = await sql("select count(*)::int as n from warrant.runs where owner = 'alice'", []);
    const [one, two] = await Promise.all([
      post("/runs/wait", "alice", ask(NOTES_QUESTION), key),
      post("/runs/wait", "alice", ask(NOTES_QUESTION), key),
    ]);
    expect([one.status, two.status]).toEqual([200, 200]);
    const [first, second] = [(await one.json()) as Values, (await two.json()) as Values];
    expect(first.status).toBe("completed");
    expect(second).toEqual(first);
    expect(
      [one.headers.get("Content-Location"), two.headers.get("Content-Location")].every(
        (value) => value === one.headers.get("Content-Location"),
      ),
    ).toBe(true);
    const after = await sql("select count(*)::int as n from warrant.runs where owner = 'alice'", []);
    expect(Number(after[0]?.["n"]) - Number(before[0]?.["n"])).toBe(1);
  }, 60_000);

  it("/runs/stream repeated with one key streams the same run", async () => {
    const key = freshKey();
    const alice = await keyed("alice", key);
    const thread = await alice.threads.create();
    const collect = async () => {
      const events: { event: string; data: unknown }[] = [];
      for await (const part of alice.runs.stream(thread.thread_id, "agent", {
        input: { messages: [{ role: "user", content: NOTES_QUESTION }] },
        streamMode: "values",
      }))
        events.push(part);
      return events;
    };
    const first = await collect();
    const second = await collect();
    const runIdOf = (events: { event: string; data: unknown }[]) =>
      (events.find((part) => part.event === "metadata")?.data as { run_id?: string } | undefined)?.run_id;
    expect(runIdOf(first)).toBeDefined();
    expect(runIdOf(second)).toBe(runIdOf(first));
    expect((second.at(-1)?.data as Values | undefined)?.status).toBe("completed");
    expect(await runsOf(thread.thread_id)).toHaveLength(1);
  }, 60_000);
});
