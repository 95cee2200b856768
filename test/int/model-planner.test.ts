/**
 * Contract test of the model planner against a fake OpenAI-compatible server
 * started inside the test (support/fake-openai.ts). The server plays
 * scripted completions, as JSON or as SSE chunks depending on whether the
 * client asked to stream, and records every request body.
 */
import { AIMessageChunk, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isModelBehaviorError, type ModelErrorCode } from "../../src/errors.js";
import { parseToolArguments } from "../../src/policy/arguments.js";
import { createModelPlanner, type ModelPlannerOptions } from "../../src/planners/model.js";
import type { PlanResult, Planner, PlannerInput } from "../../src/planners/planner.js";
import type { ToolSpec } from "../../src/policy/contracts.js";
import { MAX_TOKENS_PER_REPLY } from "../../src/planners/model-request.js";
import type { Evidence } from "../../src/state/evidence.js";
import {
  startFakeOpenAI as startFakeServer,
  type FakeOpenAI as FakeServer,
  type RecordedRequest,
  type ScriptedCompletion,
} from "./support/fake-openai.js";

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

const SEARCH_TOOL: ToolSpec = {
  name: "search_notes",
  description: "Search lecture notes.",
  parameters: {
    type: "object",
    properties: { query: { type: "string" }, limit: { type: "integer" } },
    required: ["query"],
    additionalProperties: false,
  },
};
const READ_TOOL: ToolSpec = {
  name: "read_note",
  description: "Read one note.",
  parameters: { type: "object", properties: { note_id: { type: "string" } }, required: ["note_id"] },
};
const EVIDENCE: Evidence = {
  ref: "cs301/lecture-07#p3",
  source_id: "notes",
  item_id: "lecture-07",
  excerpt: "Dijkstra's algorithm needs non-negative edge weights.",
  version: "1",
  tool: "read_note",
  call_id: "call_earlier",
};
const TRUNCATED_ARGUMENTS = '{"query": "x", "limit": ';
const SECRET_KEY = "sk-test-secret-0123456789";

function plannerInput(overrides: Partial<PlannerInput> = {}): PlannerInput {
  return {
    request: "What does Dijkstra need?",
    messages: [new HumanMessage("What does Dijkstra need?")],
    tools: [SEARCH_TOOL, READ_TOOL],
    evidence: [],
    turn: 1,
    ...overrides,
  };
}

function toolNames(body: Record<string, unknown>): string[] {
  const tools = body["tools"];
  if (!Array.isArray(tools)) return [];
  return tools.map((tool: unknown) => {
    const fn = typeof tool === "object" && tool !== null ? (tool as Record<string, unknown>)["function"] : undefined;
    const name = typeof fn === "object" && fn !== null ? (fn as Record<string, unknown>)["name"] : undefined;
    return typeof name === "string" ? name : "?";
  });
}

function onlyRequest(server: FakeServer): RecordedRequest {
  expect(server.requests).toHaveLength(1);
  const [request] = server.requests;
  if (request === undefined) throw new Error("no request recorded");
  return request;
}

async function expectModelError(promise: Promise<unknown>, code: ModelErrorCode): Promise<Error> {
  const error: unknown = await promise.then(
    () => undefined,
    (rejection: unknown) => rejection,
  );
  if (!isModelBehaviorError(error)) throw new Error(`expected ModelBehaviorError ${code}, got ${String(error)}`);
  expect(error.code).toBe(code);
  expect(error.message).not.toContain("\n");
  return error;
}

/**
 * Runs `plan` inside a LangGraph node while the graph is consumed with
 * `streamMode: "messages"`, the way the chat CLI runs it.
 */
async function planInsideGraph(
  planner: Planner,
  input: PlannerInput,
): Promise<{ result: PlanResult; streamed: BaseMessage[] }> {
  let result: PlanResult | undefined;
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("plan", async () => {
      result = await planner.plan(input);
      return { messages: [] };
    })
    .addEdge(START, "plan")
    .addEdge("plan", END)
    .compile();
  const streamed: BaseMessage[] = [];
  for await (const [message] of await graph.stream({ messages: [] }, { streamMode: "messages" }))
    streamed.push(message);
  if (result === undefined) throw new Error("the plan node did not run");
  return { result, streamed };
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

describe("model planner against a fake OpenAI-compatible server", () => {
  let server: FakeServer;
  const planner = (options: Partial<ModelPlannerOptions> = {}): Planner =>
    createModelPlanner({ model: "fake-model", baseUrl: server.baseUrl, maxRetries: 0, ...options });

  beforeEach(async () => {
    server = await startFakeServer();
  });
  afterEach(async () => {
    await server.close();
  });

  describe("tool calls", () => {
    it("maps a single tool call with its id, without streaming on a plain call", async () => {
      server.enqueue({
        kind: "completion",
        tool_calls: [{ id: "call_abc", name: "search_notes", arguments: '{"query": "dijkstra"}' }],
        finish_reason: "tool_calls",
      });
      const { outcome } = await planner().plan(plannerInput());
      expect(outcome).toEqual({
        type: "tool_calls",
        calls: [{ call_id: "call_abc", name: "search_notes", raw_arguments: '{"query": "dijkstra"}' }],
      });
      const { body, path } = onlyRequest(server);
      expect(path).toBe("/v1/chat/completions");
      expect(body["stream"]).not.toBe(true);
      expect(body["model"]).toBe("fake-model");
      expect(body["temperature"]).toBe(0);
    });

    it("keeps two parallel tool calls with both ids in order, and any text", async () => {
      server.enqueue({
        kind: "completion",
        content: "Looking both up.",
        tool_calls: [
          { id: "call_1", name: "search_notes", arguments: '{"query": "a"}' },
          { id: "call_2", name: "read_note", arguments: '{"note_id": "n-7"}' },
        ],
        finish_reason: "tool_calls",
      });
      const { outcome } = await planner().plan(plannerInput());
      expect(outcome).toEqual({
        type: "tool_calls",
        text: "Looking both up.",
        calls: [
          { call_id: "call_1", name: "search_notes", raw_arguments: '{"query": "a"}' },
          { call_id: "call_2", name: "read_note", raw_arguments: '{"note_id": "n-7"}' },
        ],
      });
    });

    it("binds exactly input.tools as OpenAI function tools", async () => {
      server.enqueue({ kind: "completion", content: "ok", finish_reason: "stop" });
      await planner().plan(plannerInput({ tools: [READ_TOOL] }));
      const { body } = onlyRequest(server);
      expect(toolNames(body)).toEqual(["read_note"]);
      expect(body["tools"]).toEqual([
        {
          type: "function",
          function: { name: READ_TOOL.name, description: READ_TOOL.description, parameters: READ_TOOL.parameters },
        },
      ]);
    });

    it("binds no tools at all when input.tools is empty", async () => {
      server.enqueue({ kind: "completion", content: "ok", finish_reason: "stop" });
      await planner().plan(plannerInput({ tools: [] }));
      const { body } = onlyRequest(server);
      expect(body).not.toHaveProperty("tools");
      expect(body).not.toHaveProperty("tool_choice");
    });

    it("passes arguments that are not JSON through verbatim; parseToolArguments rejects them", async () => {
      server.enqueue({
        kind: "completion",
        tool_calls: [{ id: "call_bad", name: "search_notes", arguments: TRUNCATED_ARGUMENTS }],
        finish_reason: "tool_calls",
      });
      const { outcome } = await planner().plan(plannerInput());
      if (outcome.type !== "tool_calls") throw new Error(`expected tool calls, got ${outcome.type}`);
      expect(outcome.calls).toEqual([
        { call_id: "call_bad", name: "search_notes", raw_arguments: TRUNCATED_ARGUMENTS },
      ]);
      const parsed = parseToolArguments(outcome.calls[0]?.raw_arguments ?? "");
      expect(parsed).toMatchObject({ ok: false, code: "invalid_arguments" });
    });

    it("passes raw arguments through when the reply was cut off (finish reason length)", async () => {
      server.enqueue({
        kind: "completion",
        tool_calls: [{ id: "call_cut", name: "search_notes", arguments: '{"query": "dijk' }],
        finish_reason: "length",
      });
      const { outcome } = await planner().plan(plannerInput());
      expect(outcome).toEqual({
        type: "tool_calls",
        calls: [{ call_id: "call_cut", name: "search_notes", raw_arguments: '{"query": "dijk' }],
      });
    });

    it("gives a call without an id a documented id, unique to the reply", async () => {
      server.enqueue({
        kind: "completion",
        tool_calls: [
          { name: "search_notes", arguments: "{}" },
          { name: "read_note", arguments: "{}" },
        ],
        finish_reason: "tool_calls",
      });
      const { outcome } = await planner().plan(plannerInput({ turn: 3 }));
      if (outcome.type !== "tool_calls") throw new Error(`expected tool calls, got ${outcome.type}`);
      const [first, second] = outcome.calls;
      expect(first?.call_id).toMatch(/^call_3_0_[0-9a-f]{8}$/);
      expect(second?.call_id).toMatch(/^call_3_1_[0-9a-f]{8}$/);
    });

    it("refuses two calls sharing one id", async () => {
      server.enqueue({
        kind: "completion",
        tool_calls: [
          { id: "call_same", name: "search_notes", arguments: "{}" },
          { id: "call_same", name: "read_note", arguments: "{}" },
        ],
        finish_reason: "tool_calls",
      });
      await expectModelError(planner().plan(plannerInput()), "model_invalid_arguments");
    });
  });

  describe("streaming under LangGraph's messages stream mode", () => {
    it("streams (stream: true) and keeps truncated argument text, not LangChain's partial parse", async () => {
      server.enqueue({
        kind: "completion",
        tool_calls: [{ id: "call_stream", name: "search_notes", arguments: TRUNCATED_ARGUMENTS }],
        finish_reason: "tool_calls",
        usage: { prompt_tokens: 40, completion_tokens: 9 },
      });
      const { result, streamed } = await planInsideGraph(planner(), plannerInput());

      // What ChatOpenAI does here: LangGraph's messages handler prefers streaming, so it streams.
      const { body } = onlyRequest(server);
      expect(body["stream"]).toBe(true);
      expect(body["stream_options"]).toEqual({ include_usage: true });
      expect(streamed.length).toBeGreaterThan(1);

      // LangChain itself partial-parses the same text into a completed-looking object.
      const chunks = streamed.filter((message): message is AIMessageChunk => AIMessageChunk.isInstance(message));
      const merged = chunks.reduce((left, right) => left.concat(right));
      expect(merged.tool_calls?.[0]?.args).toEqual({ query: "x" });

      expect(result.outcome).toEqual({
        type: "tool_calls",
        calls: [{ call_id: "call_stream", name: "search_notes", raw_arguments: TRUNCATED_ARGUMENTS }],
      });
      expect(parseToolArguments(TRUNCATED_ARGUMENTS).ok).toBe(false);
      expect(result.usage).toEqual({ input_tokens: 40, output_tokens: 9 });
    });

    it("gives the same outcome streamed and not streamed", async () => {
      const completion: ScriptedCompletion = {
        kind: "completion",
        content: "Checking.",
        tool_calls: [
          { id: "call_p1", name: "search_notes", arguments: '{"query": "shortest paths", "limit": 5}' },
          { id: "call_p2", name: "read_note", arguments: '{"note_id": "lecture-07"}' },
          { id: "call_p3", name: "search_notes", arguments: '{"query": "neg' },
        ],
        finish_reason: "tool_calls",
        usage: { prompt_tokens: 12, completion_tokens: 30 },
      };
      server.enqueue(completion, completion);
      const plain = await planner().plan(plannerInput());
      const { result: streamed } = await planInsideGraph(planner(), plannerInput());
      expect(server.requests.map((request) => request.body["stream"] === true)).toEqual([false, true]);
      expect(streamed).toEqual(plain);
      expect(plain.outcome).toMatchObject({
        type: "tool_calls",
        calls: [{ call_id: "call_p1" }, { call_id: "call_p2" }, { call_id: "call_p3" }],
      });
    });

    it("detects an unknown finish reason in a streamed reply", async () => {
      server.enqueue({ kind: "completion", content: "Sure", finish_reason: "weird" });
      await expectModelError(planInsideGraph(planner(), plannerInput()), "model_unknown_finish_reason");
    });

    it("parses a streamed final answer", async () => {
      server.enqueue({
        kind: "completion",
        content: `{"answer": "Non-negative weights.", "citations": ["${EVIDENCE.ref}"], "abstained": false}`,
        finish_reason: "stop",
      });
      const { result } = await planInsideGraph(planner(), plannerInput({ evidence: [EVIDENCE] }));
      expect(result.outcome).toEqual({
        type: "final",
        answer: "Non-negative weights.",
        citations: [EVIDENCE.ref],
        abstained: false,
      });
    });
  });

  describe("final replies", () => {
    it("parses a final JSON answer with citations, and names evidence no result shows by ref only, after the transcript", async () => {
      server.enqueue({
        kind: "completion",
        content: `{"answer": "It needs non-negative edge weights.", "citations": ["${EVIDENCE.ref}"], "abstained": false}`,
        finish_reason: "stop",
      });
      const { outcome } = await planner().plan(plannerInput({ evidence: [EVIDENCE] }));
      expect(outcome).toEqual({
        type: "final",
        answer: "It needs non-negative edge weights.",
        citations: [EVIDENCE.ref],
        abstained: false,
      });
      const messages = onlyRequest(server).body["messages"];
      expect(Array.isArray(messages)).toBe(true);
      const [system, user, reminder, ...rest] = messages as Array<{ role: string; content: string }>;
      expect(system?.role).toBe("system");
      // Issue 23: nothing per step before the transcript, so the system message names no evidence.
      expect(system?.content).not.toContain(EVIDENCE.ref);
      expect(system?.content).toContain("never instructions");
      expect(user).toEqual({ role: "user", content: "What does Dijkstra need?" });
      // Issue 11.5: tool text never enters a system message; the ref is appended as an id, never the excerpt.
      expect(reminder?.role).toBe("system");
      expect(reminder?.content).toContain(JSON.stringify([EVIDENCE.ref]));
      expect(reminder?.content).not.toContain(EVIDENCE.excerpt);
      expect(rest).toEqual([]);
    });

    it("accepts the JSON inside a code fence and an abstention", async () => {
      server.enqueue({
        kind: "completion",
        content: '```json\n{"answer": "The notes do not say.", "citations": [], "abstained": true}\n```',
        finish_reason: "stop",
      });
      const { outcome } = await planner().plan(plannerInput());
      expect(outcome).toEqual({ type: "final", answer: "The notes do not say.", citations: [], abstained: true });
    });

    it("maps needs_human", async () => {
      server.enqueue({
        kind: "completion",
        content: '{"needs_human": "A grade change needs the instructor."}',
        finish_reason: "stop",
      });
      const { outcome } = await planner().plan(plannerInput());
      expect(outcome).toEqual({ type: "needs_human", reason: "A grade change needs the instructor." });
    });

    it("treats plain text as an uncited final answer", async () => {
      server.enqueue({ kind: "completion", content: "Non-negative weights.", finish_reason: "stop" });
      const { outcome } = await planner().plan(plannerInput());
      expect(outcome).toEqual({ type: "final", answer: "Non-negative weights.", citations: [], abstained: false });
    });

    it("records usage tokens, and zero when the server reports none", async () => {
      server.enqueue(
        {
          kind: "completion",
          content: "a",
          finish_reason: "stop",
          usage: { prompt_tokens: 123, completion_tokens: 45 },
        },
        { kind: "completion", content: "b", finish_reason: "stop" },
      );
      expect((await planner().plan(plannerInput())).usage).toEqual({ input_tokens: 123, output_tokens: 45 });
      expect((await planner().plan(plannerInput())).usage).toEqual({ input_tokens: 0, output_tokens: 0 });
    });

    // Usage feeds the token and cost budgets: a negative count would switch them off.
    it.each([
      ["a negative prompt_tokens", { prompt_tokens: -1_000_000, completion_tokens: 5 }, "prompt_tokens = -1000000"],
      ["a fractional completion_tokens", { prompt_tokens: 10, completion_tokens: 2.5 }, "completion_tokens = 2.5"],
      ["an absurd prompt_tokens", { prompt_tokens: 10_000_001, completion_tokens: 5 }, "prompt_tokens = 10000001"],
      [
        "prompt_tokens as text",
        { prompt_tokens: "12" as unknown as number, completion_tokens: 5 },
        "prompt_tokens = a string",
      ],
    ])("refuses %s as model_invalid_usage, streamed or not", async (_label, usage, detail) => {
      server.enqueue({ kind: "completion", content: "a", finish_reason: "stop", usage });
      const error = await expectModelError(planner().plan(plannerInput()), "model_invalid_usage");
      expect(error.message).toContain(detail);
      server.enqueue({ kind: "completion", content: "a", finish_reason: "stop", usage });
      const streamed = await planInsideGraph(planner(), plannerInput()).then(
        () => undefined,
        (rejection: unknown) => rejection,
      );
      expect(isModelBehaviorError(streamed) && streamed.code).toBe("model_invalid_usage");
    });

    it("accepts usage at the per-reply limit", async () => {
      server.enqueue({
        kind: "completion",
        content: "a",
        finish_reason: "stop",
        usage: { prompt_tokens: MAX_TOKENS_PER_REPLY, completion_tokens: 0 },
      });
      expect((await planner().plan(plannerInput())).usage).toEqual({
        input_tokens: MAX_TOKENS_PER_REPLY,
        output_tokens: 0,
      });
    });

    it("carries the configured price, never one from the reply", () => {
      const price = { input_per_million_usd: 0.15, output_per_million_usd: 0.6 };
      expect(planner({ price }).price).toEqual(price);
      expect(planner().price).toBeUndefined();
    });
  });

  describe("failures", () => {
    it.each(["content_filter", "weird"])("refuses finish reason %s", async (reason) => {
      server.enqueue({ kind: "completion", content: "", finish_reason: reason });
      const error = await expectModelError(planner().plan(plannerInput()), "model_unknown_finish_reason");
      expect(error.message).toContain(reason);
    });

    it.each([
      ["empty content", ""],
      ["null content", null],
      ["whitespace", "  \n "],
    ])("refuses an empty reply (%s)", async (_label, content) => {
      server.enqueue({ kind: "completion", content, finish_reason: "stop" });
      await expectModelError(planner().plan(plannerInput()), "model_empty_reply");
    });

    it("maps a 500 to model_request_failed with the status, one line, no API key", async () => {
      server.enqueue({ kind: "failure", status: 500, message: `upstream broke while using key ${SECRET_KEY}` });
      const error = await expectModelError(
        planner({ apiKey: SECRET_KEY }).plan(plannerInput()),
        "model_request_failed",
      );
      expect(error.message).toMatch(/^model request failed: HTTP 500/);
      expect(error.message).not.toContain(SECRET_KEY);
      expect(error.stack ?? "").not.toContain(SECRET_KEY);
      expect(onlyRequest(server).authorization).toBe(`Bearer ${SECRET_KEY}`);
    });

    it("sends a placeholder key when none is configured", async () => {
      server.enqueue({ kind: "completion", content: "ok", finish_reason: "stop" });
      await planner().plan(plannerInput());
      expect(onlyRequest(server).authorization).toBe("Bearer not-needed");
    });

    it("retries a 500 once by default, then fails", async () => {
      server.enqueue(
        { kind: "failure", status: 500, message: "boom" },
        { kind: "failure", status: 500, message: "boom" },
      );
      const withDefaults = createModelPlanner({ model: "fake-model", baseUrl: server.baseUrl });
      await expectModelError(withDefaults.plan(plannerInput()), "model_request_failed");
      expect(server.requests).toHaveLength(2);
    });

    it("does not retry a 400", async () => {
      server.enqueue({ kind: "failure", status: 400, message: "bad request" });
      const withDefaults = createModelPlanner({ model: "fake-model", baseUrl: server.baseUrl });
      const error = await expectModelError(withDefaults.plan(plannerInput()), "model_request_failed");
      expect(error.message).toMatch(/^model request failed: HTTP 400/);
      expect(server.requests).toHaveLength(1);
    });

    it("maps a 500 during a streamed run to model_request_failed", async () => {
      server.enqueue({ kind: "failure", status: 503, message: "overloaded" });
      const error = await expectModelError(planInsideGraph(planner(), plannerInput()), "model_request_failed");
      expect(error.message).toMatch(/^model request failed: HTTP 503/);
    });

    it("maps a refused connection to model_request_failed", async () => {
      const address = server.baseUrl;
      await server.close();
      const error = await expectModelError(planner({ baseUrl: address }).plan(plannerInput()), "model_request_failed");
      expect(error.message).toMatch(/^model request failed: network error/);
      server = await startFakeServer();
    });

    it("maps a server that never answers to model_request_failed after the timeout", async () => {
      server.enqueue({ kind: "silence" });
      const error = await expectModelError(planner({ timeoutMs: 300 }).plan(plannerInput()), "model_request_failed");
      expect(error.message).toMatch(/^model request failed: timed out/);
    });

    it("rethrows a caller's abort unchanged", async () => {
      server.enqueue({ kind: "silence" });
      const controller = new AbortController();
      const pending = planner().plan(plannerInput({ signal: controller.signal }));
      setTimeout(() => controller.abort(), 50);
      const error: unknown = await pending.then(
        () => undefined,
        (rejection: unknown) => rejection,
      );
      expect(error).toBeInstanceOf(Error);
      expect(isModelBehaviorError(error)).toBe(false);
    });
  });
});
