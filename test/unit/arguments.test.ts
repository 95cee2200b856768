/**
 * `parseToolArguments`: the strict parse `authorize` applies to the raw
 * argument text a planner proposed.
 */
import { describe, expect, it } from "vitest";
import { MAX_ARGUMENT_BYTES, MAX_ARGUMENT_DEPTH, parseToolArguments } from "../../src/policy/arguments.js";

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

  it("accepts nesting up to the depth limit and refuses one level more", () => {
    // The arguments object is level 1; each array adds one.
    const nested = (levels: number) => `{"deep": ${"[".repeat(levels - 1)}${"]".repeat(levels - 1)}}`;
    expect(parseToolArguments(nested(MAX_ARGUMENT_DEPTH)).ok).toBe(true);
    expect(expectInvalid(nested(MAX_ARGUMENT_DEPTH + 1))).toBe(
      `arguments nest deeper than ${MAX_ARGUMENT_DEPTH} levels`,
    );
    expect(MAX_ARGUMENT_DEPTH).toBeLessThan(50); // LangGraph's deserializer limit, with room for the envelope
  });

  it.each([
    ["64 levels (about 140 bytes)", 64],
    ["20 000 levels (would overflow a recursive walk)", 20_000],
    ["30 000 levels", 30_000],
  ])("refuses %s before anything recursive sees it", (_label, depth) => {
    const arrays = `{"query": ${"[".repeat(depth)}${"]".repeat(depth)}}`;
    expect(expectInvalid(arrays)).toBe(`arguments nest deeper than ${MAX_ARGUMENT_DEPTH} levels`);
    // Objects cost 5 bytes a level: stay under the size limit so the depth check is what refuses them.
    const levels = Math.min(depth, 10_000);
    const objects = `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
    expect(expectInvalid(objects)).toBe(`arguments nest deeper than ${MAX_ARGUMENT_DEPTH} levels`);
  });

  it("does not count brackets inside strings as nesting", () => {
    expect(parseToolArguments(`{"query": "${"[".repeat(100)}"}`).ok).toBe(true);
  });

  // The raw text holds JSON escapes (\u0000 as six characters), as a model would send them.
  it.each([
    ["NUL in a value", String.raw`{"query": "a\u0000b"}`, 'argument "query" contains U+0000'],
    [
      "a lone surrogate in a value",
      String.raw`{"query": "\ud800"}`,
      'argument "query" contains a lone surrogate (U+D800)',
    ],
    [
      "a control character deep in an array",
      String.raw`{"items": [{"title": "x\u001b[2J"}]}`,
      'argument "items.0.title" contains U+001B',
    ],
    [
      "NUL in a key",
      String.raw`{"qu\u0000ery": "x"}`,
      String.raw`argument "qu\u{0}ery" has a key that contains U+0000`,
    ],
    [
      "a zero-width space in a key",
      String.raw`{"que\u200bry": "x"}`,
      String.raw`argument "que\u{200b}ry" has a key that contains U+200B`,
    ],
    [
      "a bidi override in a nested key",
      String.raw`{"filters": {"\u202ecourse": "x"}}`,
      String.raw`argument "filters.\u{202e}course" has a key that contains U+202E`,
    ],
  ])("refuses %s", (_label, raw, message) => {
    expect(expectInvalid(raw)).toBe(message);
  });

  it("accepts tabs, newlines, emoji and bidi characters inside values", () => {
    expect(parseToolArguments(String.raw`{"text": "a\tb\nc 👍 \u202e"}`)).toEqual({
      ok: true,
      value: { text: "a\tb\nc 👍 \u202e" },
    });
  });

  it("never copies a raw control character from the input into its message", () => {
    // A raw NUL is invalid JSON, and V8 quotes the text around it in its error.
    const message = expectInvalid('{"query": "x"\u0000}');
    expect(message).toMatch(/^arguments are not valid JSON: /);
    expect(message).not.toContain("\u0000");
  });

  it("keeps the parser's reason short and on one line", () => {
    const message = expectInvalid(`{"text": "${"x".repeat(1000)}`);
    expect(message.length).toBeLessThan(250);
  });
});
