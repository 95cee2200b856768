/**
 * The storable-text checks every model and client string passes before it
 * reaches Postgres, a checkpoint or a log line.
 */
import { describe, expect, it } from "vitest";
import {
  escapeUnsafe,
  findUnsafeJson,
  isSafeKey,
  isStorableText,
  jsonTextDepth,
  replaceUnstorable,
  unsafeKeyReason,
  unsafeTextReason,
} from "../../src/policy/safe-text.js";

const HOSTILE_TEXT: [string, string, string][] = [
  ["NUL", "a\u0000b", "contains U+0000"],
  ["a bell", "a\u0007b", "contains U+0007"],
  ["an escape sequence", "\u001b[31mred", "contains U+001B"],
  ["a lone high surrogate", "a\ud800b", "contains a lone surrogate (U+D800)"],
  ["a lone low surrogate", "a\udc00", "contains a lone surrogate (U+DC00)"],
  ["a high surrogate at the end", "abc\ud83d", "contains a lone surrogate (U+D83D)"],
];

describe("unsafeTextReason (free text)", () => {
  it.each(HOSTILE_TEXT)("refuses %s", (_label, text, reason) => {
    expect(unsafeTextReason(text)).toBe(reason);
    expect(isStorableText(text)).toBe(false);
  });

  it.each([
    ["plain text", "Compare self-attention with cross-attention"],
    ["tabs and newlines", "line one\n\tline two\r\n"],
    ["an emoji (a surrogate pair)", "done 👍"],
    ["accents and CJK", "Müller 東京"],
    ["bidi and zero-width characters (prose may hold them)", "abc\u202edef\u200b"],
    ["the empty string", ""],
  ])("accepts %s", (_label, text) => {
    expect(unsafeTextReason(text)).toBeUndefined();
  });
});

describe("unsafeKeyReason (ids, names, keys)", () => {
  it.each([
    ...HOSTILE_TEXT,
    ["a tab", "a\tb", "contains U+0009"],
    ["a newline", "a\nb", "contains U+000A"],
    ["DEL", "a\u007fb", "contains U+007F"],
    ["a C1 control", "a\u0085b", "contains U+0085"],
    ["a right-to-left override", "user\u202etxt.exe", "contains U+202E"],
    ["a bidi isolate", "a\u2066b", "contains U+2066"],
    ["a zero-width space", "ad\u200bmin", "contains U+200B"],
    ["a zero-width joiner", "a\u200db", "contains U+200D"],
    ["a byte-order mark", "\ufeffkey", "contains U+FEFF"],
    ["a left-to-right mark", "a\u200eb", "contains U+200E"],
  ])("refuses %s", (_label, text, reason) => {
    expect(unsafeKeyReason(text)).toBe(reason);
    expect(isSafeKey(text)).toBe(false);
  });

  it.each([["search_notes"], ["call_abc-123"], ["get-sum"], ["notes.read"], ["Müller"], ["键"], ["🔑"]])(
    "accepts %s",
    (text) => {
      expect(isSafeKey(text)).toBe(true);
    },
  );
});

describe("escapeUnsafe and replaceUnstorable", () => {
  it("writes unsafe characters as visible escapes, keeping pairs", () => {
    expect(escapeUnsafe("a\u0000b\u202ec\ud800 👍")).toBe("a\\u{0}b\\u{202e}c\\u{d800} 👍");
    expect(isStorableText(escapeUnsafe("\u0000\ud800\udc00\udc00"))).toBe(true);
    expect(escapeUnsafe("plain")).toBe("plain");
  });

  it("replaces what cannot be stored with U+FFFD and keeps the rest", () => {
    expect(replaceUnstorable("a\u0000b\ud800c\n👍\u202e")).toBe("a\ufffdb\ufffdc\n👍\u202e");
    expect(replaceUnstorable("fine\ttext")).toBe("fine\ttext");
  });
});

describe("findUnsafeJson", () => {
  it("accepts storable JSON within the depth", () => {
    expect(findUnsafeJson({ a: [1, "two", { b: null, c: true }] }, 3)).toBeUndefined();
  });

  it("names the path to an unstorable string or key", () => {
    expect(findUnsafeJson({ a: [1, "x\u0000"] }, 8)).toEqual({ path: ["a", 1], reason: "contains U+0000" });
    expect(findUnsafeJson({ a: { "b\u200bc": 1 } }, 8)).toEqual({
      path: ["a", "b\\u{200b}c"],
      reason: "has a key that contains U+200B",
    });
    expect(findUnsafeJson({ "\ud800": 1 }, 8)?.reason).toBe("has a key that contains a lone surrogate (U+D800)");
  });

  it("refuses nesting deeper than the limit without recursion", () => {
    expect(findUnsafeJson({ a: { b: {} } }, 3)).toBeUndefined();
    expect(findUnsafeJson({ a: { b: { c: {} } } }, 3)).toEqual({
      path: ["a", "b", "c"],
      reason: "nests deeper than 3 levels",
    });
    let deep: unknown = [];
    for (let level = 0; level < 100_000; level += 1) deep = [deep];
    expect(findUnsafeJson({ deep }, 16)?.reason).toBe("nests deeper than 16 levels");
  });
});

describe("jsonTextDepth", () => {
  it("counts nesting of objects and arrays, not brackets inside strings", () => {
    expect(jsonTextDepth("{}", 10)).toBe(1);
    expect(jsonTextDepth('{"a": [1, {"b": []}]}', 10)).toBe(4);
    expect(jsonTextDepth('{"a": "[[[[{{{{"}', 10)).toBe(1);
    expect(jsonTextDepth('{"a": "\\"[[[["}', 10)).toBe(1);
    expect(jsonTextDepth("42", 10)).toBe(0);
  });

  it("stops one past the limit, so 20 000 levels cost one short pass", () => {
    const text = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
    expect(jsonTextDepth(text, 16)).toBe(17);
  });
});
