import { describe, expect, it } from "vitest";
import { runMetadataOf } from "../../src/server/checkpoint-metadata.js";
import { valuesFilter } from "../../src/server/requests.js";
import { parseBody } from "../../src/server/request-fields.js";
import {
  refuseUnsupported,
  RunCreate,
  streamModes,
  toGraphInput,
  toolPlaceholders,
} from "../../src/server/runs/requests.js";
import { assistantSchemas } from "../../src/server/schemas.js";
import { AgentState } from "../../src/state.js";

const codeOf = (run: () => unknown): string => {
  try {
    run();
    return "ok";
  } catch (error) {
    return (error as { code: string }).code;
  }
};

const human = { id: "m1", type: "human", content: [{ type: "text", text: "What is BM25?" }] };
const resume = { resume: { decisions: [{ type: "approve" }] } };

describe("run requests", () => {
  it("treats an empty input ({} or null) beside a command as absent, and only there", () => {
    expect(parseBody(RunCreate, { assistant_id: "agent", input: {}, command: resume }).input).toBeUndefined();
    expect(parseBody(RunCreate, { assistant_id: "agent", input: null, command: resume }).input).toBeUndefined();
    expect(codeOf(() => parseBody(RunCreate, { assistant_id: "agent", input: {} }))).toBe("invalid_request");
    // A real input beside a command stays, and the route refuses the pair.
    expect(
      parseBody(RunCreate, { assistant_id: "agent", input: { messages: [human] }, command: resume }).input,
    ).toBeDefined();
  });

  it("takes agent-chat-ui's tool placeholders before the one user message, and builds only the user message", () => {
    const placeholder = {
      type: "tool",
      tool_call_id: "call_1",
      id: "do-not-render-1",
      name: "read_note",
      content: "Successfully handled tool call.",
    };
    const request = parseBody(RunCreate, { assistant_id: "agent", input: { messages: [placeholder, human] } });
    expect(toolPlaceholders(request.input!)).toEqual([{ tool_call_id: "call_1", name: "read_note" }]);
    const graphInput = toGraphInput(request.input!);
    expect(graphInput.messages).toHaveLength(1);
    expect(graphInput.messages[0]!.content).toBe("What is BM25?");
    for (const messages of [
      [human, placeholder],
      [placeholder],
      [human, human],
      [{ ...placeholder, artifact: {} }, human],
      [{ ...placeholder, type: "ai" }, human],
    ]) {
      expect(codeOf(() => parseBody(RunCreate, { assistant_id: "agent", input: { messages } }))).toBe(
        "invalid_request",
      );
    }
  });

  it("refuses each option it does not honour by name, and accepts what it does anyway", () => {
    const base = { assistant_id: "agent", input: { messages: [human] } };
    const refused = [
      { feedback_keys: ["a"] },
      { langsmith_tracer: { project_name: "p" } },
      { durability: "exit" },
      { checkpoint_during: false },
      { strict_resume: false },
    ];
    for (const extra of refused)
      expect({
        extra,
        code: codeOf(() => refuseUnsupported(parseBody(RunCreate, { ...base, ...extra }), "stream")),
      }).toEqual({ extra, code: "unsupported" });
    const accepted = [
      { after_seconds: 0 },
      { after_seconds: 1 },
      { stream_mode: ["values", "events"] },
      { durability: "sync" },
      { checkpoint_during: true },
      { strict_resume: true },
      { feedback_keys: [] },
      { stream_mode: ["values", "debug"] },
      { on_disconnect: "cancel" },
      // Checked against the allowlist when the run starts (webhooks/run-webhook.ts), not here.
      { webhook: "http://x" },
    ];
    for (const extra of accepted)
      expect({
        extra,
        code: codeOf(() => refuseUnsupported(parseBody(RunCreate, { ...base, ...extra }), "stream")),
      }).toEqual({ extra, code: "ok" });
    expect(
      codeOf(() => refuseUnsupported(parseBody(RunCreate, { ...base, on_disconnect: "cancel" }), "background")),
    ).toBe("unsupported");
    expect(streamModes(["values", "debug", "debug"])).toEqual(["values", "debug"]);
  });

  it("filters thread values only on the keys kept beside the thread row", () => {
    expect(valuesFilter({ status: "completed" })).toEqual({ status: "completed" });
    expect(valuesFilter({})).toBeUndefined();
    expect(valuesFilter(null)).toBeUndefined();
    expect(codeOf(() => valuesFilter({ messages: [] }))).toBe("unsupported");
    expect(codeOf(() => valuesFilter({ constructor: 1 }))).toBe("unsupported");
  });
});

describe("schemas", () => {
  it("types every state field (type, enum or anyOf), not descriptions only", () => {
    const properties = (
      assistantSchemas("agent").state_schema as { properties: Record<string, Record<string, unknown>> }
    ).properties;
    expect(Object.keys(properties).sort()).toEqual(Object.keys(AgentState.spec).sort());
    for (const [field, schema] of Object.entries(properties))
      expect({ field, typed: "type" in schema || "enum" in schema || "anyOf" in schema }).toEqual({
        field,
        typed: true,
      });
  });
});

describe("checkpoint metadata", () => {
  it("keeps the run's metadata and drops tracing keys and the checkpoint's own", () => {
    expect(
      runMetadataOf({
        metadata: {
          run_id: "r",
          assistant_id: "agent",
          topic: "x",
          ls_integration: "langgraph",
          langgraph_node: "plan",
          __pregel: 1,
          step: 9,
          source: "x",
          thread_id: "t",
        },
      }),
    ).toEqual({
      run_id: "r",
      assistant_id: "agent",
      topic: "x",
    });
    expect(runMetadataOf(undefined)).toEqual({});
  });
});
