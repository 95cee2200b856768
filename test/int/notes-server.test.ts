/**
 * End-to-end tests of the notes MCP server: each test talks to a real child
 * process over stdio through the SDK client, exactly as a host would.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Finished, outputOf } from "../support/child-output.js";
import { textOf } from "../support/mcp.js";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const SERVER_ARGS = ["--import", "tsx", path.join("tools", "notes", "server.ts")];
const ACCESS_DENIED_TEXT = '{"code":"access_denied","message":"note not found or not accessible"}';

// Spawning node with the tsx loader takes a second or two on a cold cache.
const SPAWN_TIMEOUT_MS = 30_000;

/** Runs the server to completion with extra arguments and environment (for --help and start-up failures). */
function runServer(args: readonly string[], environment: Record<string, string> = {}): Promise<Finished> {
  return outputOf(
    spawn(process.execPath, [...SERVER_ARGS, ...args], {
      cwd: REPO_ROOT,
      env: { ...getDefaultEnvironment(), ...environment },
      stdio: ["ignore", "pipe", "pipe"],
    }),
  );
}

/** Connects an MCP client to a fresh server process. */
async function connect(environment: Record<string, string> = {}): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: SERVER_ARGS,
    cwd: REPO_ROOT,
    env: { ...getDefaultEnvironment(), ...environment },
    stderr: "pipe",
  });
  const client = new Client({ name: "notes-server-test", version: "0.0.0" });
  await client.connect(transport);
  return client;
}

/** Calls a tool and normalizes the result type (the SDK's union also covers legacy task results). */
async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

interface Hit {
  note_id: string;
  course: string;
  score: number;
  snippet: string;
}

function hitsOf(result: CallToolResult): Hit[] {
  const structured = result.structuredContent as { hits: Hit[] } | undefined;
  if (structured === undefined) throw new Error("expected structured content");
  return structured.hits;
}

describe("notes server over stdio", () => {
  let client: Client;

  beforeAll(async () => {
    client = await connect();
    // listTools also primes the client's output-schema validators for callTool.
    await client.listTools();
  }, SPAWN_TIMEOUT_MS);

  afterAll(async () => {
    await client.close();
  });

  it("lists both tools with strict input schemas, output schemas and read-only annotations", async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect([...byName.keys()].sort()).toEqual(["read_note", "search_notes"]);

    const search = byName.get("search_notes");
    expect(search?.inputSchema.properties).toHaveProperty("user_id");
    expect(search?.inputSchema.properties).toHaveProperty("query");
    expect(search?.inputSchema.properties).toHaveProperty("limit");
    expect(search?.inputSchema.properties).toHaveProperty("course");
    expect(search?.inputSchema.required).toEqual(expect.arrayContaining(["user_id", "query"]));
    expect(search?.inputSchema.required).not.toContain("limit");
    expect(search?.inputSchema["additionalProperties"]).toBe(false);
    expect(search?.outputSchema?.properties).toHaveProperty("hits");
    expect(search?.outputSchema?.properties).toHaveProperty("total");
    expect(search?.annotations?.readOnlyHint).toBe(true);

    const read = byName.get("read_note");
    expect(read?.inputSchema.required).toEqual(expect.arrayContaining(["user_id", "note_id"]));
    expect(read?.inputSchema["additionalProperties"]).toBe(false);
    expect(read?.annotations?.readOnlyHint).toBe(true);
  });

  it("searches as alice: cs301 only, attention notes first, text mirrors structured content", async () => {
    const result = await call(client, "search_notes", {
      user_id: "alice",
      query: "compare self-attention with cross-attention",
    });
    expect(result.isError).toBeFalsy();
    const hits = hitsOf(result);
    expect(hits).toHaveLength(5);
    expect(hits.every((hit) => hit.course === "cs301")).toBe(true);
    expect(hits[0]?.note_id).toMatch(/attention/);
    expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
    const total = (result.structuredContent as { total: number }).total;
    expect(total).toBeGreaterThanOrEqual(5);
  });

  it("returns no hits to bob for the attention query, nor for a course he is not enrolled in", async () => {
    const attention = await call(client, "search_notes", {
      user_id: "bob",
      query: "compare self-attention with cross-attention",
    });
    expect(attention.structuredContent).toEqual({ hits: [], total: 0 });
    const otherCourse = await call(client, "search_notes", {
      user_id: "bob",
      query: "gradient descent",
      course: "cs301",
    });
    const noCourse = await call(client, "search_notes", { user_id: "bob", query: "gradient descent", course: "zz999" });
    expect(otherCourse).toEqual(noCourse);
    expect(otherCourse.isError).toBeFalsy();
  });

  it("returns no hits to an unknown user", async () => {
    const result = await call(client, "search_notes", { user_id: "mallory", query: "attention", limit: 20 });
    expect(result.structuredContent).toEqual({ hits: [], total: 0 });
  });

  it("reads a visible note with the corpus version", async () => {
    const result = await call(client, "read_note", { user_id: "alice", note_id: "cs301.self-attention" });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ note_id: "cs301.self-attention", course: "cs301", version: 1 });
    expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
  });

  it("gives bob the same access_denied for a cs301 note as for a nonexistent note", async () => {
    const forbidden = await call(client, "read_note", { user_id: "bob", note_id: "cs301.self-attention" });
    const missing = await call(client, "read_note", { user_id: "bob", note_id: "cs301.no-such-note" });
    expect(forbidden.isError).toBe(true);
    expect(textOf(forbidden)).toBe(ACCESS_DENIED_TEXT);
    expect(forbidden.structuredContent).toBeUndefined();
    expect(JSON.stringify(missing)).toBe(JSON.stringify(forbidden));
  });

  it("denies an unreleased note to alice but lets sam read it", async () => {
    const denied = await call(client, "read_note", { user_id: "alice", note_id: "cs301.exam-2-solutions" });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toBe(ACCESS_DENIED_TEXT);
    const allowed = await call(client, "read_note", { user_id: "sam", note_id: "cs301.exam-2-solutions" });
    expect(allowed.isError).toBeFalsy();
    expect(allowed.structuredContent).toMatchObject({ note_id: "cs301.exam-2-solutions", version: 1 });
  });

  it.each([
    ["an extra argument", { user_id: "alice", query: "attention", extra: "x" }],
    ["a boolean limit", { user_id: "alice", query: "attention", limit: true }],
    ["an over-long query", { user_id: "alice", query: "a".repeat(501) }],
    ["a missing user_id", { query: "attention" }],
  ])("rejects %s with an error result and no hits", async (_label, args) => {
    // The SDK turns input-validation failures into a tool error result rather than a thrown protocol error.
    const result = await call(client, "search_notes", args);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(textOf(result)).toMatch(/validation/i);
  });

  it("rejects a malformed note id before any lookup", async () => {
    const result = await call(client, "read_note", { user_id: "alice", note_id: "../../etc/passwd" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/validation/i);
  });
});

describe("notes server process switches", () => {
  it(
    "prints usage and exits 0 for --help",
    async () => {
      const outcome = await runServer(["--help"]);
      expect(outcome.code).toBe(0);
      expect(outcome.stdout).toMatch(/Usage:/);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    "exits 1 with one stderr line when WARRANT_NOTES_FAIL_START=1",
    async () => {
      const outcome = await runServer([], { WARRANT_NOTES_FAIL_START: "1" });
      expect(outcome.code).toBe(1);
      expect(outcome.stdout).toBe("");
      expect(outcome.stderr.trim().split("\n")).toHaveLength(1);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    "exits 1 when the corpus file cannot be loaded",
    async () => {
      const outcome = await runServer(["--data", "tools/notes/data/does-not-exist.json"]);
      expect(outcome.code).toBe(1);
      expect(outcome.stdout).toBe("");
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    "delays read_note by WARRANT_NOTES_DELAY_MS",
    async () => {
      const slow = await connect({ WARRANT_NOTES_DELAY_MS: "400" });
      try {
        const started = performance.now();
        const result = await call(slow, "read_note", { user_id: "alice", note_id: "cs301.bm25" });
        expect(performance.now() - started).toBeGreaterThanOrEqual(390);
        expect(result.isError).toBeFalsy();
      } finally {
        await slow.close();
      }
    },
    SPAWN_TIMEOUT_MS,
  );
});
