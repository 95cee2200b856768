/**
 * `parseConfig`: the shipped config, and every kind of malformed config
 * becoming one `config_invalid` ConfigError that names the path.
 */
import { describe, expect, it } from "vitest";
import shipped from "../../warrant.config.json" with { type: "json" };
import { isConfigError } from "../../src/errors.js";
import { parseConfig } from "../../src/policy/config.js";

const SHIPPED_TEXT = JSON.stringify(shipped);

/** The parts of the minimal config a test edits. */
interface Draft {
  config: Record<string, unknown>;
  servers: Record<string, unknown>;
  server: Record<string, unknown>;
  tools: Record<string, unknown>;
  contract: Record<string, unknown>;
}

/** A minimal valid config with one server and one contract, after `patch` edits it. */
function configText(patch: (draft: Draft) => void = () => {}): string {
  const server: Record<string, unknown> = { transport: "stdio", command: "node", args: ["server.js"] };
  const contract: Record<string, unknown> = { server: "notes", risk: "read" };
  const servers: Record<string, unknown> = { notes: server };
  const tools: Record<string, unknown> = { read_note: contract };
  const config: Record<string, unknown> = { servers, tools };
  patch({ config, servers, server, tools, contract });
  return JSON.stringify(config);
}

/** Parses, expecting a config_invalid ConfigError; returns its message. */
function invalid(text: string): string {
  try {
    parseConfig(text, "test.json");
  } catch (error) {
    expect(isConfigError(error)).toBe(true);
    expect((error as { code?: unknown }).code).toBe("config_invalid");
    const message = (error as Error).message;
    expect(message.startsWith("test.json: ")).toBe(true);
    return message;
  }
  throw new Error("expected the config to be refused");
}

describe("parseConfig: valid configs", () => {
  it("parses the shipped warrant.config.json", () => {
    const config = parseConfig(SHIPPED_TEXT);
    expect(Object.keys(config.servers)).toEqual(["notes", "schedule", "calendar", "caseops"]);
    expect(Object.keys(config.tools).sort()).toEqual([
      "calculate_schedule",
      "create_study_event",
      "export_events_ics",
      "get_case_snapshot",
      "get_policy_requirements",
      "get_write_status",
      "list_events",
      "list_unclassified_documents",
      "read_note",
      "resolve_document_alias",
      "search_notes",
    ]);
    expect(config.tools["read_note"]).toMatchObject({
      server: "notes",
      risk: "read",
      scopes: ["notes:read"],
      injected: { user_id: "principal.user_id" },
      resource: { argument: "note_id", pattern: "^([a-z0-9]+)\\.", principal_field: "courses" },
      max_string_chars: 100,
      output: { max_items: 1, max_chars: 4000 },
    });
    expect(config.selection).toEqual({ max_tools: 8 });
  });

  it("fills contract defaults", () => {
    const config = parseConfig(configText());
    expect(config.tools["read_note"]).toEqual({
      server: "notes",
      risk: "read",
      version: "1",
      scopes: [],
      stages: ["any"],
      timeout_ms: 10_000,
      max_attempts: 1,
      run_bound: {},
      injected: {},
      max_string_chars: 2_000,
      output: { max_items: 10, max_chars: 8_000 },
      always_available: false,
      approval_ttl_ms: 900_000,
    });
    expect(config.servers["notes"]).toEqual({
      transport: "stdio",
      command: "node",
      args: ["server.js"],
      env: {},
      optional: false,
      reconnect: { base_ms: 200, max_ms: 10_000 },
    });
  });

  it("takes a write's task opt-in and refuses it on a read tool", () => {
    const write = parseConfig(
      configText(({ contract }) => Object.assign(contract, { risk: "write_reversible", task: true })),
    );
    expect(write.tools["read_note"]?.task).toBe(true);
    expect(invalid(configText(({ contract }) => Object.assign(contract, { task: true })))).toContain(
      "tools.read_note.task is only for write tools",
    );
  });

  it("accepts an http server", () => {
    const config = parseConfig(
      configText(
        ({ servers }) =>
          (servers["notes"] = { transport: "http", url: "http://127.0.0.1:7000/mcp", audience: "notes" }),
      ),
    );
    expect(config.servers["notes"]).toEqual({
      transport: "http",
      url: "http://127.0.0.1:7000/mcp",
      audience: "notes",
      optional: false,
      reconnect: { base_ms: 200, max_ms: 10_000 },
    });
  });
});

describe("parseConfig: invalid configs", () => {
  it("refuses malformed JSON", () => {
    expect(invalid('{"servers": {')).toContain("not valid JSON");
  });

  it("refuses an unknown top-level key, naming it", () => {
    const message = invalid(configText(({ config }) => (config["extras"] = true)));
    expect(message).toContain("(root)");
    expect(message).toContain('"extras"');
  });

  it("refuses an unknown contract key, naming the contract and the key", () => {
    const message = invalid(configText(({ contract }) => (contract["allow_all"] = true)));
    expect(message).toContain("tools.read_note");
    expect(message).toContain('"allow_all"');
  });

  it("refuses a contract naming an unknown server", () => {
    expect(invalid(configText(({ contract }) => (contract["server"] = "calendar")))).toBe(
      'test.json: tools.read_note.server names unknown server "calendar"',
    );
  });

  it("refuses a bad risk", () => {
    expect(invalid(configText(({ contract }) => (contract["risk"] = "write")))).toContain("tools.read_note.risk");
  });

  it("refuses a negative timeout", () => {
    expect(invalid(configText(({ contract }) => (contract["timeout_ms"] = -1)))).toContain(
      "tools.read_note.timeout_ms",
    );
  });

  it("refuses an invalid resource regex", () => {
    const message = invalid(
      configText(
        ({ contract }) =>
          (contract["resource"] = { argument: "note_id", pattern: "^([a-z", principal_field: "courses" }),
      ),
    );
    expect(message).toBe("test.json: tools.read_note.resource.pattern is not a valid regular expression");
  });

  it.each([
    ["a missing servers key", ({ config }: Draft) => delete config["servers"], "servers"],
    ["an unknown transport", ({ server }: Draft) => (server["transport"] = "ws"), "servers.notes.transport"],
    ["an unknown server key", ({ server }: Draft) => (server["shell"] = true), "servers.notes"],
    ["a bad tool name", ({ tools }: Draft) => (tools["read note"] = { server: "notes", risk: "read" }), "tools"],
    ["max_attempts above 5", ({ contract }: Draft) => (contract["max_attempts"] = 6), "tools.read_note.max_attempts"],
    [
      "an unknown injection source",
      ({ contract }: Draft) => (contract["injected"] = { user_id: "request.user" }),
      "tools.read_note.injected.user_id",
    ],
    [
      "an unknown output key",
      ({ contract }: Draft) => (contract["output"] = { max_items: 2, max_bytes: 9 }),
      "tools.read_note.output",
    ],
    ["max_tools of 0", ({ config }: Draft) => (config["selection"] = { max_tools: 0 }), "selection.max_tools"],
  ])("refuses %s, naming the path", (_label, patch, where) => {
    expect(invalid(configText(patch))).toContain(`test.json: ${where}`);
  });

  it("refuses a top-level array", () => {
    expect(invalid("[]")).toContain("(root)");
  });
});
