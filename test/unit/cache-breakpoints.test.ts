/**
 * Anthropic `cache_control` breakpoints (src/planners/cache-breakpoints.ts),
 * pure: where the marks go, that they never exceed four, that the inputs are
 * not edited, and the empty cases.
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { MAX_CACHE_BREAKPOINTS, markedMessages, markedTools } from "../../src/planners/cache-breakpoints.js";

const marked = (message: BaseMessage | undefined) => JSON.stringify(message?.content).includes("cache_control");
const marks = (messages: BaseMessage[]) => messages.flatMap((message, index) => (marked(message) ? [index] : []));
const call = (id: string) => new AIMessage({ content: "", tool_calls: [{ id, name: "t", args: {} }] });
const result = (id: string) => new ToolMessage({ content: `r ${id}`, tool_call_id: id });

describe("cache breakpoints", () => {
  it("marks only the last tool, and nothing in an empty block", () => {
    const tools = [1, 2, 3].map((n) => ({ name: `t${n}`, description: "d", input_schema: {} }));
    expect(markedTools(tools).map((tool) => tool.cache_control)).toEqual([undefined, undefined, { type: "ephemeral" }]);
    expect(tools.some((tool) => "cache_control" in tool)).toBe(false);
    expect(markedTools([])).toEqual([]);
  });

  it("marks the system message, the last stable message and the previous step's end; never the appended note", () => {
    const messages = [
      new SystemMessage("rules"),
      new HumanMessage("q"),
      call("a"),
      result("a"),
      call("b"),
      result("b"),
      new HumanMessage("note"),
    ];
    const out = markedMessages(messages, 6, true);
    expect(marks(out)).toEqual([0, 3, 5]);
    expect(marks(messages)).toEqual([]);
    expect(ToolMessage.isInstance(out[5]) && out[5].tool_call_id).toBe("b");
  });

  it("keeps within four marks with or without the tools mark", () => {
    const messages = [new SystemMessage("s"), new HumanMessage("q"), call("a"), result("a"), call("b"), result("b")];
    expect(marks(markedMessages(messages, 6, true)).length + 1).toBeLessThanOrEqual(MAX_CACHE_BREAKPOINTS);
    expect(marks(markedMessages(messages, 6, false)).length).toBeLessThanOrEqual(MAX_CACHE_BREAKPOINTS);
  });

  it("skips an assistant message at the end and handles empty and system-only input", () => {
    expect(markedMessages([], 0, true)).toEqual([]);
    expect(marks(markedMessages([new SystemMessage("s")], 1, true))).toEqual([0]);
    expect(marks(markedMessages([new SystemMessage("s"), new HumanMessage("q"), call("a")], 3, true))).toEqual([0, 1]);
  });
});
