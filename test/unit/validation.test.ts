/**
 * Strict argument validation against the model-visible schema, and how the
 * catalog builds that schema from a server's listing plus a contract.
 */
import { describe, expect, it } from "vitest";
import { buildCatalog, modelSchemaFor, type ListedTool } from "../../src/mcp/catalog.js";
import type { CatalogTool } from "../../src/policy/contracts.js";
import { DEFAULT_HINTS } from "../../src/policy/contracts.js";
import { ToolContractSchema, type ToolContract } from "../../src/policy/contracts.js";
import { validateArguments } from "../../src/policy/validation.js";

/** Shaped like the notes server's search_notes input schema. */
const SEARCH_NOTES_INPUT: Record<string, unknown> = {
  type: "object",
  properties: {
    user_id: { type: "string" },
    query: { type: "string", minLength: 1, maxLength: 500 },
    limit: { type: "integer", minimum: 1, maximum: 20 },
    course: { type: "string", pattern: "^[a-z]{2,8}[0-9]{3}$" },
  },
  required: ["user_id", "query"],
};

function contract(overrides: Record<string, unknown> = {}): ToolContract {
  return ToolContractSchema.parse({
    server: "notes",
    risk: "read",
    scopes: ["notes:read"],
    injected: { user_id: "principal.user_id" },
    max_string_chars: 300,
    ...overrides,
  });
}

function catalogTool(listed: ListedTool, toolContract: ToolContract = contract()): CatalogTool {
  const { tools, missing } = buildCatalog({ [listed.name]: toolContract }, { notes: [listed] });
  expect(missing).toEqual([]);
  const tool = tools[0];
  if (!tool) throw new Error("catalog is empty");
  return tool;
}

const searchNotes = catalogTool({
  name: "search_notes",
  description: "Search notes.",
  inputSchema: SEARCH_NOTES_INPUT,
});

function expectInvalid(raw: string): string {
  const result = validateArguments(searchNotes, raw);
  if (result.ok) throw new Error(`expected ${JSON.stringify(raw.slice(0, 80))} to be rejected`);
  expect(result).toEqual({ ok: false, code: "invalid_arguments", message: expect.any(String) });
  return result.message;
}

describe("validateArguments", () => {
  it("accepts valid arguments and returns the parsed object unchanged", () => {
    expect(validateArguments(searchNotes, '{"query": "graphs", "limit": 5, "course": "cs301"}')).toEqual({
      ok: true,
      args: { query: "graphs", limit: 5, course: "cs301" },
    });
  });

  it("accepts only the required model-visible field and adds no defaults", () => {
    expect(validateArguments(searchNotes, '{"query": "x"}')).toEqual({ ok: true, args: { query: "x" } });
  });

  it("rejects text that is not JSON", () => {
    expect(expectInvalid("query=graphs")).toContain("not valid JSON");
  });

  it("rejects truncated JSON", () => {
    expect(expectInvalid('{"query": "x", "limit": ')).toContain("not valid JSON");
  });

  it("rejects a top-level array", () => {
    expect(expectInvalid('[{"query": "x"}]')).toBe("arguments must be a JSON object, got an array");
  });

  it("rejects an extra field, naming it", () => {
    expect(expectInvalid('{"query": "x", "verbose": true}')).toBe('unknown argument "verbose"');
  });

  it("rejects an injected field supplied by the model as unknown", () => {
    expect(expectInvalid('{"query": "x", "user_id": "bob"}')).toBe('unknown argument "user_id"');
  });

  it("rejects a number where a string is expected", () => {
    expect(expectInvalid('{"query": 42}')).toContain('"query"');
  });

  it("does not coerce a boolean into an integer", () => {
    expect(expectInvalid('{"query": "x", "limit": true}')).toContain('"limit"');
  });

  it("rejects a float for an integer", () => {
    expect(expectInvalid('{"query": "x", "limit": 1.5}')).toContain('"limit"');
  });

  it("rejects an integer outside the schema's bounds", () => {
    expect(expectInvalid('{"query": "x", "limit": 21}')).toContain('"limit"');
    expect(expectInvalid('{"query": "x", "limit": 0}')).toContain('"limit"');
  });

  it("rejects a string that does not match the schema pattern", () => {
    expect(expectInvalid('{"query": "x", "course": "CS301"}')).toContain('"course"');
  });

  it("rejects a string longer than the contract's max_string_chars even when the schema allows it", () => {
    // The schema allows 500; the contract allows 300.
    const raw = JSON.stringify({ query: "q".repeat(301) });
    expect(expectInvalid(raw)).toBe("a string is longer than 300 characters");
    expect(validateArguments(searchNotes, JSON.stringify({ query: "q".repeat(300) })).ok).toBe(true);
  });

  it("rejects a string longer than the schema's maxLength", () => {
    const tool = catalogTool(
      { name: "search_notes", inputSchema: SEARCH_NOTES_INPUT },
      contract({ max_string_chars: 10_000 }),
    );
    const result = validateArguments(tool, JSON.stringify({ query: "q".repeat(501) }));
    expect(result).toEqual({ ok: false, code: "invalid_arguments", message: expect.stringContaining('"query"') });
    expect(validateArguments(tool, JSON.stringify({ query: "q".repeat(500) })).ok).toBe(true);
  });

  it("rejects a missing required field", () => {
    expect(expectInvalid('{"limit": 3}')).toContain("query");
    expect(expectInvalid("{}")).toContain("query");
  });

  it("rejects a __proto__ key at the top level and nested", () => {
    expect(expectInvalid('{"query": "x", "__proto__": {"admin": true}}')).toContain("__proto__");
    expect(expectInvalid('{"query": "x", "course": {"__proto__": {}}}')).toContain("__proto__");
  });

  it("rejects a top-level null, string and number", () => {
    for (const raw of ["null", '"query"', "3"]) expectInvalid(raw);
  });

  // BUG (src/mcp/catalog.ts:173-183, modelSchemaFor): only `properties` and
  // `required` are copied into the model schema; `$defs`/`definitions` are
  // dropped. A server whose input schema uses `$ref` (what zod/JSON-schema
  // generators emit for shared or recursive types) makes ajv.compile throw
  // "can't resolve reference" inside validateArguments
  // (src/policy/validation.ts:250), so authorize crashes instead of returning
  // a typed result.
  it("validates a schema whose properties use $ref into $defs", () => {
    const tool = catalogTool({
      name: "search_notes",
      inputSchema: {
        type: "object",
        properties: { query: { $ref: "#/$defs/Query" } },
        required: ["query"],
        $defs: { Query: { type: "string", minLength: 1 } },
      },
    });
    expect(validateArguments(tool, '{"query": "x"}')).toEqual({ ok: true, args: { query: "x" } });
    expect(validateArguments(tool, '{"query": 1}')).toMatchObject({ ok: false, code: "invalid_arguments" });
  });
});

describe("modelSchemaFor", () => {
  it("removes injected properties and required entries and forbids unknown keys", () => {
    expect(modelSchemaFor(SEARCH_NOTES_INPUT, ["user_id"])).toEqual({
      type: "object",
      properties: {
        query: { type: "string", minLength: 1, maxLength: 500 },
        limit: { type: "integer", minimum: 1, maximum: 20 },
        course: { type: "string", pattern: "^[a-z]{2,8}[0-9]{3}$" },
      },
      required: ["query"],
      additionalProperties: false,
    });
  });

  it("sets additionalProperties false even when the server allows extra keys", () => {
    const schema = modelSchemaFor(
      { type: "object", properties: { a: { type: "string" } }, additionalProperties: true },
      [],
    );
    expect(schema["additionalProperties"]).toBe(false);
  });

  it("tolerates a schema without properties or required", () => {
    expect(modelSchemaFor({ type: "object" }, ["user_id"])).toEqual({
      type: "object",
      properties: {},
      required: [],
      additionalProperties: false,
    });
  });

  it("is what the catalog shows the model", () => {
    expect(searchNotes.model_schema).toEqual(modelSchemaFor(SEARCH_NOTES_INPUT, ["user_id"]));
  });
});

describe("buildCatalog", () => {
  it("defaults missing hints to the MCP spec defaults", () => {
    expect(DEFAULT_HINTS).toEqual({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    });
    expect(searchNotes.hints).toEqual({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    });
  });

  it("takes boolean hints from annotations and defaults the rest, ignoring non-booleans", () => {
    const tool = catalogTool({
      name: "search_notes",
      inputSchema: SEARCH_NOTES_INPUT,
      annotations: { readOnlyHint: true, destructiveHint: "no", openWorldHint: false },
    });
    expect(tool.hints).toEqual({
      readOnlyHint: true,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    });
  });

  it("leaves out a listed tool that has no contract and reports a contract whose tool is not listed", () => {
    const { tools, missing } = buildCatalog(
      { search_notes: contract(), read_note: contract() },
      {
        notes: [
          { name: "search_notes", inputSchema: SEARCH_NOTES_INPUT },
          { name: "delete_all", inputSchema: { type: "object" } },
        ],
      },
    );
    expect(tools.map((tool) => tool.name)).toEqual(["search_notes"]);
    expect(missing).toEqual(["read_note"]);
  });

  it("only matches a tool listed by the contract's own server", () => {
    const { tools, missing } = buildCatalog(
      { search_notes: contract() },
      { other: [{ name: "search_notes", inputSchema: SEARCH_NOTES_INPUT }] },
    );
    expect(tools).toEqual([]);
    expect(missing).toEqual(["search_notes"]);
  });

  it("uses remote_name to find the listed tool and the contract's description over the server's", () => {
    const { tools } = buildCatalog(
      { find: contract({ remote_name: "search_notes", description: "Contract description." }) },
      { notes: [{ name: "search_notes", description: "Server description.", inputSchema: SEARCH_NOTES_INPUT }] },
    );
    expect(tools).toHaveLength(1);
    expect(tools[0]).toMatchObject({
      name: "find",
      remote_name: "search_notes",
      server: "notes",
      description: "Contract description.",
    });
  });
});
