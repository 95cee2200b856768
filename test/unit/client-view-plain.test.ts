/**
 * `toClientJson`'s plain-data path (src/server/client-view.ts): plain data is
 * serialized without the replacer, and must come out as the replacer would
 * write it; anything a rule touches, at any depth, still takes the rules.
 */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { toClientItemJson, toClientJson } from "../../src/server/client-view.js";
import { NEVER_TO_CLIENT_KEYS } from "../../src/run-config.js";

/** A nest of `depth` objects around `inner`: `{ a: { a: … inner } }`. */
function nested(depth: number, inner: unknown): unknown {
  let value = inner;
  for (let level = 0; level < depth; level += 1) value = { a: value };
  return value;
}

describe("toClientJson on plain data", () => {
  it("writes what JSON.stringify writes", () => {
    const samples: unknown[] = [
      null,
      'text \u2028 "quoted"',
      -0,
      Number.NaN,
      [1, "two", null, true, { three: [3] }],
      { ledger: [{ call_id: "c1", attempt: 1, status: "succeeded", effect: null }], usage: { model_turns: 2 } },
      Object.assign(Object.create(null) as object, { bare: 1 }),
      nested(100, 1),
    ];
    for (const sample of samples) expect(toClientJson(sample)).toBe(JSON.stringify(sample));
  });

  it("still drops a host-owned key at any depth, a deep one included", () => {
    for (const key of NEVER_TO_CLIENT_KEYS) {
      for (const depth of [0, 5, 31, 32, 40]) {
        const json = toClientJson(nested(depth, { [key]: { user_id: "alice" }, kept: 1 }));
        expect(json).not.toContain(key);
        expect(json).toContain('"kept":1');
      }
    }
  });

  it("still shows a principal by identity and a configurable by its checkpoint keys", () => {
    const principal = { user_id: "alice", tenant: "uni", role: "student", scopes: ["notes:read"], grants: {} };
    expect(JSON.parse(toClientJson({ run: { principal } }))).toEqual({
      run: { principal: { user_id: "alice", tenant: "uni", role: "student" } },
    });
    const configurable = { thread_id: "t-1", warrant_run_id: "r-1" };
    expect(JSON.parse(toClientJson([{ configurable }]))).toEqual([{ configurable: { thread_id: "t-1" } }]);
  });

  it("still turns messages, errors, dates and toJSON objects as before", () => {
    const value = {
      list: [new AIMessage({ content: "hi", id: "m1" })],
      error: new TypeError("bad"),
      at: new Date(0),
      own: Object.defineProperty({ x: 1 }, "toJSON", { value: () => ({ y: 2 }), enumerable: false }),
    };
    const seen = JSON.parse(toClientJson(value)) as Record<string, unknown>;
    expect((seen.list as { type: string; content: string }[])[0]).toMatchObject({ type: "ai", content: "hi" });
    expect(seen.error).toEqual({ error: "TypeError", message: "bad" });
    expect(seen.at).toBe("1970-01-01T00:00:00.000Z");
    expect(seen.own).toEqual({ y: 2 });
  });

  it("leaves out undefined fields and writes null for undefined items, as before", () => {
    expect(toClientJson({ a: undefined, b: [undefined, 1] })).toBe('{"b":[null,1]}');
    // A hole in an array is null.
    const holed: number[] = [1];
    holed[2] = 3;
    expect(toClientJson(holed)).toBe("[1,null,3]");
  });

  it("writes a message alone or as an item as the replacer writes it inside an array", () => {
    const messages = [
      new HumanMessage({ content: "What do my notes say?", id: "h1" }),
      new AIMessage({
        content: "",
        id: "a1",
        tool_calls: [{ id: "call_1", name: "notes_search", args: { query: "attention", limit: 3 } }],
        usage_metadata: { input_tokens: 10, output_tokens: 2, total_tokens: 12 },
      }),
      new ToolMessage({ content: "3 notes", tool_call_id: "call_1", id: "t1" }),
      new AIMessage({ content: [{ type: "text", text: "From your notes" }], id: "a2", name: undefined }),
    ];
    for (const message of messages) {
      // In an array the message goes through the replacer: that is the reference text.
      const reference = toClientJson([message]).slice(1, -1);
      expect(toClientJson(message)).toBe(reference);
      expect(toClientItemJson(message)).toBe(reference);
      expect(JSON.parse(reference)).toMatchObject({ id: message.id, type: message.getType() });
    }
    expect(toClientItemJson(undefined)).toBe("null");
  });
});
