/**
 * What the plan node keeps of a planner's reply (planners/sanitize): names
 * and ids that cannot be stored are replaced and refused, prose is made
 * storable, and only arguments the strict parser accepts are recorded parsed.
 */
import { AIMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { MAX_ARGUMENT_BYTES } from "../../src/policy/arguments.js";
import type { Proposal } from "../../src/policy/contracts.js";
import { INVALID_TOOL_NAME, sanitizeOutcome, sanitizeProposals, toolCallMessage } from "../../src/planners/sanitize.js";
import { isSafeKey } from "../../src/policy/safe-text.js";

const FRESH_ID = /^call_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function call(call_id: string, name = "search_notes", raw_arguments = '{"query":"x"}'): Proposal {
  return { call_id, name, raw_arguments };
}

describe("sanitizeProposals", () => {
  it("keeps good, unique ids and names as they are", () => {
    expect(sanitizeProposals([call("call_1"), call("call_2", "read_note")], [])).toEqual([
      call("call_1"),
      call("call_2", "read_note"),
    ]);
  });

  it("replaces a repeated, empty or overlong id with a fresh one and lets the call go on", () => {
    const earlier = new AIMessage({
      content: "",
      tool_calls: [{ id: "call_old", name: "search_notes", args: {}, type: "tool_call" }],
    });
    const [reused, twice, empty, long] = sanitizeProposals(
      [call("call_old"), call("call_a"), call(""), call("x".repeat(129))],
      [earlier],
    );
    const second = sanitizeProposals([call("call_a"), call("call_a")], [])[1];
    for (const proposal of [reused, empty, long, second]) {
      expect(proposal?.call_id).toMatch(FRESH_ID);
      expect(proposal?.refusal).toBeUndefined();
    }
    expect(twice?.call_id).toBe("call_a");
  });

  it.each([
    ["NUL", "call\u0000x"],
    ["a lone surrogate", "call_\ud800"],
    ["a newline", "call_1\nINFO forged log line"],
    ["a bidi override", "call_\u202e1"],
    ["a zero-width space", "call_\u200b1"],
  ])("replaces an id with %s and refuses the proposal, never keeping the raw id", (_label, badId) => {
    const [proposal] = sanitizeProposals([call(badId)], []);
    expect(proposal?.call_id).toMatch(FRESH_ID);
    expect(proposal?.name).toBe("search_notes");
    expect(proposal?.refusal?.code).toBe("invalid_arguments");
    expect(proposal?.refusal?.message).toContain(proposal?.call_id);
    expect(JSON.stringify(proposal)).not.toContain(JSON.stringify(badId).slice(1, -1));
    expect(isSafeKey(proposal?.refusal?.message ?? "")).toBe(true);
  });

  it.each([
    ["NUL", "search\u0000notes"],
    ["a lone surrogate", "search_\udc00"],
    ["a bidi override", "search_notes\u202e"],
    ["a zero-width joiner", "search\u200d_notes"],
    ["201 characters", "s".repeat(201)],
  ])("replaces a name with %s by a placeholder and refuses it as unknown_tool", (_label, badName) => {
    const [proposal] = sanitizeProposals([call("call_ok", badName)], []);
    expect(proposal).toMatchObject({ call_id: "call_ok", name: INVALID_TOOL_NAME, refusal: { code: "unknown_tool" } });
    expect(JSON.stringify(proposal)).not.toContain(JSON.stringify(badName).slice(1, -1));
  });

  it("drops argument text longer than the parser would ever accept", () => {
    const [proposal] = sanitizeProposals(
      [call("call_big", "search_notes", `{"query":"${"x".repeat(MAX_ARGUMENT_BYTES)}"}`)],
      [],
    );
    expect(proposal).toMatchObject({ raw_arguments: "", refusal: { code: "invalid_arguments" } });
  });

  it("ignores a refusal the planner set itself", () => {
    const [proposal] = sanitizeProposals([{ ...call("call_1"), refusal: { code: "unknown_tool", message: "x" } }], []);
    expect(proposal).toEqual(call("call_1"));
  });
});

describe("toolCallMessage", () => {
  it("records parsed arguments only when the strict parser accepts them", () => {
    const deep = `{"query": ${"[".repeat(64)}${"]".repeat(64)}}`;
    const message = toolCallMessage({
      type: "tool_calls",
      calls: [
        call("call_1"),
        call("call_2", "search_notes", deep),
        call("call_3", "search_notes", String.raw`{"query":"a\u0000"}`),
      ],
    });
    expect(message.tool_calls?.map((toolCall) => [toolCall.id, toolCall.args])).toEqual([
      ["call_1", { query: "x" }],
      ["call_2", {}],
      ["call_3", {}],
    ]);
  });

  it("records no arguments for a refused proposal", () => {
    const [refused] = sanitizeProposals([call("call\u0000", "search_notes")], []);
    const message = toolCallMessage({ type: "tool_calls", calls: [refused!] });
    expect(message.tool_calls?.[0]?.args).toEqual({});
    expect(message.tool_calls?.[0]?.id).toBe(refused?.call_id);
  });
});

describe("sanitizeOutcome", () => {
  it("makes prose storable and leaves clean prose alone", () => {
    expect(
      sanitizeOutcome({ type: "final", answer: "a\u0000b\ud800", citations: ["ref\u0000"], abstained: false }),
    ).toEqual({
      type: "final",
      answer: "a\ufffdb\ufffd",
      citations: ["ref\ufffd"],
      abstained: false,
    });
    expect(sanitizeOutcome({ type: "needs_human", reason: "ask\u0007 someone" })).toEqual({
      type: "needs_human",
      reason: "ask\ufffd someone",
    });
    const clean = { type: "tool_calls" as const, calls: [call("call_1")], text: "line\nnext" };
    expect(sanitizeOutcome(clean)).toEqual(clean);
  });
});
