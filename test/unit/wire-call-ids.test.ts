/**
 * The ids the model planner sends for tool calls: the call's ordinal in the
 * thread, paired with its result, unchanged as the thread grows, and only in
 * the request (the transcript it was made from keeps the model's ids).
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { buildMessages } from "../../src/planners/model-prompt.js";
import { wireCallId, withWireCallIds } from "../../src/planners/wire-call-ids.js";

const call = (id: string, name = "read_note") =>
  new AIMessage({ content: "", tool_calls: [{ id, name, args: { note_id: id }, type: "tool_call" }] });
const result = (id: string, name = "read_note") =>
  new ToolMessage({ tool_call_id: id, name, content: `{"note_id":"${id}"}`, artifact: { note_id: id } });

const callIds = (messages: readonly BaseMessage[]) =>
  messages.flatMap((message) => (AIMessage.isInstance(message) ? (message.tool_calls ?? []).map((c) => c.id) : []));
const resultIds = (messages: readonly BaseMessage[]) =>
  messages.flatMap((message) => (ToolMessage.isInstance(message) ? [message.tool_call_id] : []));

describe("wireCallId", () => {
  it("is nine letters and digits, distinct per ordinal, also past 99,999", () => {
    expect(wireCallId(1)).toBe("call00001");
    expect(wireCallId(99_999)).toBe("call99999");
    expect(wireCallId(100_000)).toMatch(/^c[0-9a-z]{8}$/);
    const ids = [1, 2, 99_999, 100_000, 100_001, 5_000_000].map(wireCallId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9]{9}$/);
  });
});

describe("withWireCallIds", () => {
  const thread = [
    new HumanMessage("question"),
    call("call_7b1f0c2e-aaaa-bbbb-cccc-000000000001"),
    result("call_7b1f0c2e-aaaa-bbbb-cccc-000000000001"),
    call("call_7b1f0c2e-aaaa-bbbb-cccc-000000000002", "search_notes"),
    result("call_7b1f0c2e-aaaa-bbbb-cccc-000000000002", "search_notes"),
  ];

  it("numbers calls in order and pairs each result with its call; content, names and artifacts unchanged", () => {
    const wire = withWireCallIds(thread);
    expect(callIds(wire)).toEqual(["call00001", "call00002"]);
    expect(resultIds(wire)).toEqual(["call00001", "call00002"]);
    const tool = wire[4] as ToolMessage;
    expect(tool.content).toBe(thread[4]?.content);
    expect(tool.name).toBe("search_notes");
    expect(tool.artifact).toEqual({ note_id: "call_7b1f0c2e-aaaa-bbbb-cccc-000000000002" });
    expect((wire[3] as AIMessage).tool_calls?.[0]).toMatchObject({
      name: "search_notes",
      args: { note_id: "call_7b1f0c2e-aaaa-bbbb-cccc-000000000002" },
    });
    expect(wire[0]).toBe(thread[0]);
  });

  it("keeps every earlier id as the thread grows (the request stays append-only)", () => {
    const shorter = withWireCallIds(thread.slice(0, 3));
    const longer = withWireCallIds(thread);
    expect(callIds(longer).slice(0, callIds(shorter).length)).toEqual(callIds(shorter));
    expect(resultIds(longer).slice(0, resultIds(shorter).length)).toEqual(resultIds(shorter));
  });

  it("gives an id a planner reused in a later run its own number, each result paired with the newest call", () => {
    const wire = withWireCallIds([
      call("call_1"),
      result("call_1"),
      new HumanMessage("again"),
      call("call_1"),
      result("call_1"),
    ]);
    expect(callIds(wire)).toEqual(["call00001", "call00002"]);
    expect(resultIds(wire)).toEqual(["call00001", "call00002"]);
  });

  it("leaves the transcript it was given alone", () => {
    withWireCallIds(thread);
    expect(callIds(thread)[0]).toBe("call_7b1f0c2e-aaaa-bbbb-cccc-000000000001");
    expect(resultIds(thread)[1]).toBe("call_7b1f0c2e-aaaa-bbbb-cccc-000000000002");
  });

  it("is what the model planner sends", () => {
    const sent = buildMessages({
      request: "question",
      messages: thread,
      tools: [],
      evidence: [],
      turn: 3,
      context: {},
    });
    expect(sent[0]).toBeInstanceOf(SystemMessage);
    expect(callIds(sent)).toEqual(["call00001", "call00002"]);
    expect(resultIds(sent)).toEqual(["call00001", "call00002"]);
  });
});
