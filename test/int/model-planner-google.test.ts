/**
 * Issue 42, the Gemini API wire: the model planner (`provider:
 * "google-genai"`, `ChatGoogleGenerativeAI`) against a scripted Gemini
 * endpoint (support/fake-gemini.ts) over HTTP. Asserted on the request
 * bodies: the run's whole tools block as function declarations at every
 * step, the step's restriction as `toolConfig.functionCallingConfig`
 * (`VALIDATED` with `allowedFunctionNames`, `NONE` when nothing is offered),
 * no restriction when the step offers the whole block. On the replies:
 * parallel function calls, reasoning (thought parts) kept out of the
 * answer, a `SAFETY` stop refused, usage with `cachedContentTokenCount` read
 * as cached input, malformed usage refused; `WARRANT_MODEL=google-genai:…`
 * builds this planner with its key and base URL.
 */
import { HumanMessage } from "@langchain/core/messages";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { plannerFor } from "../../src/bootstrap.js";
import { loadSettings } from "../../src/env.js";
import { isModelBehaviorError } from "../../src/errors.js";
import { createModelPlanner } from "../../src/planners/model.js";
import type { Planner, PlannerInput } from "../../src/planners/planner.js";
import type { ToolSpec } from "../../src/policy/contracts.js";
import { startFakeGemini, type FakeGemini } from "./support/fake-gemini.js";

const SEARCH: ToolSpec = {
  name: "search_notes",
  description: "Search lecture notes.",
  parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
};
const READ: ToolSpec = {
  name: "read_note",
  description: "Read one note.",
  parameters: { type: "object", properties: { note_id: { type: "string" } }, required: ["note_id"] },
};
const REQUEST = "What does Dijkstra need?";
const ANSWER = '{"answer":"non-negative weights","citations":[],"abstained":false}';

const input = (tools: ToolSpec[] = [SEARCH, READ]): PlannerInput => ({
  request: REQUEST,
  messages: [new HumanMessage(REQUEST)],
  tools,
  candidates: [SEARCH, READ],
  evidence: [],
  turn: 1,
});

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

const declared = (body: Record<string, unknown> | undefined) =>
  ((body?.["tools"] as { functionDeclarations?: { name: string }[] }[] | undefined) ?? []).flatMap((tool) =>
    (tool.functionDeclarations ?? []).map((declaration) => declaration.name),
  );

describe("model planner on the Gemini API wire (issue 42)", () => {
  let server: FakeGemini;
  const planner = (): Planner =>
    createModelPlanner({
      model: "gemini-test",
      provider: "google-genai",
      baseUrl: server.baseUrl,
      apiKey: "gemini-key-0123",
      maxRetries: 0,
    });
  beforeEach(async () => {
    server = await startFakeGemini();
  });
  afterEach(async () => {
    expect(server.pending()).toBe(0);
    await server.close();
  });

  it("declares the whole block and restricts the step with allowedFunctionNames, or with NONE", async () => {
    for (let index = 0; index < 3; index += 1) server.enqueue({ parts: [{ text: ANSWER }], finishReason: "STOP" });
    await planner().plan(input([SEARCH, READ]));
    await planner().plan(input([READ]));
    await planner().plan(input([]));
    const [whole, restricted, none] = server.requests.map((request) => request.body);
    expect(server.requests[0]?.path).toBe("/v1beta/models/gemini-test:generateContent");
    expect(server.requests[0]?.apiKey).toBe("gemini-key-0123");
    for (const body of [whole, restricted, none]) expect(declared(body)).toEqual(["read_note", "search_notes"]);
    expect(whole).not.toHaveProperty("toolConfig");
    expect(restricted?.["toolConfig"]).toEqual({
      functionCallingConfig: { mode: "VALIDATED", allowedFunctionNames: ["read_note"] },
    });
    expect(none?.["toolConfig"]).toEqual({ functionCallingConfig: { mode: "NONE" } });
    // The restriction is in the config, not an appended note.
    expect(JSON.stringify(restricted?.["contents"])).not.toContain("Tools you may call");
  });

  it("maps parallel function calls in order, each with its own id and its arguments as JSON", async () => {
    server.enqueue({
      parts: [
        { functionCall: { name: "search_notes", args: { query: "dijkstra" } } },
        { functionCall: { name: "read_note", args: { note_id: "lecture-07" } } },
      ],
      finishReason: "STOP",
    });
    const { outcome } = await planner().plan(input());
    if (outcome.type !== "tool_calls") throw new Error(`expected tool calls, got ${outcome.type}`);
    expect(outcome.calls.map((call) => call.name)).toEqual(["search_notes", "read_note"]);
    expect(new Set(outcome.calls.map((call) => call.call_id)).size).toBe(2);
    expect(outcome.calls.map((call) => JSON.parse(call.raw_arguments))).toEqual([
      { query: "dijkstra" },
      { note_id: "lecture-07" },
    ]);
  });

  it("answers with the text only, never a thought part", async () => {
    server.enqueue({
      parts: [{ text: '{"answer":"from the thought"}', thought: true }, { text: ANSWER }],
      finishReason: "STOP",
    });
    expect((await planner().plan(input())).outcome).toEqual({
      type: "final",
      answer: "non-negative weights",
      citations: [],
      abstained: false,
    });
  });

  it("refuses a SAFETY stop as model_unknown_finish_reason", async () => {
    server.enqueue({ parts: [{ text: "I can't help with that." }], finishReason: "SAFETY" });
    const error = await rejection(planner().plan(input()));
    expect(isModelBehaviorError(error) && error.code).toBe("model_unknown_finish_reason");
  });

  it("reads cachedContentTokenCount as cached input", async () => {
    server.enqueue({
      parts: [{ text: ANSWER }],
      finishReason: "STOP",
      usageMetadata: {
        promptTokenCount: 1_250,
        candidatesTokenCount: 5,
        totalTokenCount: 1_255,
        cachedContentTokenCount: 900,
      },
    });
    const { usage } = await planner().plan(input());
    expect(usage).toMatchObject({ input_tokens: 1_250, output_tokens: 5, cached_input_tokens: 900 });
  });

  it.each([
    ["a negative prompt count", { promptTokenCount: -5, candidatesTokenCount: 5 }],
    [
      "a cached count above the prompt",
      { promptTokenCount: 10, candidatesTokenCount: 5, cachedContentTokenCount: 900 },
    ],
    ["a prompt count as text", { promptTokenCount: "10", candidatesTokenCount: 5 }],
  ])("refuses %s as model_invalid_usage", async (_label, usageMetadata) => {
    server.enqueue({ parts: [{ text: ANSWER }], finishReason: "STOP", usageMetadata });
    const error = await rejection(planner().plan(input()));
    expect(isModelBehaviorError(error) && error.code).toBe("model_invalid_usage");
  });

  it("builds this planner from WARRANT_MODEL=google-genai:… with GOOGLE_API_KEY and GOOGLE_GENAI_BASE_URL", async () => {
    const settings = loadSettings({
      WARRANT_MODEL: "google-genai:gemini-test",
      GOOGLE_API_KEY: "gemini-key-0123",
      GOOGLE_GENAI_BASE_URL: server.baseUrl,
    });
    server.enqueue({ parts: [{ text: ANSWER }], finishReason: "STOP" });
    const { outcome } = await plannerFor(settings).plan(input());
    expect(outcome.type).toBe("final");
    expect(server.requests[0]?.apiKey).toBe("gemini-key-0123");
  });
});
