/**
 * The sharp edges of `@langchain/mcp-adapters` that DESIGN lists, measured
 * against our real servers (notes over stdio, caseops over Streamable HTTP in
 * this process) and set beside what our host does instead. Pinned to what
 * 1.1.4 (with @langchain/core 1.4.0 and the MCP SDK 1.32.2) really does, so
 * an upgrade that changes any of it fails here and the workaround in
 * src/mcp can be revisited.
 *
 * What 1.1.4 does, in short:
 * 1. Extra arguments: an extra key in the tool's own input is refused by
 *    @langchain/core's JSON-schema check (ToolInputParsingException), but only
 *    because our servers declare `additionalProperties: false`; core passes the
 *    input on unstripped, and keys a `beforeToolCall` hook adds skip the check
 *    altogether and reach the server.
 * 2. Validation details: a client-side schema failure says only "did not match
 *    expected schema"; a server-side one arrives as prose in a ToolException
 *    with no code to branch on.
 * 3. structuredContent: the ToolMessage content is a JSON string holding the
 *    payload twice (escaped text and structuredContent), and it is attached a
 *    third time as an `mcp_structured_content` artifact.
 * 4. Headers: `beforeToolCall` headers open a new MCP session on every call
 *    (even a repeated header set); `getTools(…, { headers })` opens one per
 *    distinct header set, which with per-call task tokens is one per call.
 *    `close()` ends none of them on the server.
 */
import { randomBytes } from "node:crypto";
import { ToolMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal.js";
import { mintTaskToken } from "../../src/auth/task-token.js";
import { REPO_ROOT } from "../../src/env.js";
import type { CatalogTool } from "../../src/policy/contracts.js";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import { loadConfig, parseConfig, type WarrantConfig } from "../../src/policy/config.js";
import { validateArguments } from "../../src/policy/validation.js";
import { countingCaseops } from "./support/caseops.js";
import { principal, settings } from "./support/agent.js";

const SECRET = new Uint8Array(randomBytes(32));
const NOTE_ID = "cs301.self-attention";
const CALL_TIMEOUT_MS = 10_000;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A record the test put into `configurable` for the adapter's hook; anything else is none. */
function configured(config: RunnableConfig, key: string): Record<string, string> | undefined {
  const value: unknown = config.configurable?.[key];
  return isRecord(value)
    ? Object.fromEntries(Object.entries(value).map(([name, item]) => [name, String(item)]))
    : undefined;
}

function occurrences(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/** Runs `work` and returns what it threw; fails the test if it did not throw. */
async function thrown(work: () => Promise<unknown>): Promise<Error> {
  try {
    await work();
  } catch (error) {
    if (error instanceof Error) return error;
    throw new Error(`threw a non-Error: ${String(error)}`);
  }
  throw new Error("expected the call to fail, but it succeeded");
}

function adapterTool(tools: StructuredToolInterface[], name: string): StructuredToolInterface {
  const found = tools.find((tool) => tool.name === name);
  if (!found) throw new Error(`the adapter listed no ${name}`);
  return found;
}

function catalogTool(host: ToolHost, name: string): CatalogTool {
  const found = host.catalog().find((tool) => tool.name === name);
  if (!found) throw new Error(`${name} is not in the catalog`);
  return found;
}

/** The shipped config narrowed to some servers, with caseops (if kept) pointed at `caseopsUrl`. */
async function configFor(servers: string[], caseopsUrl?: string): Promise<WarrantConfig> {
  const shipped = await loadConfig(settings.configPath);
  const kept = Object.fromEntries(
    servers.map((name) => [
      name,
      name === "caseops" ? { transport: "http", url: caseopsUrl, audience: "caseops" } : shipped.servers[name],
    ]),
  );
  const contracts = Object.fromEntries(
    Object.entries(shipped.tools).filter(([, contract]) => servers.includes(contract.server)),
  );
  return parseConfig(JSON.stringify({ servers: kept, tools: contracts }), "adapter edges config");
}

// ---------------------------------------------------------------------------
// Edges 1–3: the notes server over stdio, through the adapter and our host
// ---------------------------------------------------------------------------

describe("notes over stdio: the adapter beside our host", () => {
  let adapter: MultiServerMCPClient;
  let adapterTools: StructuredToolInterface[];
  let host: ToolHost;
  let alice: Principal;
  /** How often the adapter reached its `beforeToolCall` hook, i.e. got past @langchain/core's input check. */
  let hookCalls = 0;

  beforeAll(async () => {
    const config = await configFor(["notes"]);
    const notes = config.servers["notes"];
    if (notes?.transport !== "stdio") throw new Error("the shipped notes server is not stdio");
    adapter = new MultiServerMCPClient({
      mcpServers: {
        notes: { transport: "stdio", command: process.execPath, args: notes.args, cwd: REPO_ROOT, stderr: "ignore" },
      },
      // The adapter's way to inject arguments (as we inject user_id): whatever the hook returns is merged into the call.
      beforeToolCall: (_request, _state, runConfig) => {
        hookCalls += 1;
        const args = configured(runConfig, "hookArguments");
        return args ? { args } : undefined;
      },
    });
    adapterTools = await adapter.getTools();
    host = await connectTools(config);
    alice = await principal("alice");
  }, 60_000);

  afterAll(async () => {
    await adapter?.close();
    await host?.close();
  });

  const callOptions = (threadId: string) => ({ timeoutMs: CALL_TIMEOUT_MS, principal: alice, threadId });

  describe("edge 1: unknown arguments", () => {
    it(
      "adapter edge (not reproducible as stated in 1.1.4): an extra key in the tool input is refused client-side, " +
        "only because the server's schema forbids extras / our host: invalid_arguments naming the key",
      async () => {
        const readNote = adapterTool(adapterTools, "read_note");
        // @langchain/core validates JSON-schema tools with @cfworker/json-schema and then passes the input on
        // unstripped; what stops the key here is the server's own `additionalProperties: false`.
        expect(readNote.schema).toMatchObject({ additionalProperties: false });
        const before = hookCalls;
        const error = await thrown(() => readNote.invoke({ user_id: "alice", note_id: NOTE_ID, extra_key: "x" }));
        // core's exception keeps the name "Error"; its class name is what tells it from the adapter's ToolException.
        expect(error.constructor.name).toBe("ToolInputParsingException");
        // The hook runs inside the adapter's call path, before callTool: not reached, so nothing was sent.
        expect(hookCalls).toBe(before);

        const ours = validateArguments(
          catalogTool(host, "read_note"),
          JSON.stringify({ note_id: NOTE_ID, extra_key: "x" }),
        );
        expect(ours).toEqual({ ok: false, code: "invalid_arguments", message: 'unknown argument "extra_key"' });
      },
    );

    it(
      "adapter edge: a key added by beforeToolCall skips validation and reaches the server " +
        "/ our host: refused before any call",
      async () => {
        const readNote = adapterTool(adapterTools, "read_note");
        const before = hookCalls;
        const error = await thrown(() =>
          readNote.invoke(
            { user_id: "alice", note_id: NOTE_ID },
            { configurable: { hookArguments: { extra_key: "x" } } },
          ),
        );
        expect(hookCalls).toBe(before + 1);
        expect(error.name).toBe("ToolException");
        // The server names the key in its refusal: it received it.
        expect(error.message).toContain('Unrecognized key: "extra_key"');

        // Our host never merges anything unvalidated: injected fields are contract-bound, and the model's
        // arguments go through the strict validator (no unknown keys) before a call is planned.
        const ours = validateArguments(
          catalogTool(host, "read_note"),
          JSON.stringify({ note_id: NOTE_ID, extra_key: "x" }),
        );
        expect(ours).toMatchObject({ ok: false, code: "invalid_arguments" });
      },
    );
  });

  describe("edge 2: validation details", () => {
    it(
      "adapter edge: a schema violation caught client-side says only 'did not match expected schema' " +
        "/ our host: invalid_arguments naming the field",
      async () => {
        const readNote = adapterTool(adapterTools, "read_note");
        const error = await thrown(() => readNote.invoke({ user_id: "alice", note_id: "NOT VALID" }));
        expect(error.constructor.name).toBe("ToolInputParsingException");
        // verboseParsingErrors is off by default: which field failed, and why, is gone.
        expect(error.message).toBe("Received tool input did not match expected schema");
        expect(error.message).not.toContain("note_id");

        const ours = validateArguments(catalogTool(host, "read_note"), JSON.stringify({ note_id: "NOT VALID" }));
        expect(ours.ok).toBe(false);
        if (ours.ok) return;
        expect(ours.code).toBe("invalid_arguments");
        expect(ours.message).toContain('"note_id"');
      },
    );

    it(
      "adapter edge: the server's validation error arrives as prose in a ToolException with no code " +
        "/ our host: typed invalid_arguments",
      async () => {
        const readNote = adapterTool(adapterTools, "read_note");
        // The hook replaces a valid note_id after the client-side check, so the server's validator answers.
        const error = await thrown(() =>
          readNote.invoke(
            { user_id: "alice", note_id: NOTE_ID },
            { configurable: { hookArguments: { note_id: "NOT VALID" } } },
          ),
        );
        expect(error.name).toBe("ToolException");
        // The JSON-RPC code survives only inside the text; there is nothing typed to branch on.
        expect(error.message).toContain("MCP error -32602: Input validation error");
        expect(Object.hasOwn(error, "code")).toBe(false);
        expect(error.cause).toBeUndefined();

        // SDK 1.32 servers return validation failures as isError results (not thrown -32602), so our host
        // types them in normalizeResult; a thrown one would go through classifyCallFailure to the same code.
        const ours = await host.call(
          catalogTool(host, "read_note"),
          { user_id: "alice", note_id: "NOT VALID" },
          callOptions("edge-2"),
        );
        expect(ours).toEqual({ ok: false, code: "invalid_arguments", message: "the server rejected the arguments" });
      },
    );
  });

  describe("edge 3: structuredContent", () => {
    it(
      "adapter edge: structuredContent is encoded twice in the ToolMessage and attached again as an artifact " +
        "/ our host: used once",
      async () => {
        const args = { user_id: "alice", query: "attention", limit: 2 };
        const message: unknown = await adapterTool(adapterTools, "search_notes").invoke({
          type: "tool_call",
          id: "call-edge-3",
          name: "search_notes",
          args,
        });
        if (!ToolMessage.isInstance(message))
          throw new Error("the adapter did not answer a tool call with a ToolMessage");
        // The content is a string: the adapter's text block, with structuredContent riding along, JSON-encoded again.
        expect(typeof message.content).toBe("string");
        const content = String(message.content);
        const block: unknown = JSON.parse(content);
        if (!isRecord(block) || typeof block["text"] !== "string") throw new Error("unexpected adapter content block");
        const payload = block["structuredContent"];
        if (!isRecord(payload) || !Array.isArray(payload["hits"]))
          throw new Error("the adapter block carries no structuredContent");
        const firstHit: unknown = payload["hits"][0];
        if (!isRecord(firstHit) || typeof firstHit["note_id"] !== "string") throw new Error("no hit to look for");
        // Once as escaped JSON text, once as the structured object: the model reads the payload twice.
        expect(JSON.parse(block["text"])).toEqual(payload);
        expect(occurrences(content, firstHit["note_id"])).toBe(2);
        expect(content.length).toBeGreaterThan(2 * JSON.stringify(payload).length);
        // …and a third copy as an artifact.
        expect(message.artifact).toContainEqual({ type: "mcp_structured_content", data: payload });

        const ours = await host.call(catalogTool(host, "search_notes"), args, callOptions("edge-3"));
        if (!ours.ok) throw new Error(`our host failed: ${ours.code}`);
        expect(ours.structured).toEqual(payload);
        // The text the model sees is the structured content, encoded once; the server's duplicate text block is dropped.
        expect(ours.text).toBe(JSON.stringify(ours.structured));
        expect(occurrences(ours.text, firstHit["note_id"])).toBe(1);
      },
    );
  });
});

// ---------------------------------------------------------------------------
// Edge 4: connections per header set, counted on the caseops server
// ---------------------------------------------------------------------------

describe("edge 4: caseops over Streamable HTTP, sessions counted on the server", () => {
  /** Three calls each for two tenants, each with a freshly minted task token, as our host makes them. */
  const CALLS = [
    { tenant: "acme", user: "dana", case_id: "C-102" },
    { tenant: "globex", user: "gil", case_id: "C-201" },
    { tenant: "acme", user: "dana", case_id: "C-102" },
    { tenant: "globex", user: "gil", case_id: "C-201" },
    { tenant: "acme", user: "dana", case_id: "C-102" },
    { tenant: "globex", user: "gil", case_id: "C-201" },
  ];

  /** A caseops server of the test's own, and the tenant of every session it opened, in order. */
  const countingCaseopsServer = () => countingCaseops(SECRET);

  const bearer = async (tenant: string, subject: string, task: string): Promise<Record<string, string>> => {
    const claims = { audience: "caseops", tenant, subject, task, scopes: ["cases:read"] };
    return { authorization: `Bearer ${await mintTaskToken(SECRET, claims, { ttlSeconds: 120 })}` };
  };

  /** The tenant a caseops snapshot answered for, from the adapter's content block. */
  function snapshotTenant(result: unknown): unknown {
    return isRecord(result) && isRecord(result["structuredContent"])
      ? result["structuredContent"]["tenant"]
      : undefined;
  }

  it(
    "adapter edge: headers from beforeToolCall open a new MCP session on every call, " +
      "even for a repeated header set, and close() ends none",
    async () => {
      const { server, opened } = await countingCaseopsServer();
      const adapter = new MultiServerMCPClient({
        mcpServers: {
          caseops: {
            transport: "http",
            url: server.url,
            headers: await bearer("warrant-host", "warrant-host", "catalog"),
            automaticSSEFallback: false,
          },
        },
        // The adapter's per-request headers: each call's token, handed over in the run config.
        beforeToolCall: (_request, _state, runConfig) => {
          const headers = configured(runConfig, "headers");
          return headers ? { headers } : undefined;
        },
      });
      try {
        const snapshot = adapterTool(await adapter.getTools(), "get_case_snapshot");
        expect(opened).toEqual(["warrant-host"]);
        for (const [index, call] of CALLS.entries()) {
          const headers = await bearer(call.tenant, call.user, `adapter-task-${index}`);
          expect(snapshotTenant(await snapshot.invoke({ case_id: call.case_id }, { configurable: { headers } }))).toBe(
            call.tenant,
          );
        }
        // One session for the listing plus one per call (client.fork() on every call).
        expect(opened).toEqual(["warrant-host", ...CALLS.map((call) => call.tenant)]);

        // The same header set twice still forks twice: it is not even one connection per distinct set.
        const repeated = await bearer("acme", "dana", "adapter-repeated");
        await snapshot.invoke({ case_id: "C-102" }, { configurable: { headers: repeated } });
        await snapshot.invoke({ case_id: "C-102" }, { configurable: { headers: repeated } });
        expect(opened).toHaveLength(1 + CALLS.length + 2);

        await adapter.close();
        // close() closes the transports but never DELETEs a session: all of them stay open on the server.
        expect(server.stats().sessions).toBe(1 + CALLS.length + 2);
      } finally {
        await adapter.close();
        await server.close();
      }
    },
  );

  it(
    "adapter edge: getTools(servers, { headers }) opens one session per distinct header set, " +
      "so one per call with per-call tokens",
    async () => {
      const { server, opened } = await countingCaseopsServer();
      // No connection-level headers: the adapter lets those override the per-call ones.
      const adapter = new MultiServerMCPClient({
        mcpServers: { caseops: { transport: "http", url: server.url, automaticSSEFallback: false } },
      });
      try {
        for (const [index, call] of CALLS.entries()) {
          const headers = await bearer(call.tenant, call.user, `adapter-task-${index}`);
          const snapshot = adapterTool(await adapter.getTools(["caseops"], { headers }), "get_case_snapshot");
          expect(snapshotTenant(await snapshot.invoke({ case_id: call.case_id }))).toBe(call.tenant);
        }
        expect(opened).toEqual(CALLS.map((call) => call.tenant));

        // A header set seen before reuses its connection: the pool is keyed by the serialized headers.
        const repeated = await bearer("acme", "dana", "adapter-repeated");
        await adapter.getTools(["caseops"], { headers: repeated });
        await adapter.getTools(["caseops"], { headers: repeated });
        expect(opened).toHaveLength(CALLS.length + 1);

        await adapter.close();
        expect(server.stats().sessions).toBe(CALLS.length + 1);
      } finally {
        await adapter.close();
        await server.close();
      }
    },
  );

  it("our host: the same calls with fresh tokens use one session per tenant, ended on close", async () => {
    const { server, opened } = await countingCaseopsServer();
    const host = await connectTools(await configFor(["caseops"], server.url), { secret: SECRET, ttlSeconds: 120 });
    try {
      const snapshot = catalogTool(host, "get_case_snapshot");
      for (const [index, call] of CALLS.entries()) {
        const result = await host.call(
          snapshot,
          { case_id: call.case_id },
          { timeoutMs: CALL_TIMEOUT_MS, principal: await principal(call.user), threadId: `host-task-${index}` },
        );
        if (!result.ok) throw new Error(`our host failed: ${result.code}`);
        expect(isRecord(result.structured) ? result.structured["tenant"] : undefined).toBe(call.tenant);
      }
      // The listing's host session (ended at once), then one per tenant for every call.
      expect(opened).toEqual(["warrant-host", "acme", "globex"]);
      expect(server.stats().sessions).toBe(2);

      await host.close();
      expect(server.stats().sessions).toBe(0);
    } finally {
      await host.close();
      await server.close();
    }
  });
});
