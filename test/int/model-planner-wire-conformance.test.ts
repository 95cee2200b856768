/**
 * Issue 42, wire conformance side by side: the same recorded-shape replies
 * played by each provider's scripted endpoint in its own API (OpenAI Chat
 * Completions, support/fake-openai.ts; Anthropic Messages,
 * support/fake-anthropic.ts), plain and streamed under LangGraph's
 * `messages` stream mode, through the shipped model planner over HTTP.
 * Parallel tool calls with arguments split across stream pieces, arguments
 * cut off by a length / `max_tokens` stop (kept as the model's raw text, so
 * validation sees what was sent, not LangChain's repair), reasoning next to
 * the answer (OpenAI-compatible `reasoning_content`, Anthropic `thinking`),
 * refusals (OpenAI's `refusal` field with no content, Anthropic's `refusal`
 * stop; OpenAI's `content_filter` finish), usage with each wire's cache
 * fields read into the counts, and malformed usage refused.
 */
import { HumanMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isModelBehaviorError } from "../../src/errors.js";
import { createModelPlanner } from "../../src/planners/model.js";
import type { PlanResult, Planner, PlannerInput } from "../../src/planners/planner.js";
import type { ToolSpec } from "../../src/policy/contracts.js";
import { parseToolArguments } from "../../src/policy/arguments.js";
import { startFakeAnthropic, type FakeAnthropic } from "./support/fake-anthropic.js";
import { startFakeOpenAI, type FakeOpenAI } from "./support/fake-openai.js";

const SEARCH: ToolSpec = {
  name: "search_notes",
  description: "Search lecture notes.",
  parameters: {
    type: "object",
    properties: { query: { type: "string" }, limit: { type: "integer" } },
    required: ["query"],
  },
};
const READ: ToolSpec = {
  name: "read_note",
  description: "Read one note.",
  parameters: { type: "object", properties: { note_id: { type: "string" } }, required: ["note_id"] },
};
const REQUEST = "What does Dijkstra need?";
const ANSWER = '{"answer":"non-negative weights","citations":[],"abstained":false}';

const input = (): PlannerInput => ({
  request: REQUEST,
  messages: [new HumanMessage(REQUEST)],
  tools: [SEARCH, READ],
  evidence: [],
  turn: 1,
});

async function planInsideGraph(planner: Planner, plannerInput: PlannerInput): Promise<PlanResult> {
  let result: PlanResult | undefined;
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("plan", async () => {
      result = await planner.plan(plannerInput);
      return { messages: [] };
    })
    .addEdge(START, "plan")
    .addEdge("plan", END)
    .compile();
  for await (const _ of await graph.stream({ messages: [] }, { streamMode: "messages" })) {
    // consumed only so that the model streams
  }
  if (result === undefined) throw new Error("the plan node did not run");
  return result;
}

interface Call {
  id: string;
  name: string;
  args: string;
}

/** One provider's endpoint, scripted in its own API. */
interface Wire {
  planner(): Planner;
  calls(calls: Call[], stop?: "done" | "cut"): void;
  answerWithReasoning(answer: string, reasoning: string): void;
  refusal(text: string): void;
  /** 1,250 input tokens of which 900 read from the cache (and, on Anthropic, 300 written). */
  cachedUsage(): void;
  malformedUsage(kind: "negative cache read" | "cache read as text" | "cache parts above the input"): void;
  streamed(): boolean | undefined;
  pending(): number;
  close(): Promise<void>;
}

async function openAIWire(): Promise<Wire> {
  const server: FakeOpenAI = await startFakeOpenAI();
  const usage = (cached: unknown, prompt = 1_250) => ({
    prompt_tokens: prompt,
    completion_tokens: 5,
    prompt_tokens_details: { cached_tokens: cached },
  });
  return {
    planner: () =>
      createModelPlanner({ model: "gpt-test", provider: "openai", baseUrl: server.baseUrl, maxRetries: 0 }),
    calls: (calls, stop = "done") =>
      server.enqueue({
        kind: "completion",
        tool_calls: calls.map((call) => ({ id: call.id, name: call.name, arguments: call.args })),
        finish_reason: stop === "cut" ? "length" : "tool_calls",
      }),
    answerWithReasoning: (answer, reasoning) =>
      server.enqueue({
        kind: "completion",
        content: answer,
        finish_reason: "stop",
        extra: { reasoning_content: reasoning },
      }),
    refusal: (text) =>
      server.enqueue({ kind: "completion", content: null, finish_reason: "stop", extra: { refusal: text } }),
    cachedUsage: () =>
      server.enqueue({ kind: "completion", content: ANSWER, finish_reason: "stop", usage: usage(900) }),
    malformedUsage: (kind) =>
      server.enqueue({
        kind: "completion",
        content: ANSWER,
        finish_reason: "stop",
        usage:
          kind === "negative cache read"
            ? usage(-40)
            : kind === "cache read as text"
              ? usage("900")
              : usage(2_000, 1_000),
      }),
    streamed: () => server.requests.at(-1)?.body["stream"] === true,
    pending: () => server.pending(),
    close: () => server.close(),
  };
}

async function anthropicWire(): Promise<Wire> {
  const server: FakeAnthropic = await startFakeAnthropic();
  const text = (value: string) => ({ type: "text" as const, text: value });
  const usage = (extra: Record<string, unknown>) => ({ input_tokens: 50, output_tokens: 5, ...extra });
  return {
    planner: () =>
      createModelPlanner({ model: "claude-test", provider: "anthropic", baseUrl: server.baseUrl, maxRetries: 0 }),
    calls: (calls, stop = "done") =>
      server.enqueue({
        kind: "message",
        content: calls.map((call) => ({ type: "tool_use", id: call.id, name: call.name, input: call.args })),
        stop_reason: stop === "cut" ? "max_tokens" : "tool_use",
        pieceLength: 4,
      }),
    answerWithReasoning: (answer, reasoning) =>
      server.enqueue({
        kind: "message",
        content: [{ type: "thinking", thinking: reasoning, signature: "sig" }, text(answer)],
        stop_reason: "end_turn",
      }),
    refusal: (value) => server.enqueue({ kind: "message", content: [text(value)], stop_reason: "refusal" }),
    cachedUsage: () =>
      server.enqueue({
        kind: "message",
        content: [text(ANSWER)],
        stop_reason: "end_turn",
        usage: usage({ cache_read_input_tokens: 900, cache_creation_input_tokens: 300 }),
      }),
    malformedUsage: (kind) =>
      server.enqueue({
        kind: "message",
        content: [text(ANSWER)],
        stop_reason: "end_turn",
        usage:
          kind === "negative cache read"
            ? usage({ cache_read_input_tokens: -40 })
            : kind === "cache read as text"
              ? usage({ cache_read_input_tokens: "900" })
              : usage({ cache_read_input_tokens: 20_000_000 }),
      }),
    streamed: () => server.requests.at(-1)?.body["stream"] === true,
    pending: () => server.pending(),
    close: () => server.close(),
  };
}

const WIRES = { openai: openAIWire, anthropic: anthropicWire } as const;
/** How each wire's refusal ends: OpenAI's `refusal` leaves no content; Anthropic stops with `refusal`. */
const REFUSAL_CODE = { openai: "model_empty_reply", anthropic: "model_unknown_finish_reason" } as const;

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe.each([
  ["openai", "plain"],
  ["openai", "streamed"],
  ["anthropic", "plain"],
  ["anthropic", "streamed"],
] as const)("the %s wire, %s (issue 42)", (name, mode) => {
  let wire: Wire;
  const plan = () => (mode === "plain" ? wire.planner().plan(input()) : planInsideGraph(wire.planner(), input()));
  beforeEach(async () => {
    wire = await WIRES[name]();
  });
  afterEach(async () => {
    expect(wire.pending()).toBe(0);
    await wire.close();
  });

  it("keeps parallel calls in order with their ids and the exact argument text, split across pieces", async () => {
    const first = '{"query": "dijkstra negative weights", "limit": 3}';
    const second = '{"note_id":"lecture-07"}';
    wire.calls([
      { id: "call_a", name: "search_notes", args: first },
      { id: "call_b", name: "read_note", args: second },
    ]);
    const { outcome } = await plan();
    expect(wire.streamed()).toBe(mode === "streamed");
    expect(outcome).toEqual({
      type: "tool_calls",
      calls: [
        { call_id: "call_a", name: "search_notes", raw_arguments: expect.any(String) },
        { call_id: "call_b", name: "read_note", raw_arguments: expect.any(String) },
      ],
    });
    if (outcome.type !== "tool_calls") throw new Error("expected tool calls");
    expect(JSON.parse(outcome.calls[0]?.raw_arguments ?? "")).toEqual({ query: "dijkstra negative weights", limit: 3 });
    expect(JSON.parse(outcome.calls[1]?.raw_arguments ?? "")).toEqual({ note_id: "lecture-07" });
  });

  // Anthropic sends tool input as text only when streaming (`input_json_delta`); a plain body carries parsed JSON.
  it.runIf(mode === "streamed" || name === "openai")(
    "keeps arguments cut off by a length stop as the raw text, which validation refuses",
    async () => {
      const cut = '{"query": "dijkstra", "limit": ';
      wire.calls([{ id: "call_cut", name: "search_notes", args: cut }], "cut");
      const { outcome } = await plan();
      if (outcome.type !== "tool_calls") throw new Error(`expected tool calls, got ${outcome.type}`);
      const raw = outcome.calls[0]?.raw_arguments ?? "";
      expect(raw).toBe(cut);
      expect(parseToolArguments(raw).ok).toBe(false);
    },
  );

  it("answers with the text only, never the reasoning next to it", async () => {
    wire.answerWithReasoning(ANSWER, '{"answer":"from the reasoning"}');
    expect((await plan()).outcome).toEqual({
      type: "final",
      answer: "non-negative weights",
      citations: [],
      abstained: false,
    });
  });

  it("refuses a refusal with a typed error, never as an answer", async () => {
    wire.refusal("I can't help with that.");
    const error = await rejection(plan());
    expect(isModelBehaviorError(error) && error.code).toBe(REFUSAL_CODE[name]);
  });

  it("reads usage with the wire's cache fields into the counts", async () => {
    wire.cachedUsage();
    const { usage } = await plan();
    expect(usage).toMatchObject({ input_tokens: 1_250, cached_input_tokens: 900 });
    expect(usage.cache_write_tokens).toBe(name === "anthropic" ? 300 : undefined);
  });

  it.each(["negative cache read", "cache read as text", "cache parts above the input"] as const)(
    "refuses usage with a %s as model_invalid_usage",
    async (kind) => {
      wire.malformedUsage(kind);
      const error = await rejection(plan());
      expect(isModelBehaviorError(error) && error.code).toBe("model_invalid_usage");
    },
  );
});

describe("OpenAI content_filter (issue 42)", () => {
  it("refuses a content_filter finish as model_unknown_finish_reason", async () => {
    const fake = await startFakeOpenAI();
    try {
      fake.enqueue({ kind: "completion", content: "", finish_reason: "content_filter" });
      const planner = createModelPlanner({
        model: "gpt-test",
        provider: "openai",
        baseUrl: fake.baseUrl,
        maxRetries: 0,
      });
      const error = await rejection(planner.plan(input()));
      expect(isModelBehaviorError(error) && error.code).toBe("model_unknown_finish_reason");
    } finally {
      await fake.close();
    }
  });
});
