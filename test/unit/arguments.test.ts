/**
 * `parseToolArguments`: the strict parse `authorize` applies to the raw
 * argument text a planner proposed.
 */
import { describe, expect, it } from "vitest";
import { MAX_ARGUMENT_BYTES, parseToolArguments } from "../../src/policy/arguments.js";

function expectInvalid(raw: string): string {
  const result = parseToolArguments(raw);
  if (result.ok) throw new Error(`expected ${JSON.stringify(raw.slice(0, 60))} to be rejected`);
  expect(result.code).toBe("invalid_arguments");
  expect(result.message).not.toContain("\n");
  return result.message;
}

describe("parseToolArguments", () => {
  it("accepts a JSON object and returns its value", () => {
    const result = parseToolArguments('{"query": "graphs", "limit": 3, "filters": {"course": ["cs301"]}}');
    expect(result).toEqual({ ok: true, value: { query: "graphs", limit: 3, filters: { course: ["cs301"] } } });
  });

  it("accepts an empty object and surrounding whitespace", () => {
    expect(parseToolArguments(" \n{}\t")).toEqual({ ok: true, value: {} });
  });

  it.each([
    ["an array", "[1, 2]", "an array"],
    ["a number", "42", "a number"],
    ["a string", '"query"', "a string"],
    ["a boolean", "true", "a boolean"],
    ["null", "null", "null"],
  ])("rejects %s at the top level", (_label, raw, described) => {
    expect(expectInvalid(raw)).toBe(`arguments must be a JSON object, got ${described}`);
  });

  it.each([
    ["truncated mid-value", '{"query": "x", "limit": '],
    ["truncated mid-string", '{"query": "gra'],
    ["empty text", ""],
    ["single quotes", "{'query': 'x'}"],
    ["a trailing comma", '{"query": "x",}'],
    ["two objects", '{"a": 1}{"b": 2}'],
    ["a comment", '{"a": 1 /* note */}'],
  ])("rejects invalid JSON: %s", (_label, raw) => {
    expect(expectInvalid(raw)).toMatch(/^arguments are not valid JSON: /);
  });

  it("accepts text of exactly the size limit and rejects one byte more", () => {
    const padding = (length: number) => `{"text": "${"a".repeat(length - '{"text": ""}'.length)}"}`;
    expect(Buffer.byteLength(padding(MAX_ARGUMENT_BYTES))).toBe(MAX_ARGUMENT_BYTES);
    expect(parseToolArguments(padding(MAX_ARGUMENT_BYTES)).ok).toBe(true);
    expect(expectInvalid(padding(MAX_ARGUMENT_BYTES + 1))).toBe(
      `arguments are ${MAX_ARGUMENT_BYTES + 1} bytes; the limit is ${MAX_ARGUMENT_BYTES}`,
    );
  });

  it("counts the size in UTF-8 bytes, not characters", () => {
    // "é" is two bytes: 40 000 of them are under 64 Ki characters but over 64 KiB.
    const raw = `{"text": "${"é".repeat(40_000)}"}`;
    expect(raw.length).toBeLessThan(MAX_ARGUMENT_BYTES);
    expect(expectInvalid(raw)).toMatch(/^arguments are \d+ bytes; the limit is 65536$/);
  });

  it("rejects a __proto__ key at the top level without polluting any prototype", () => {
    expect(expectInvalid('{"__proto__": {"polluted": true}, "query": "x"}')).toBe(
      'arguments must not contain the key "__proto__"',
    );
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty("polluted");
  });

  it("rejects a __proto__ key nested in objects and arrays", () => {
    expectInvalid('{"filters": {"__proto__": {"admin": true}}}');
    expectInvalid('{"items": [{"ok": 1}, {"__proto__": null}]}');
  });

  it("returns objects whose prototype is Object.prototype", () => {
    const result = parseToolArguments('{"constructor": "x", "nested": {"prototype": 1}}');
    if (!result.ok) throw new Error(result.message);
    // `constructor` and `prototype` are ordinary data keys here, not a pollution vector.
    expect(Object.getPrototypeOf(result.value)).toBe(Object.prototype);
    expect(Object.getOwnPropertyNames(result.value)).toEqual(["constructor", "nested"]);
  });

  it("keeps the last value of a duplicate key, as JSON.parse does", () => {
    // Documented behaviour: authorize and execute both use this parsed value, so they agree.
    expect(parseToolArguments('{"note_id": "n-1", "note_id": "n-2"}')).toEqual({ ok: true, value: { note_id: "n-2" } });
  });

  it("walks deeply nested arrays without overflowing the stack", () => {
    const depth = 30_000;
    const raw = `{"deep": ${"[".repeat(depth)}${"]".repeat(depth)}}`;
    expect(parseToolArguments(raw).ok).toBe(true);
  });

  it("keeps the parser's reason short and on one line", () => {
    const message = expectInvalid(`{"text": "${"x".repeat(1000)}`);
    expect(message.length).toBeLessThan(250);
  });
});
