/**
 * Canonical JSON and action fingerprints (DESIGN §7).
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { actionFingerprint, canonicalJson } from "../../src/policy/fingerprint.js";

describe("canonicalJson", () => {
  it("sorts keys at the top level", () => {
    expect(canonicalJson({ b: 1, a: 2, c: 3 })).toBe('{"a":2,"b":1,"c":3}');
  });

  it("sorts keys at every depth, including objects inside arrays", () => {
    const value = { z: { y: 1, x: { w: [{ d: 1, c: 2 }, { b: { f: 0, e: 1 } }] } }, a: null };
    expect(canonicalJson(value)).toBe('{"a":null,"z":{"x":{"w":[{"c":2,"d":1},{"b":{"e":1,"f":0}}]},"y":1}}');
  });

  it("keeps array order (arrays are ordered data)", () => {
    expect(canonicalJson([3, 1, 2])).toBe("[3,1,2]");
    expect(canonicalJson([3, 1, 2])).not.toBe(canonicalJson([1, 2, 3]));
  });

  it("encodes primitives as JSON", () => {
    expect(canonicalJson('a"b')).toBe('"a\\"b"');
    expect(canonicalJson(1.5)).toBe("1.5");
    expect(canonicalJson(true)).toBe("true");
    expect(canonicalJson(null)).toBe("null");
  });

  it("drops undefined object fields", () => {
    expect(canonicalJson({ a: 1, b: undefined, c: { d: undefined, e: 2 } })).toBe('{"a":1,"c":{"e":2}}');
    expect(canonicalJson({ a: 1, b: undefined })).toBe(canonicalJson({ a: 1 }));
  });

  it("writes undefined as null inside arrays and at the top level, like JSON.stringify", () => {
    expect(canonicalJson([1, undefined, 2])).toBe("[1,null,2]");
    expect(canonicalJson(undefined)).toBe("null");
  });

  it("escapes keys", () => {
    expect(canonicalJson({ 'a"b': 1 })).toBe('{"a\\"b":1}');
  });

  it("round-trips to the same value as the input", () => {
    const value = { query: "graphs", filters: { course: ["cs301", "db201"], limit: 3 }, flag: false };
    expect(JSON.parse(canonicalJson(value))).toEqual(value);
  });
});

describe("actionFingerprint", () => {
  const args = { query: "graph search", limit: 5, filters: { course: "cs301", since: 2024 } };

  it("is 64 lowercase hex characters", () => {
    expect(actionFingerprint("search_notes", args)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("is SHA-256 of the tool, a NUL separator and the canonical arguments", () => {
    const expected = createHash("sha256")
      .update(`search_notes\u0000${canonicalJson(args)}`)
      .digest("hex");
    expect(actionFingerprint("search_notes", args)).toBe(expected);
  });

  it("is the same for equal arguments in a different key order, at any depth", () => {
    const reordered = { filters: { since: 2024, course: "cs301" }, limit: 5, query: "graph search" };
    expect(actionFingerprint("search_notes", reordered)).toBe(actionFingerprint("search_notes", args));
  });

  it("is the same when only undefined fields differ", () => {
    expect(actionFingerprint("search_notes", { ...args, course: undefined })).toBe(
      actionFingerprint("search_notes", args),
    );
  });

  it("differs for a different tool with the same arguments", () => {
    expect(actionFingerprint("read_note", args)).not.toBe(actionFingerprint("search_notes", args));
  });

  it("differs for different arguments", () => {
    const base = actionFingerprint("search_notes", args);
    expect(actionFingerprint("search_notes", { ...args, limit: 6 })).not.toBe(base);
    expect(actionFingerprint("search_notes", { ...args, filters: { course: "cs301", since: "2024" } })).not.toBe(base);
    expect(actionFingerprint("search_notes", { ...args, extra: null })).not.toBe(base);
  });
});
