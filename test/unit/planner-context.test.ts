/**
 * The planner's view of a long thread (src/planners/context.ts, issue 23):
 * the request never leaves it, old tool results are compacted at a boundary
 * once per crossing of the budget, so successive views share one prefix
 * between compactions, and compaction never changes what can be named (call
 * ids, evidence refs) nor the messages in state.
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { plannerView } from "../../src/planners/context.js";
import { readFencedToolResult } from "../../src/planners/fence.js";

const REQUEST = "Compare self-attention with cross-attention using my notes";

function note(step: number) {
  return {
    note_id: `cs301.note-${step}`,
    source_id: `cs301/lecture-${step}`,
    title: `Note ${step}`,
    text: `Body of note ${step}. `.repeat(30),
    version: 1,
  };
}

/** A thread of `steps` read_note steps after the request. */
function thread(steps: number): BaseMessage[] {
  const messages: BaseMessage[] = [new HumanMessage(REQUEST)];
  for (let step = 1; step <= steps; step += 1) {
    const id = `call_${step}`;
    messages.push(
      new AIMessage({ content: "", tool_calls: [{ id, name: "read_note", args: { note_id: `cs301.note-${step}` } }] }),
    );
    const body = note(step);
    messages.push(
      new ToolMessage({ tool_call_id: id, name: "read_note", content: JSON.stringify(body), artifact: body }),
    );
  }
  return messages;
}

const contents = (messages: readonly BaseMessage[]) => messages.map((message) => String(message.content));
const refsOf = (messages: readonly BaseMessage[]) =>
  messages
    .filter((message) => ToolMessage.isInstance(message))
    .flatMap((message) => readFencedToolResult(String(message.content))?.refs ?? []);

describe("the planner's context over a long run", () => {
  it("keeps the request and every message of a 40-step run (no sliding window)", () => {
    const messages = thread(40);
    const view = plannerView(messages);
    expect(view.messages).toHaveLength(messages.length);
    expect(view.messages[0]?.content).toBe(REQUEST);
    expect(view.compactions).toBe(0);
  });

  it("compacts old results once per crossing, keeping one stable prefix between compactions", () => {
    const budget = 2_000;
    const messages = thread(40);
    let previous: string[] = [];
    let previousCompactions = 0;
    let compactionsSeen = 0;
    for (let steps = 1; steps <= 40; steps += 1) {
      const view = plannerView(messages.slice(0, 1 + 2 * steps), { budgetTokens: budget });
      const shown = contents(view.messages);
      // The request is always the first message, whole.
      expect(shown[0]).toBe(REQUEST);
      expect(view.compactions).toBeGreaterThanOrEqual(previousCompactions);
      if (view.compactions === previousCompactions) {
        // No crossing: this view starts with the whole previous one (append-only).
        expect(shown.slice(0, previous.length)).toEqual(previous);
      } else compactionsSeen += 1;
      // The newest results are always whole.
      expect(readFencedToolResult(shown.at(-1) ?? "")?.compacted).toBeUndefined();
      previous = shown;
      previousCompactions = view.compactions;
    }
    expect(compactionsSeen).toBeGreaterThan(1);
    expect(compactionsSeen).toBe(previousCompactions);
  });

  it("names the same call ids and evidence refs compacted as whole, and leaves state untouched", () => {
    const messages = thread(30);
    const before = contents(messages);
    const whole = plannerView(messages);
    const compacted = plannerView(messages, { budgetTokens: 1_500 });
    expect(compacted.compactedResults).toBeGreaterThan(20);
    expect(refsOf(compacted.messages)).toEqual(refsOf(whole.messages));
    expect(refsOf(whole.messages)).toHaveLength(30);
    const callIds = (view: typeof whole) =>
      view.messages.filter((message) => ToolMessage.isInstance(message)).map((message) => message.tool_call_id);
    expect(callIds(compacted)).toEqual(callIds(whole));
    // A compacted result is still one fence with its refs, marked, and much shorter.
    const first = readFencedToolResult(String(compacted.messages[2]?.content));
    expect(first).toMatchObject({ tool: "read_note", refs: ["cs301.note-1@1"], compacted: true });
    expect(String(compacted.messages[2]?.content).length).toBeLessThan(String(whole.messages[2]?.content).length / 2);
    expect(contents(messages)).toEqual(before);
  });
});
