/** Where a refused JSON text goes wrong, as a line and a column (src/policy/json-syntax.ts). */
import { describe, expect, it } from "vitest";
import { jsonSyntaxError } from "../../src/policy/json-syntax.js";
import { parseConfig } from "../../src/policy/config.js";

describe("jsonSyntaxError", () => {
  it.each([
    ['{\n  "a": 1,\n  "b": }', 'line 3, column 8: expected a value, found "}"'],
    ['{\n  "a": 1,\n}', 'line 3, column 1: expected a property name in double quotes, found "}"'],
    ['{"a": 1', 'line 1, column 8: expected "," or "}", found the end of the file'],
    ["", "line 1, column 1: expected a value, found the end of the file"],
    ['{"a": "x\u0001"}', "line 1, column 9: a control character inside a string (write it escaped, e.g. \\n)"],
    ['{"a": "\\q"}', "line 1, column 8: unknown escape \\q"],
    ["[1, 2] 3", 'line 1, column 8: unexpected "3" after the end of the JSON value'],
    ["\ufeff{}", "line 1, column 1: the file starts with a byte-order mark; save it without one"],
    ["{'a': 1}", 'line 1, column 2: expected a property name in double quotes, found "\'"'],
    ["[tru]", 'line 1, column 2: unexpected "t"'],
  ])("%j", (text, expected) => {
    expect(() => JSON.parse(text)).toThrow();
    expect(jsonSyntaxError(text)).toBe(expected);
  });

  it("finds nothing in valid JSON, and bounds deep nesting instead of overflowing the stack", () => {
    expect(jsonSyntaxError('{"a": [1, -2.5e3, true, null, "\\u00e9"]}')).toBeUndefined();
    expect(jsonSyntaxError(`${"[".repeat(100_000)}`)).toMatch(/^line 1, column 258: nested more than 256 levels deep$/);
  });

  it("is what a config file's syntax error says, never a position", () => {
    // A trailing comma after the hundredth entry: line 103 is the closing brace it stops at.
    const text = `{\n  "servers": {\n${'    "x": 1,\n'.repeat(100)}  }\n  "contracts": []\n}`;
    let message = "";
    try {
      parseConfig(text, "warrant.config.json");
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe(
      'warrant.config.json: not valid JSON at line 103, column 3: expected a property name in double quotes, found "}"',
    );
    expect(message).not.toMatch(/position/);
  });
});
