/**
 * LangGraph API fidelity: behaviours of the reference server's own API tests
 * (langgraphjs libs/langgraph-api/tests/api.test.mts) that do not depend on
 * its test graphs, written again for Warrant's graphs and run against our
 * server on a real Postgres. Where Warrant refuses an option on purpose, the
 * test asserts the refusal (`unsupported`, by name), never silence.
 */
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import type { Client } from "@langchain/langgraph-sdk";
import { NOTES_QUESTION, startTestServer, type TestServer } from "./support/server.js";

let server: TestServer;
let alice: Client;

const fixture = useSandbox();
beforeAll(async () => {
  // read_note is slowed so that a run is still going when it is cancelled.
  server = fixture.add(await startTestServer({ env: { WARRANT_NOTES_DELAY_MS: "300" } }));
  alice = await server.client("alice");
}, 120_000);

const ask = (content: string) => ({ input: { messages: [{ role: "user", content }] } });
type Values = {
  status?: string;
  termination_reason?: { code: string } | null;
  ledger?: { call_id: string; tool: string; status: string }[];
  messages?: { type: string; tool_calls?: { id: string; name: string }[]; tool_call_id?: string }[];
};

async function json(response: Response): Promise<{ status: number; body: Record<string, unknown> }> {
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const post = async (pathname: string, body: unknown) =>
  json(await server.fetch(pathname, { method: "POST", user: "alice", body: JSON.stringify(body) }));

async function ledgerRows(threadId: string): Promise<number> {
  const client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    return (await client.query("select 1 from warrant.ledger where thread_id = $1", [threadId])).rowCount ?? 0;
  } finally {
    await client.end();
  }
}

describe("runs", () => {
  it("after a cancel, a new message starts a new run; the cancelled run is closed, its ledger kept", async () => {
    const thread = await alice.threads.create();
    const run = await alice.runs.create(thread.thread_id, "agent", ask(NOTES_QUESTION));
    // Let it reach the slow reads (a ledger row exists), then stop it.
    for (let waited = 0; (await ledgerRows(thread.thread_id)) < 2 && waited < 20_000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));
    await alice.runs.cancel(thread.thread_id, run.run_id, true);
    expect((await alice.runs.get(thread.thread_id, run.run_id)).status).toBe("interrupted");
    const stopped = await alice.threads.getState(thread.thread_id);
    expect(stopped.next.length).toBeGreaterThan(0);
    const stoppedLedger = (stopped.values as Values).ledger ?? [];
    const durableBefore = await ledgerRows(thread.thread_id);
    expect(durableBefore).toBeGreaterThan(0);

    // "Stop, then ask again", as agent-chat-ui sends it: a placeholder tool message for every
    // tool call not followed by a tool message (its ensureToolCallsHaveResponses), then the question.
    const stoppedMessages = (stopped.values as Values).messages ?? [];
    const placeholders = stoppedMessages.flatMap((message, index) =>
      message.type === "ai" && (message.tool_calls?.length ?? 0) > 0 && stoppedMessages[index + 1]?.type !== "tool"
        ? (message.tool_calls ?? []).map((call) => ({
            type: "tool",
            tool_call_id: call.id,
            id: `do-not-render-${call.id}`,
            name: call.name,
            content: "Successfully handled tool call.",
          }))
        : [],
    );
    const response = await server.fetch(`/threads/${thread.thread_id}/runs/wait`, {
      method: "POST",
      user: "alice",
      body: JSON.stringify({
        input: {
          messages: [
            ...placeholders,
            {
              id: "c0ffee00-0000-4000-8000-00000000000b",
              type: "human",
              content: [{ type: "text", text: "What is BM25?" }],
            },
          ],
        },
        stream_mode: ["values"],
        assistant_id: "agent",
      }),
    });
    const again = (await response.json()) as Values;
    expect(response.status).toBe(200);
    expect(again.status).toBe("completed");
    // The placeholders were not taken as tool results: none of them is in the transcript.
    expect(JSON.stringify(again.messages)).not.toContain("Successfully handled tool call.");
    const runs = await alice.runs.list(thread.thread_id);
    expect(runs.map((item) => item.status)).toEqual(["success", "interrupted"]);

    // The stopped run was closed, not resumed: a checkpoint records it cancelled.
    const history = await alice.threads.getHistory(thread.thread_id, { limit: 100 });
    const closed = history.find((state) => state.metadata?.["source"] === "update");
    expect(closed).toBeDefined();
    expect((closed!.values as Values).status).toBe("cancelled");
    expect((closed!.values as Values).termination_reason?.code).toBe("cancelled");
    expect(closed!.next).toEqual([]);
    // Every tool call left without a result got one from the server, so the transcript is well-formed.
    const messages = (closed!.values as Values).messages ?? [];
    const answered = new Set(
      messages.filter((message) => message.type === "tool").map((message) => message.tool_call_id),
    );
    for (const call of messages.flatMap((message) => message.tool_calls ?? []))
      expect(answered.has(call.id)).toBe(true);
    // The ledger is append-only: the cancelled run's rows stay, in state and in Postgres.
    const finalLedger = (again.ledger ?? []).map((row) => `${row.call_id}:${row.status}`);
    for (const row of stoppedLedger) expect(finalLedger).toContain(`${row.call_id}:${row.status}`);
    expect(await ledgerRows(thread.thread_id)).toBeGreaterThanOrEqual(durableBefore);
  });

  it("honours on_disconnect: cancel on a stream (the SDK's default when not resumable)", async () => {
    const thread = await alice.threads.create();
    const controller = new AbortController();
    let runId: string | undefined;
    try {
      for await (const part of alice.runs.stream(thread.thread_id, "agent", {
        ...ask(NOTES_QUESTION),
        streamMode: ["updates"],
        onDisconnect: "cancel",
        signal: controller.signal,
        onRunCreated: (meta) => (runId = meta.run_id),
      })) {
        if (part.event === "updates") controller.abort();
      }
    } catch (error) {
      expect((error as Error).name).toMatch(/Abort/);
    }
    expect(runId).toBeDefined();
    await alice.runs.join(thread.thread_id, runId!);
    expect((await alice.runs.get(thread.thread_id, runId!)).status).toBe("interrupted");
    // A background run has no connection to watch: refused by name.
    expect(
      await post(`/threads/${thread.thread_id}/runs`, {
        assistant_id: "agent",
        ...ask(NOTES_QUESTION),
        on_disconnect: "cancel",
      }),
    ).toMatchObject({ status: 422, body: { error: "unsupported" } });
  });

  it("refuses, by name, options it does not honour; accepts those it does", async () => {
    const thread = await alice.threads.create();
    const refused: Record<string, unknown>[] = [
      { multitask_strategy: "rollback" },
      { config: { max_concurrency: 2 } },
      { context: { user_id: "bob" } },
      { webhook: "http://127.0.0.1:1/hook" },
      { durability: "async" },
      { checkpoint_during: false },
      { strict_resume: false },
      { feedback_keys: ["score"] },
      { on_completion: "delete" },
      { checkpoint: { checkpoint_ns: "subgraph" } },
    ];
    for (const extra of refused) {
      const response = await post(`/threads/${thread.thread_id}/runs/wait`, {
        assistant_id: "agent",
        ...ask(NOTES_QUESTION),
        ...extra,
      });
      expect({ extra, status: response.status, error: response.body["error"] }).toEqual({
        extra,
        status: 422,
        error: "unsupported",
      });
      expect(String(response.body["message"])).toContain(Object.keys(extra)[0]!);
    }
    expect(await alice.runs.list(thread.thread_id)).toHaveLength(0);
    // What the server does anyway is accepted.
    const values = (await alice.runs.wait(thread.thread_id, "agent", {
      ...ask(NOTES_QUESTION),
      afterSeconds: 0,
      durability: "sync",
      checkpointDuring: true,
      strictResume: true,
    })) as Values;
    expect(values.status).toBe("completed");
  });

  it("streams debug events beside the other modes", async () => {
    const thread = await alice.threads.create();
    const seen = new Set<string>();
    for await (const part of alice.runs.stream(thread.thread_id, "agent", {
      ...ask(NOTES_QUESTION),
      streamMode: ["values", "debug"] as never,
    }))
      seen.add(part.event);
    expect(seen.has("debug")).toBe(true);
    expect(seen.has("values")).toBe(true);
  });
});

describe("history", () => {
  it("checkpoints carry the run's run_id and metadata, and history filters by them", async () => {
    const thread = await alice.threads.create();
    const first = await alice.runs.create(thread.thread_id, "agent", ask(NOTES_QUESTION));
    await alice.runs.join(thread.thread_id, first.run_id);
    const second = await alice.runs.create(thread.thread_id, "agent", {
      ...ask("What is BM25?"),
      metadata: { run_metadata: "second" },
    });
    await alice.runs.join(thread.thread_id, second.run_id);

    const full = await alice.threads.getHistory(thread.thread_id, { limit: 200 });
    const bySecond = await alice.threads.getHistory(thread.thread_id, {
      limit: 200,
      metadata: { run_metadata: "second" },
    });
    const byFirstId = await alice.threads.getHistory(thread.thread_id, {
      limit: 200,
      metadata: { run_id: first.run_id },
    });
    expect(bySecond.length).toBeGreaterThan(0);
    expect(byFirstId.length).toBeGreaterThan(0);
    expect(bySecond.length + byFirstId.length).toBe(full.length);
    expect(
      bySecond.every(
        (state) => state.metadata?.["run_id"] === second.run_id && state.metadata?.["graph_id"] === "agent",
      ),
    ).toBe(true);
    expect(byFirstId.every((state) => state.metadata?.["run_id"] === first.run_id)).toBe(true);
  });
});

describe("threads", () => {
  it("search honours sort_by/sort_order, values and select; count honours values", async () => {
    const marker = { suite: `fidelity-${Date.now()}` };
    const older = await alice.threads.create({ metadata: marker });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const newer = await alice.threads.create({ metadata: marker });
    await alice.runs.wait(newer.thread_id, "agent", ask(NOTES_QUESTION));

    const asc = await alice.threads.search({ metadata: marker, sortBy: "created_at", sortOrder: "asc" });
    expect(asc.map((thread) => thread.thread_id)).toEqual([older.thread_id, newer.thread_id]);
    const desc = await alice.threads.search({ metadata: marker, sortBy: "created_at", sortOrder: "desc" });
    expect(desc.map((thread) => thread.thread_id)).toEqual([newer.thread_id, older.thread_id]);

    const completed = await alice.threads.search({ metadata: marker, values: { status: "completed" } });
    expect(completed.map((thread) => thread.thread_id)).toEqual([newer.thread_id]);
    expect(await alice.threads.count({ metadata: marker, values: { status: "completed" } })).toBe(1);
    expect(await alice.threads.count({ metadata: marker, values: { status: "failed" } })).toBe(0);
    expect(
      await alice.threads.count({ metadata: marker, values: { termination_reason: { code: "final_answer" } } }),
    ).toBe(1);

    const selected = await alice.threads.search({ metadata: marker, select: ["thread_id", "status"] });
    expect(selected.map((thread) => Object.keys(thread).sort())).toEqual([
      ["status", "thread_id"],
      ["status", "thread_id"],
    ]);

    // What cannot be honoured is refused by name.
    expect(await post("/threads/search", { values: { messages: [] } })).toMatchObject({
      status: 422,
      body: { error: "unsupported" },
    });
    expect(await post("/threads/search", { extract: { answer: "values.result.answer" } })).toMatchObject({
      status: 422,
      body: { error: "unsupported" },
    });
    expect(await post("/threads/search", { sort_by: "metadata" })).toMatchObject({
      status: 422,
      body: { error: "invalid_request" },
    });
    expect(await post("/threads", { ttl: 60 })).toMatchObject({ status: 422, body: { error: "unsupported" } });
  });
});

describe("assistants", () => {
  it("search by name is a case-insensitive substring; metadata, select and count are honoured", async () => {
    expect((await alice.assistants.search({ name: "AGE" })).map((assistant) => assistant.assistant_id)).toEqual([
      "agent",
    ]);
    expect((await alice.assistants.search({ name: "kFlO" })).map((assistant) => assistant.assistant_id)).toEqual([
      "workflow",
    ]);
    expect((await alice.assistants.search({ name: "nothing" })).length).toBe(0);
    expect((await alice.assistants.search({ metadata: { created_by: "system" } })).length).toBe(2);
    expect((await alice.assistants.search({ metadata: { created_by: "someone" } })).length).toBe(0);
    expect(await alice.assistants.count({ graphId: "agent" })).toBe(1);
    const selected = await alice.assistants.search({
      select: ["assistant_id", "name"],
      sortBy: "name",
      sortOrder: "asc",
    });
    expect(selected).toEqual([
      { assistant_id: "agent", name: "agent" },
      { assistant_id: "workflow", name: "workflow" },
    ]);
  });

  it("POST /assistants/{id}/versions lists the fixed version; /schemas gives a typed state schema", async () => {
    const versions = await alice.assistants.getVersions("agent");
    expect(versions).toMatchObject([{ assistant_id: "agent", graph_id: "agent", version: 1 }]);
    expect(await alice.assistants.getVersions("agent", { metadata: { created_by: "nobody" } })).toEqual([]);
    expect(
      (await json(await server.fetch("/assistants/nope/versions", { method: "POST", user: "alice", body: "{}" })))
        .status,
    ).toBe(404);

    const schemas = await alice.assistants.getSchemas("agent");
    const properties = (schemas.state_schema as { properties: Record<string, Record<string, unknown>> }).properties;
    expect(properties["status"]?.["enum"]).toContain("completed");
    expect(properties["messages"]?.["type"]).toBe("array");
    expect(
      (properties["ledger"]?.["items"] as { properties: Record<string, unknown> } | undefined)?.properties["status"],
    ).toBeDefined();
    for (const [field, schema] of Object.entries(properties)) {
      expect({ field, typed: "type" in schema || "enum" in schema || "anyOf" in schema }).toEqual({
        field,
        typed: true,
      });
    }
  });
});
