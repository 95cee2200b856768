/**
 * The one view of what a client may see (src/server/client-view.ts): no
 * host-owned configurable key at any depth, a principal by identity only,
 * LangGraph's raw checkpoint payloads in the LangGraph API's shape. Fed with
 * what a real compiled graph streams in `checkpoints`, `debug`, `tasks`,
 * `values` and `updates` modes under a run config built by `runConfigFor`.
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { Annotation, MemorySaver, messagesStateReducer, StateGraph, START, END } from "@langchain/langgraph";
import type { BaseMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal.js";
import { forClient, toClientJson } from "../../src/server/client-view.js";
import { CLIENT_VISIBLE_KEYS, HOST_OWNED_KEYS, runConfigFor } from "../../src/run-config.js";

const alice: Principal = {
  user_id: "alice",
  tenant: "uni",
  role: "student",
  display_name: "Alice",
  scopes: ["notes:read", "calendar:write"],
  grants: { courses: ["cs301-secret-grant"] },
};
const RUN_ID = "run-4c1d";
const config = runConfigFor({ threadId: "t-1", runId: RUN_ID, principal: alice, runBound: { case_id: "C-123" } });

/** Whether a JSON text still carries anything only the host may know. */
function leaks(json: string): string[] {
  const found: string[] = [];
  for (const key of ["langgraph_auth_user", "warrant_run_bound", "langgraph_auth_permissions", "parentConfig"])
    if (json.includes(`"${key}"`)) found.push(key);
  if (json.includes("cs301-secret-grant")) found.push("grants");
  if (json.includes("calendar:write")) found.push("scopes");
  if (json.includes("C-123")) found.push("run-bound value");
  // A configurable naming our run id (the run's own id elsewhere, e.g. values.run.run_id, is data).
  for (const match of json.matchAll(/"configurable":\{[^{}]*\}/g))
    if (match[0].includes("warrant_run_id") || match[0].includes(RUN_ID)) found.push("configurable run id");
  return found;
}

const State = Annotation.Root({
  messages: Annotation<BaseMessage[]>({ reducer: messagesStateReducer, default: () => [] }),
  run: Annotation<{ run_id: string; owner: string; principal: Principal } | undefined>(),
});

/** Every chunk a two-node graph streams in the modes whose payloads repeat the state or the config. */
async function streamed(): Promise<[string, unknown][]> {
  const graph = new StateGraph(State)
    .addNode("plan", () => ({
      run: { run_id: RUN_ID, owner: "alice", principal: alice },
      messages: [new AIMessage({ content: "planned", id: "a1" })],
    }))
    .addNode("observe", () => ({ messages: [new AIMessage({ content: "done", id: "a2" })] }))
    .addEdge(START, "plan")
    .addEdge("plan", "observe")
    .addEdge("observe", END)
    .compile({ checkpointer: new MemorySaver() });
  const chunks: [string, unknown][] = [];
  const stream = await graph.stream(
    { messages: [new HumanMessage({ content: "hi", id: "h1" })] },
    { ...config, streamMode: ["values", "updates", "tasks", "checkpoints", "debug"] },
  );
  for await (const chunk of stream as AsyncIterable<[string, unknown]>) chunks.push(chunk);
  return chunks;
}

describe("client view of a real graph's stream", () => {
  it("the raw chunks do carry the host's keys (what this view exists for)", async () => {
    const raw = JSON.stringify((await streamed()).filter(([mode]) => mode === "checkpoints"));
    expect(leaks(raw)).toEqual(expect.arrayContaining(["langgraph_auth_user", "warrant_run_bound", "parentConfig"]));
  });

  it("leaves no host-owned key, scope, grant or bound value in any mode's payload", async () => {
    const chunks = await streamed();
    expect(new Set(chunks.map(([mode]) => mode))).toEqual(
      new Set(["values", "updates", "tasks", "checkpoints", "debug"]),
    );
    for (const [mode, data] of chunks) expect({ mode, leaks: leaks(toClientJson(data)) }).toEqual({ mode, leaks: [] });
  });

  it("gives checkpoints and debug checkpoint events the LangGraph API's shape", async () => {
    const chunks = await streamed();
    const checkpoints = chunks
      .filter(([mode]) => mode === "checkpoints")
      .map(([, data]) => forClient<Record<string, unknown>>(data));
    const debug = chunks
      .filter(([mode, data]) => mode === "debug" && (data as { type?: string }).type === "checkpoint")
      .map(([, data]) => forClient<{ payload: Record<string, unknown> }>(data).payload);
    expect(checkpoints.length).toBeGreaterThanOrEqual(3);
    expect(debug).toEqual(checkpoints);
    const reference = expect.objectContaining({
      thread_id: "t-1",
      checkpoint_ns: "",
      checkpoint_id: expect.any(String),
    });
    for (const [index, payload] of checkpoints.entries()) {
      expect(Object.keys(payload).sort()).toEqual(
        ["checkpoint", "config", "metadata", "next", "parent_checkpoint", "parent_config", "tasks", "values"].sort(),
      );
      expect(Object.keys(payload.checkpoint as object).sort()).toEqual(["checkpoint_id", "checkpoint_ns", "thread_id"]);
      expect(payload.checkpoint).toEqual(reference);
      expect(payload.config).toEqual({ configurable: payload.checkpoint });
      // The first checkpoint has no parent; each later one names the one before it.
      if (index === 0) expect(payload.parent_checkpoint).toBeNull();
      else {
        expect(payload.parent_checkpoint).toEqual(checkpoints[index - 1]?.checkpoint);
        expect(payload.parent_config).toEqual({ configurable: payload.parent_checkpoint });
      }
    }
  });

  it("shows the principal in the state by identity only, and keeps the run's own data", async () => {
    const values = (await streamed()).filter(([mode]) => mode === "values").at(-1)?.[1];
    const view = forClient<{ run: { run_id: string; principal: unknown }; messages: { type: string }[] }>(values);
    expect(view.run.run_id).toBe(RUN_ID);
    expect(view.run.principal).toEqual({ user_id: "alice", tenant: "uni", role: "student", display_name: "Alice" });
    expect(view.messages.map((message) => message.type)).toEqual(["human", "ai", "ai"]);
  });
});

describe("client view of any value", () => {
  it("keeps only the checkpoint's location of a configurable, wherever it is", () => {
    const configurable = {
      ...config.configurable,
      checkpoint_ns: "",
      checkpoint_id: "c-1",
      checkpoint_map: { "": "c-1" },
      __pregel_scratchpad: {},
      user_id: "alice",
      langgraph_auth_user_id: "alice",
    };
    expect(forClient({ deep: [{ configurable }] })).toEqual({
      deep: [
        { configurable: { thread_id: "t-1", checkpoint_ns: "", checkpoint_id: "c-1", checkpoint_map: { "": "c-1" } } },
      ],
    });
    // Every key the run-config owner marks host-owned is outside what a configurable keeps.
    for (const key of HOST_OWNED_KEYS) expect(CLIENT_VISIBLE_KEYS).not.toContain(key);
  });

  it("drops the principal and bound keys at any depth, but keeps ordinary data named user_id or warrant_run_id", () => {
    const value = {
      langgraph_auth_user: alice,
      nested: { warrant_run_bound: { case_id: "C-123" }, langgraph_auth_permissions: ["x"] },
      ledger: [{ args: { user_id: "alice", title: "x" } }],
      outcome: { warrant_run_id: RUN_ID },
    };
    expect(forClient(value)).toEqual({
      nested: {},
      ledger: [{ args: { user_id: "alice", title: "x" } }],
      outcome: { warrant_run_id: RUN_ID },
    });
  });

  it("is idempotent: a view of a view is the same JSON (the response middleware re-serializes event-built values)", async () => {
    for (const [, data] of await streamed()) expect(toClientJson(forClient(data))).toBe(toClientJson(data));
  });

  it("turns a subgraph task's state config into its checkpoint, and leaves an API-shaped state alone", () => {
    const raw = {
      config: { configurable: { thread_id: "t-1", checkpoint_ns: "", checkpoint_id: "c-2" } },
      parentConfig: { configurable: { thread_id: "t-1", checkpoint_ns: "", checkpoint_id: "c-1" } },
      values: {},
      metadata: { step: 1 },
      next: ["sub"],
      tasks: [
        {
          id: "k",
          name: "sub",
          interrupts: [],
          state: { configurable: { ...config.configurable, checkpoint_ns: "sub:k" } },
        },
      ],
    };
    const view = forClient<{ tasks: Record<string, unknown>[] }>(raw);
    expect(view.tasks[0]).toEqual({
      id: "k",
      name: "sub",
      interrupts: [],
      checkpoint: { thread_id: "t-1", checkpoint_ns: "sub:k", checkpoint_id: null },
    });
    const state = {
      values: {},
      next: [],
      tasks: [],
      metadata: {},
      checkpoint: { thread_id: "t-1" },
      parent_checkpoint: null,
    };
    expect(forClient(state)).toEqual(state);
  });

  it("serializes messages as the SDK's dicts and errors without stacks", () => {
    expect(forClient({ m: new HumanMessage({ content: "hi", id: "h1" }), e: new TypeError("bad") })).toMatchObject({
      m: { type: "human", content: "hi", id: "h1" },
      e: { error: "TypeError", message: "bad" },
    });
  });

  it("converts each message once however often a state repeating it is sent, with the same JSON as converting it anew", () => {
    const human = new HumanMessage({ content: "plan my week", id: "h1" });
    const ai = new AIMessage({
      content: "",
      id: "a1",
      tool_calls: [{ id: "c1", name: "search_notes", args: { q: "x" } }],
    });
    const fresh = JSON.stringify({
      messages: [human, ai].map((message) => ({ ...message.toDict().data, type: message.getType() })),
      last: { ...ai.toDict().data, type: "ai" },
    });
    let conversions = 0;
    for (const message of [human, ai]) {
      const toJSON = message.toJSON.bind(message);
      message.toJSON = () => {
        conversions += 1;
        return toJSON();
      };
    }
    const values = () => ({ messages: [human, ai], last: ai });
    const sent = [toClientJson(values()), toClientJson(values()), toClientJson({ nested: [values()] })];
    expect(conversions).toBe(2);
    expect(sent[0]).toBe(fresh);
    expect(sent[1]).toBe(fresh);
    expect(sent[2]).toBe(JSON.stringify({ nested: [JSON.parse(fresh)] }));
  });
});
