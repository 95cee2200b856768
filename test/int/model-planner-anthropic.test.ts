/**
 * Issue 42, the Anthropic Messages wire: the model planner (`provider:
 * "anthropic"`, `ChatAnthropic`) against a scripted Anthropic endpoint
 * (support/fake-anthropic.ts), plain and streamed under LangGraph's
 * `messages` stream mode. Asserted on the request bodies: the
 * `cache_control` breakpoints (tools block, system message, last stable
 * message, the previous step's end; at most four) and how they move as the
 * transcript grows; the step's restriction as an appended user note. On the
 * replies: parallel tool calls, arguments split across `input_json_delta`
 * pieces and cut off by a `max_tokens` stop kept as the model's raw text,
 * thinking blocks ignored, a `refusal` stop refused, usage with cache reads
 * and writes parsed and priced, and malformed usage refused.
 */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isModelBehaviorError } from "../../src/errors.js";
import { createModelPlanner } from "../../src/planners/model.js";
import type { PlanResult, Planner, PlannerInput } from "../../src/planners/planner.js";
import type { ToolSpec } from "../../src/policy/contracts.js";
import { costOf } from "../../src/policy/pricing.js";
import { startFakeAnthropic, type FakeAnthropic, type ScriptedMessage } from "./support/fake-anthropic.js";

const SEARCH_TOOL: ToolSpec = {
  name: "search_notes",
  description: "Search lecture notes.",
  parameters: {
    type: "object",
    properties: { query: { type: "string" }, limit: { type: "integer" } },
    required: ["query"],
  },
};
const READ_TOOL: ToolSpec = {
  name: "read_note",
  description: "Read one note.",
  parameters: { type: "object", properties: { note_id: { type: "string" } }, required: ["note_id"] },
};
const REQUEST = "What does Dijkstra need?";
const EPHEMERAL = { type: "ephemeral" };

function plannerInput(overrides: Partial<PlannerInput> = {}): PlannerInput {
  return {
    request: REQUEST,
    messages: [new HumanMessage(REQUEST)],
    tools: [SEARCH_TOOL, READ_TOOL],
    evidence: [],
    turn: 1,
    ...overrides,
  };
}

async function planInsideGraph(planner: Planner, input: PlannerInput): Promise<PlanResult> {
  let result: PlanResult | undefined;
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("plan", async () => {
      result = await planner.plan(input);
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

const toolUse = (id: string, name: string, input: string) => ({ type: "tool_use" as const, id, name, input });
const reply = (content: ScriptedMessage["content"], stop_reason: string, extra: Partial<ScriptedMessage> = {}) => ({
  kind: "message" as const,
  content,
  stop_reason,
  ...extra,
});

type Block = Record<string, unknown>;
/** Every `cache_control` in a request body, by where it sits. */
function breakpoints(body: Record<string, unknown>): string[] {
  const found: string[] = [];
  (body["tools"] as Block[] | undefined)?.forEach((tool, index) => {
    if (tool["cache_control"]) found.push(`tools[${index}]`);
  });
  const system = body["system"];
  if (Array.isArray(system))
    (system as Block[]).forEach((block, index) => {
      if (block["cache_control"]) found.push(`system[${index}]`);
    });
  (body["messages"] as { content: unknown }[]).forEach((message, index) => {
    JSON.stringify(message.content, (key, value: unknown) => {
      if (key === "cache_control") found.push(`messages[${index}]`);
      return value;
    });
  });
  return found;
}

describe("model planner on the Anthropic Messages wire (issue 42)", () => {
  let server: FakeAnthropic;
  const planner = (options: Partial<Parameters<typeof createModelPlanner>[0]> = {}): Planner =>
    createModelPlanner({
      model: "claude-test",
      provider: "anthropic",
      baseUrl: server.baseUrl,
      apiKey: "sk-ant-test-0123456789",
      maxRetries: 0,
      ...options,
    });

  beforeEach(async () => {
    server = await startFakeAnthropic();
  });
  afterEach(async () => {
    expect(server.pending()).toBe(0);
    await server.close();
  });

  describe("cache_control breakpoints", () => {
    it("marks the tools block, the system message and the last stable message: three marks on the first step", async () => {
      server.enqueue(reply([toolUse("toolu_1", "search_notes", '{"query":"dijkstra"}')], "tool_use"));
      await planner().plan(plannerInput());
      const body = server.requests[0]?.body ?? {};
      expect(server.requests[0]?.path).toBe("/v1/messages");
      const tools = body["tools"] as Block[];
      expect(tools.map((tool) => tool["name"])).toEqual(["read_note", "search_notes"]);
      expect(tools[0]).not.toHaveProperty("cache_control");
      expect(tools[1]?.["cache_control"]).toEqual(EPHEMERAL);
      expect(tools[1]?.["input_schema"]).toEqual({
        properties: { limit: { type: "integer" }, query: { type: "string" } },
        required: ["query"],
        type: "object",
      });
      expect(breakpoints(body)).toEqual(["tools[1]", "system[0]", "messages[0]"]);
      expect(body["messages"]).toEqual([
        { role: "user", content: [{ type: "text", text: REQUEST, cache_control: EPHEMERAL }] },
      ]);
    });

    it("moves the transcript mark forward as it grows, keeps the previous step's end, never more than four", async () => {
      const grown = [
        new HumanMessage(REQUEST),
        new AIMessage({ content: "", tool_calls: [{ id: "a1", name: "search_notes", args: { query: "d" } }] }),
        new ToolMessage({ content: "result one", tool_call_id: "a1", name: "search_notes" }),
        new AIMessage({
          content: "",
          tool_calls: [
            { id: "a2", name: "read_note", args: { note_id: "n1" } },
            { id: "a3", name: "read_note", args: { note_id: "n2" } },
          ],
        }),
        new ToolMessage({ content: "result two", tool_call_id: "a2", name: "read_note" }),
        new ToolMessage({ content: "result three", tool_call_id: "a3", name: "read_note" }),
      ];
      for (let step = 0; step < 3; step += 1)
        server.enqueue(reply([{ type: "text", text: '{"answer":"x","citations":[],"abstained":false}' }], "end_turn"));
      await planner().plan(plannerInput({ messages: grown.slice(0, 1) }));
      await planner().plan(plannerInput({ messages: grown.slice(0, 3) }));
      await planner().plan(plannerInput({ messages: grown }));
      const [first, second, third] = server.requests.map((request) => request.body);
      // Wire messages: tool results of one turn are merged into one user message.
      expect(breakpoints(first ?? {})).toEqual(["tools[1]", "system[0]", "messages[0]"]);
      expect(breakpoints(second ?? {})).toEqual(["tools[1]", "system[0]", "messages[0]", "messages[2]"]);
      expect(breakpoints(third ?? {})).toEqual(["tools[1]", "system[0]", "messages[2]", "messages[4]"]);
      for (const body of [first, second, third]) expect(breakpoints(body ?? {}).length).toBeLessThanOrEqual(4);
      // The mark sits on the last block of the newest result.
      const lastMessage = ((third?.["messages"] ?? []) as { content: Block[] }[]).at(-1);
      expect(lastMessage?.content.at(-1)).toMatchObject({ type: "tool_result", tool_use_id: "call00003" });
      expect(JSON.stringify(lastMessage?.content.at(-1))).toContain('"cache_control"');
      expect(JSON.stringify(lastMessage?.content.at(0))).not.toContain('"cache_control"');
      // The tools block and the system message are the same bytes at every step.
      for (const body of [second, third]) {
        expect(JSON.stringify(body?.["tools"])).toBe(JSON.stringify(first?.["tools"]));
        expect(JSON.stringify(body?.["system"])).toBe(JSON.stringify(first?.["system"]));
      }
    });

    it("appends the step's restriction as an unmarked user note after the marked transcript", async () => {
      server.enqueue(reply([toolUse("toolu_1", "read_note", '{"note_id":"n1"}')], "tool_use"));
      await planner().plan(plannerInput({ tools: [READ_TOOL], candidates: [SEARCH_TOOL, READ_TOOL] }));
      const body = server.requests[0]?.body ?? {};
      expect(body).not.toHaveProperty("tool_choice");
      expect((body["tools"] as Block[]).map((tool) => tool["name"])).toEqual(["read_note", "search_notes"]);
      const messages = body["messages"] as { role: string; content: unknown }[];
      const last = messages.at(-1);
      expect(last?.role).toBe("user");
      expect(typeof last?.content === "string" ? last.content : JSON.stringify(last?.content)).toContain(
        JSON.stringify(["read_note"]),
      );
      expect(JSON.stringify(last?.content)).not.toContain("cache_control");
      expect(breakpoints(body)).toEqual(["tools[1]", "system[0]", "messages[0]"]);
    });

    it("sets no marks with caching automatic", async () => {
      server.enqueue(reply([{ type: "text", text: "plain" }], "end_turn"));
      await planner({ caching: "automatic" }).plan(plannerInput());
      expect(breakpoints(server.requests[0]?.body ?? {})).toEqual([]);
    });
  });

  describe("replies, plain and streamed", () => {
    for (const mode of ["plain", "streamed"] as const) {
      const plan = (p: Planner, input: PlannerInput) => (mode === "plain" ? p.plan(input) : planInsideGraph(p, input));

      it(`${mode}: keeps parallel tool calls in order with their ids and argument text`, async () => {
        server.enqueue(
          reply(
            [
              { type: "thinking", thinking: "I should search, then read.", signature: "sig" },
              { type: "text", text: "Looking." },
              toolUse("toolu_a", "search_notes", '{"query":"dijkstra negative weights","limit":3}'),
              toolUse("toolu_b", "read_note", '{"note_id":"lecture-07"}'),
            ],
            "tool_use",
            { pieceLength: 5 },
          ),
        );
        const result = await plan(planner(), plannerInput());
        expect(server.requests[0]?.body["stream"] === true).toBe(mode === "streamed");
        expect(result.outcome).toEqual({
          type: "tool_calls",
          text: "Looking.",
          calls: [
            { call_id: "toolu_a", name: "search_notes", raw_arguments: expect.any(String) },
            { call_id: "toolu_b", name: "read_note", raw_arguments: expect.any(String) },
          ],
        });
        if (result.outcome.type !== "tool_calls") throw new Error("expected tool calls");
        expect(JSON.parse(result.outcome.calls[0]?.raw_arguments ?? "")).toEqual({
          query: "dijkstra negative weights",
          limit: 3,
        });
        expect(JSON.parse(result.outcome.calls[1]?.raw_arguments ?? "")).toEqual({ note_id: "lecture-07" });
      });

      it(`${mode}: parses a final answer and ignores a thinking block`, async () => {
        server.enqueue(
          reply(
            [
              { type: "thinking", thinking: '{"answer":"from thinking"}', signature: "sig" },
              { type: "text", text: '{"answer":"non-negative weights","citations":["r1"],"abstained":false}' },
            ],
            "end_turn",
          ),
        );
        expect((await plan(planner(), plannerInput())).outcome).toEqual({
          type: "final",
          answer: "non-negative weights",
          citations: ["r1"],
          abstained: false,
        });
      });

      it(`${mode}: refuses a refusal stop as model_unknown_finish_reason`, async () => {
        server.enqueue(reply([{ type: "text", text: "I can't help with that." }], "refusal"));
        const error: unknown = await plan(planner(), plannerInput()).then(
          () => undefined,
          (rejection: unknown) => rejection,
        );
        expect(isModelBehaviorError(error) && error.code).toBe("model_unknown_finish_reason");
      });

      it(`${mode}: reads usage with cache reads and writes into the counts and the price`, async () => {
        server.enqueue(
          reply([{ type: "text", text: "a" }], "end_turn", {
            usage: {
              input_tokens: 50,
              output_tokens: 20,
              cache_read_input_tokens: 900,
              cache_creation_input_tokens: 300,
            },
          }),
        );
        const { usage } = await plan(planner(), plannerInput());
        expect(usage).toMatchObject({ input_tokens: 1250, cached_input_tokens: 900, cache_write_tokens: 300 });
        const price = {
          input_per_million_usd: 3,
          output_per_million_usd: 15,
          cached_input_per_million_usd: 0.3,
          cache_write_per_million_usd: 3.75,
        };
        expect(costOf({ ...usage, output_tokens: 20 }, price)).toBeCloseTo(
          (50 * 3 + 900 * 0.3 + 300 * 3.75 + 20 * 15) / 1_000_000,
          12,
        );
      });

      it.each([
        ["a negative cache read", { input_tokens: 50, output_tokens: 1, cache_read_input_tokens: -40 }],
        ["a cache write as text", { input_tokens: 50, output_tokens: 1, cache_creation_input_tokens: "900" }],
        ["input tokens as text", { input_tokens: "50", output_tokens: 1 }],
        ["a fractional cache read", { input_tokens: 50, output_tokens: 1, cache_read_input_tokens: 2.5 }],
        ["an absurd cache write", { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 20_000_000 }],
      ])(`${mode}: refuses %s as model_invalid_usage`, async (_label, usage) => {
        server.enqueue(reply([{ type: "text", text: "a" }], "end_turn", { usage }));
        const error: unknown = await plan(planner(), plannerInput()).then(
          () => undefined,
          (rejection: unknown) => rejection,
        );
        expect(isModelBehaviorError(error) && error.code).toBe("model_invalid_usage");
      });
    }

    it("streamed: keeps arguments cut off by a max_tokens stop as the raw text, not LangChain's repair", async () => {
      const truncated = '{"query": "dijkstra", "limit": ';
      server.enqueue(reply([toolUse("toolu_cut", "search_notes", truncated)], "max_tokens", { pieceLength: 3 }));
      const result = await planInsideGraph(planner(), plannerInput());
      expect(server.requests[0]?.body["stream"]).toBe(true);
      expect(result.outcome).toEqual({
        type: "tool_calls",
        calls: [{ call_id: "toolu_cut", name: "search_notes", raw_arguments: truncated }],
      });
    });

    it("sends the API key only as x-api-key and never echoes it in an error", async () => {
      server.enqueue({ kind: "failure", status: 500, message: "upstream broke on sk-ant-test-0123456789" });
      const error: unknown = await planner()
        .plan(plannerInput())
        .then(
          () => undefined,
          (rejection: unknown) => rejection,
        );
      expect(server.requests[0]?.apiKey).toBe("sk-ant-test-0123456789");
      expect(isModelBehaviorError(error) && error.code).toBe("model_request_failed");
      expect(String((error as Error).message)).not.toContain("sk-ant-test-0123456789");
    });
  });
});
