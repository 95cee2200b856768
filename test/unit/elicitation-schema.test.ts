/**
 * The requested form of an elicitation (src/elicitation/schema.ts):
 * defaults (SEP-1034) and the strict check of an answer, including hostile
 * input (wrong types, nesting, control characters, oversized values,
 * prototype keys), plus the check of the form itself and the tools list's
 * mark for servers that elicit.
 */
import { describe, expect, it } from "vitest";
import {
  checkRequestedSchema,
  defaultsOf,
  MAX_FIELDS,
  validateAnswer,
  withDefaults,
  type RequestedSchema,
} from "../../src/elicitation/schema.js";
import { renderToolStatus, type ToolStatusRow } from "../../src/mcp/tool-report.js";
import { parseConfig } from "../../src/policy/config.js";

const FORM: RequestedSchema = {
  type: "object",
  properties: {
    date: { type: "string", format: "date" },
    at: { type: "string", format: "date-time" },
    email: { type: "string", format: "email" },
    site: { type: "string", format: "uri" },
    name: { type: "string", minLength: 2, maxLength: 10, default: "John" },
    age: { type: "integer", minimum: 0, maximum: 150, default: 30 },
    score: { type: "number", minimum: 0, maximum: 100 },
    verified: { type: "boolean", default: true },
    status: { type: "string", enum: ["active", "inactive"], default: "active" },
    level: {
      type: "string",
      oneOf: [
        { const: "low", title: "Low" },
        { const: "high", title: "High" },
      ],
    },
    tags: { type: "array", items: { type: "string", enum: ["a", "b", "c"] }, maxItems: 2 },
  },
  required: ["date"],
};

const problems = (answer: unknown) => {
  const checked = validateAnswer(FORM, answer);
  return checked.ok ? [] : checked.problems;
};

describe("elicitation defaults (SEP-1034)", () => {
  it("lists the declared defaults and fills in every field an answer leaves out", () => {
    expect(defaultsOf(FORM)).toEqual({ name: "John", age: 30, verified: true, status: "active" });
    expect(withDefaults(FORM, { date: "2026-12-24", age: 41 })).toEqual({
      date: "2026-12-24",
      name: "John",
      age: 41,
      verified: true,
      status: "active",
    });
    expect(defaultsOf({ type: "object", properties: {} })).toEqual({});
  });

  it("an accepted empty answer becomes the defaults when nothing is required", () => {
    const form: RequestedSchema = { ...FORM, required: [] };
    expect(validateAnswer(form, {})).toEqual({
      ok: true,
      content: { name: "John", age: 30, verified: true, status: "active" },
    });
  });

  it("a field named __proto__ is an own field, never the prototype", () => {
    const form: RequestedSchema = { type: "object", properties: { ["__proto__"]: { type: "string", default: "x" } } };
    const filled = withDefaults(form, {});
    expect(Object.hasOwn(filled, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf(filled)).toBe(Object.prototype);
  });
});

describe("an answer checked against the form", () => {
  it("accepts a full valid answer", () => {
    const answer = {
      date: "2028-02-29",
      at: "2026-12-24T10:00:00Z",
      email: "alice@example.edu",
      site: "https://example.edu/x",
      name: "Alice",
      age: 20,
      score: 99.5,
      verified: false,
      status: "inactive",
      level: "high",
      tags: ["a", "c"],
    };
    expect(validateAnswer(FORM, answer)).toEqual({ ok: true, content: answer });
  });

  it.each([
    [{ date: "2026-02-30" }, "date", "bad_format"],
    [{ date: "24.12.2026" }, "date", "bad_format"],
    [{ date: 20261224 }, "date", "wrong_type"],
    [{ date: "2026-12-24", at: "2026-12-24 10:00" }, "at", "bad_format"],
    [{ date: "2026-12-24", email: "not-an-email" }, "email", "bad_format"],
    [{ date: "2026-12-24", site: "example.edu" }, "site", "bad_format"],
    [{ date: "2026-12-24", name: "A" }, "name", "too_short"],
    [{ date: "2026-12-24", name: "A".repeat(11) }, "name", "too_long"],
    [{ date: "2026-12-24", age: 1.5 }, "age", "wrong_type"],
    [{ date: "2026-12-24", age: "30" }, "age", "wrong_type"],
    [{ date: "2026-12-24", age: -1 }, "age", "too_small"],
    [{ date: "2026-12-24", score: 101 }, "score", "too_large"],
    [{ date: "2026-12-24", score: Number.NaN }, "score", "wrong_type"],
    [{ date: "2026-12-24", verified: "true" }, "verified", "wrong_type"],
    [{ date: "2026-12-24", status: "deleted" }, "status", "not_allowed"],
    [{ date: "2026-12-24", level: "Low" }, "level", "not_allowed"],
    [{ date: "2026-12-24", tags: ["a", "d"] }, "tags", "not_allowed"],
    [{ date: "2026-12-24", tags: ["a", "a"] }, "tags", "not_allowed"],
    [{ date: "2026-12-24", tags: ["a", "b", "c"] }, "tags", "too_long"],
    [{ date: "2026-12-24", tags: "a" }, "tags", "wrong_type"],
    [{ date: "2026-12-24", name: "Al\u0000ice" }, "name", "control_characters"],
    [{ date: "2026-12-24", name: "Al\u001bice" }, "name", "control_characters"],
    [{ date: { year: 2026, nested: { deeper: [1] } } }, "date", "wrong_type"],
    [{ date: ["2026-12-24"] }, "date", "wrong_type"],
    [{ date: null }, "date", "wrong_type"],
    [{}, "date", "missing"],
    [{ date: "2026-12-24", role: "admin" }, "role", "unknown_field"],
    [{ date: "2026-12-24", constructor: "x" }, "constructor", "unknown_field"],
  ])("refuses %j: %s %s", (answer, field, problem) => {
    expect(problems(answer)).toEqual([{ field, problem }]);
  });

  it("refuses what is not an object, and an oversized one, as a whole", () => {
    for (const answer of [null, "2026-12-24", 5, ["2026-12-24"], undefined])
      expect(problems(answer)).toEqual([{ field: "", problem: "wrong_type" }]);
    const many = Object.fromEntries(Array.from({ length: MAX_FIELDS + 1 }, (_, index) => [`f${index}`, "x"]));
    expect(problems(many)).toEqual([{ field: "", problem: "too_long" }]);
  });

  it("bounds free text even when the form sets no maxLength", () => {
    const form: RequestedSchema = { type: "object", properties: { text: { type: "string" } } };
    expect(validateAnswer(form, { text: "x".repeat(4_000) }).ok).toBe(true);
    expect(validateAnswer(form, { text: "x".repeat(4_001) })).toEqual({
      ok: false,
      problems: [{ field: "text", problem: "too_long" }],
    });
    // Tabs and line breaks are text, not control characters.
    expect(validateAnswer(form, { text: "a\tb\nc" }).ok).toBe(true);
  });

  // Cases where ajv (the host's JSON-Schema validator) and the rules the form states could part ways.
  it("reads numbers, lengths and lists as the form means them, not as a lax validator would", () => {
    const form: RequestedSchema = {
      type: "object",
      properties: {
        n: { type: "number", minimum: 0, maximum: 100 },
        short: { type: "string", maxLength: 3 },
        none: { type: "string", enum: [] },
        picks: { type: "array", items: {} },
        "a/b~c": { type: "boolean" },
      },
      required: ["n", "n"],
    };
    const check = (answer: Record<string, unknown>) => {
      const checked = validateAnswer(form, answer);
      return checked.ok ? [] : checked.problems;
    };
    // NaN and Infinity are not numbers of a form (JSON has neither; an in-process caller might).
    expect(check({ n: Number.NaN })).toEqual([{ field: "n", problem: "wrong_type" }]);
    expect(check({ n: Number.POSITIVE_INFINITY })).toEqual([{ field: "n", problem: "wrong_type" }]);
    // Length in characters, not UTF-16 units: three emoji fit a maxLength of 3.
    expect(check({ n: 1, short: "😀😀😀" })).toEqual([]);
    expect(check({ n: 1, short: "😀😀😀😀" })).toEqual([{ field: "short", problem: "too_long" }]);
    // An empty list of choices allows nothing (JSON Schema has no empty enum).
    expect(check({ n: 1, none: "x" })).toEqual([{ field: "none", problem: "not_allowed" }]);
    expect(check({ n: 1, picks: ["x"] })).toEqual([{ field: "picks", problem: "not_allowed" }]);
    // Names with JSON Pointer's escape characters are named back exactly; a repeated required name counts once.
    expect(check({ n: 1, "a/b~c": "yes" })).toEqual([{ field: "a/b~c", problem: "wrong_type" }]);
    expect(check({})).toEqual([{ field: "n", problem: "missing" }]);
    // Problems in the answer's order, unknown fields among them, then the missing ones.
    expect(check({ zz: 1, short: 5, toString: "x" })).toEqual([
      { field: "zz", problem: "unknown_field" },
      { field: "short", problem: "wrong_type" },
      { field: "toString", problem: "unknown_field" },
      { field: "n", problem: "missing" },
    ]);
  });

  it("checks a field named __proto__ like any other, and an unknown format refuses every answer", () => {
    const form = JSON.parse(
      '{"type":"object","properties":{"__proto__":{"type":"string","minLength":2},"odd":{"type":"string","format":"color"}}}',
    ) as RequestedSchema;
    expect(validateAnswer(form, JSON.parse('{"__proto__":"x"}'))).toEqual({
      ok: false,
      problems: [{ field: "__proto__", problem: "too_short" }],
    });
    expect(validateAnswer(form, { odd: "red" })).toEqual({
      ok: false,
      problems: [{ field: "odd", problem: "bad_format" }],
    });
    const defaulted = JSON.parse(
      '{"type":"object","properties":{"__proto__":{"type":"string","minLength":2,"default":"x"}}}',
    ) as RequestedSchema;
    expect(checkRequestedSchema(defaulted)).toEqual({
      ok: false,
      reason: "the default of __proto__ does not fit its own field",
    });
  });
});

describe("the requested form itself", () => {
  it("accepts the conformance suite's form and refuses broken ones", () => {
    expect(checkRequestedSchema(FORM)).toEqual({ ok: true });
    const many = Object.fromEntries(Array.from({ length: MAX_FIELDS + 1 }, (_, i) => [`f${i}`, { type: "boolean" }]));
    expect(checkRequestedSchema({ type: "object", properties: many } as RequestedSchema).ok).toBe(false);
    expect(
      checkRequestedSchema({ type: "object", properties: { a: { type: "integer", minimum: 5, default: 1 } } }).ok,
    ).toBe(false);
    expect(checkRequestedSchema({ type: "object", properties: { a: { type: "string" } }, required: ["b"] }).ok).toBe(
      false,
    );
    expect(checkRequestedSchema({ type: "object", properties: { "a\u0000": { type: "string" } } }).ok).toBe(false);
    expect(
      checkRequestedSchema({ type: "object", properties: { a: { type: "string", description: "x\u0000" } } }).ok,
    ).toBe(false);
  });
});

describe("npm run tools marks servers that elicit", () => {
  it("shows (elicits) beside the server", () => {
    const row: ToolStatusRow = {
      tool: "book_review_slot",
      server: "booking",
      risk: "read",
      listed: true,
      revision: "2026-07-28",
      pin: "pinned",
      pinned_hash: "sha256:ab",
      served_hash: null,
      elicits: true,
    };
    const table = renderToolStatus([row, { ...row, tool: "other", server: "plain", elicits: false, revision: null }]);
    expect(table.split("\n")[1]).toMatch(/^book_review_slot\s+booking \(elicits\)\s+read\s+yes\s+2026-07-28\s+pinned/);
    expect(table.split("\n")[2]).toMatch(/^other\s+plain\s+read\s+yes\s+-\s+pinned/);
  });
});

describe("the elicitation timeout in warrant.config.json", () => {
  const base = { servers: {}, tools: {} };
  it("defaults to 120 s and takes 1 s to 1 h", () => {
    expect(parseConfig(JSON.stringify(base), "test").elicitation.timeout_ms).toBe(120_000);
    expect(parseConfig(JSON.stringify({ ...base, elicitation: { timeout_ms: 1_000 } }), "test").elicitation).toEqual({
      timeout_ms: 1_000,
    });
  });
  it.each([
    { timeout_ms: 999 },
    { timeout_ms: 3_600_001 },
    { timeout_ms: 1.5e3 + 0.5 },
    { timeout_ms: "120000" },
    { timeout: 5 },
  ])("refuses %j with a config error", (elicitation) => {
    expect(() => parseConfig(JSON.stringify({ ...base, elicitation }), "test")).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
  });
  it("a server's elicitation flag is a boolean", () => {
    const server = { transport: "stdio", command: "node", elicitation: "yes" };
    expect(() => parseConfig(JSON.stringify({ ...base, servers: { s: server } }), "test")).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
  });
});
