import { describe, expect, it } from "vitest";
import { diff, patch } from "../../src/server/runs/event-delta.js";

/** patch(previous, diff(previous, next)) must give back next's exact JSON text. */
function roundTrip(previous: unknown, next: unknown): string {
  const delta = JSON.parse(JSON.stringify(diff(previous, next))) as ReturnType<typeof diff>;
  return JSON.stringify(patch(previous, delta));
}

describe("event deltas", () => {
  it("stores a grown transcript as the new messages only", () => {
    const transcript = Array.from({ length: 40 }, (_unused, index) => ({
      type: "ai",
      id: `m${index}`,
      content: "x".repeat(200),
    }));
    const previous = { messages: transcript, status: "planning", ledger: [] };
    const next = {
      messages: [...transcript, { type: "tool", id: "t1", content: "result" }],
      status: "observing",
      ledger: [{ call_id: "c1" }],
    };
    const delta = JSON.stringify(diff(previous, next));
    expect(delta.length).toBeLessThan(200);
    expect(roundTrip(previous, next)).toBe(JSON.stringify(next));
  });

  it("stores a growing partial message as the characters added", () => {
    const previous = [{ type: "AIMessageChunk", id: "c1", content: "Self-attention relates", tool_call_chunks: [] }];
    const next = [
      { type: "AIMessageChunk", id: "c1", content: "Self-attention relates positions", tool_call_chunks: [] },
    ];
    expect(diff(previous, next)).toEqual({ l: 1, i: { "0": { o: { content: { s: " positions" } } } } });
    expect(roundTrip(previous, next)).toBe(JSON.stringify(next));
  });

  it("rebuilds removed keys, changed key order, shrunk arrays, type changes and equal values exactly", () => {
    const cases: [unknown, unknown][] = [
      [
        { a: 1, b: 2, c: 3 },
        { a: 1, c: 4 },
      ],
      [
        { a: 1, b: 2 },
        { b: 2, a: 1 },
      ],
      [[1, 2, 3], [1]],
      [{ a: [1] }, { a: "text" }],
      ["", "grown"],
      [null, { a: 1 }],
      [{ a: { b: [1, { c: "d" }] } }, { a: { b: [1, { c: "d" }] } }],
      [
        { "1": "x", b: 1 },
        { "1": "x", "0": "y", b: 1 },
      ],
    ];
    for (const [previous, next] of cases) expect(roundTrip(previous, next)).toBe(JSON.stringify(next));
  });

  it("keeps a __proto__ key of the data a key (no prototype is set)", () => {
    const previous = JSON.parse('{"a":1}') as unknown;
    const next = JSON.parse('{"a":1,"__proto__":{"polluted":true}}') as unknown;
    const rebuilt = patch(
      previous,
      JSON.parse(JSON.stringify(diff(previous, next))) as ReturnType<typeof diff>,
    ) as Record<string, unknown>;
    expect(JSON.stringify(rebuilt)).toBe(JSON.stringify(next));
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
    expect(Object.getPrototypeOf(rebuilt)).toBe(Object.prototype);
  });
});
