/**
 * src/server/runs/values-encoder.ts: each snapshot's JSON is exactly what `toClientJson` writes, and each delta,
 * patched onto the previous snapshot as a reader of the stored events does, gives that exact text again; unchanged
 * fields and list items are not serialized again.
 */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it, vi } from "vitest";
import * as clientView from "../../src/server/client-view.js";
import { type Delta, patch } from "../../src/server/runs/event-delta.js";
import { ValuesEncoder } from "../../src/server/runs/values-encoder.js";

/** Encodes `snapshots` in order, replaying each delta as the stored-event reader does; returns the deltas. */
function replay(snapshots: unknown[]): (string | null)[] {
  const encoder = new ValuesEncoder();
  let stored: unknown;
  return snapshots.map((snapshot) => {
    const { json, delta } = encoder.encode(snapshot);
    expect(json).toBe(clientView.toClientJson(snapshot));
    stored = delta === null ? JSON.parse(json) : patch(stored, JSON.parse(delta) as Delta);
    expect(JSON.stringify(stored)).toBe(json);
    return delta;
  });
}

const principal = { user_id: "alice", tenant: "acme", role: "member", scopes: ["notes:read"], grants: ["x"] };

describe("ValuesEncoder", () => {
  it("writes what toClientJson writes and deltas that rebuild it, through every kind of change", () => {
    const first = new HumanMessage({ content: "plan my week", id: "m1" });
    const second = new AIMessage({ content: "", id: "m2", tool_calls: [{ id: "c1", name: "search", args: { q: 1 } }] });
    const third = new ToolMessage({ content: "found", id: "m3", tool_call_id: "c1" });
    const ledger = [{ call_id: "c1", status: "intent" }];
    const run = { principal, configurable: { thread_id: "t", langgraph_auth_user: { id: "alice" }, run_id: "r" } };
    const deltas = replay([
      { messages: [first], ledger: [], run, status: "planning" },
      { messages: [first, second], ledger, run, status: "authorizing" },
      { messages: [first, second], ledger: [{ ...ledger[0], status: "succeeded" }], run, status: "observing" },
      { messages: [first, second, third], ledger, run, status: "observing", extra: { note: '\u2028 "x"' } },
      { status: "done", messages: [first, second, third], ledger, run },
      { messages: [first, second, third], ledger, run },
      new AIMessage({ content: "not a state", id: "m9" }),
      { messages: [third], ledger: null, run, langgraph_auth_user: { id: "alice" } },
      { messages: [third], ledger: null, run, langgraph_auth_user: { id: "bob" }, shown: [1, [2, 3]] },
      { messages: [], ledger: undefined, run, shown: [1, [2, 4]], __proto__x: 1 },
    ]);
    expect(deltas[0]).toBeNull();
    expect(deltas[4]).toBeNull();
    expect(deltas[7]).toBeNull();
    expect(deltas.filter((delta) => delta !== null)).toHaveLength(6);
  });

  it("names only the new items of a grown list and nothing of an unchanged field", () => {
    const transcript = Array.from({ length: 30 }, (_unused, index) => ({ id: `m${index}`, content: "x".repeat(100) }));
    const ledger = [{ call_id: "c1" }];
    const encoder = new ValuesEncoder();
    encoder.encode({ messages: transcript, ledger });
    const { delta } = encoder.encode({ messages: [...transcript, { id: "m30", content: "new" }], ledger });
    expect(JSON.parse(delta ?? "null")).toEqual({
      o: { messages: { l: 31, i: { "30": { "=": { id: "m30", content: "new" } } } } },
    });
    expect(encoder.encode({ messages: [...transcript, { id: "m30", content: "new" }], ledger }).delta).toBe('{"o":{}}');
  });

  it("serializes a field again only when it is another object", () => {
    const big = { rows: Array.from({ length: 50 }, (_unused, index) => ({ index })) };
    const encoder = new ValuesEncoder();
    const spy = vi.spyOn(clientView, "toClientFieldJson");
    try {
      encoder.encode({ big, status: "a" });
      encoder.encode({ big, status: "b" });
      encoder.encode({ big, status: "c" });
      expect(spy.mock.calls.filter(([key]) => key === "big")).toHaveLength(1);
      expect(spy.mock.calls.filter(([key]) => key === "status")).toHaveLength(3);
    } finally {
      spy.mockRestore();
    }
  });
});
