/**
 * Connects the configured MCP servers (stdio through the MCP SDK client,
 * Streamable HTTP with task tokens), builds the catalog of contracted tools,
 * and calls them. Calls go through the SDK client so that we see the raw
 * result (`structuredContent`, `isError`) and validate arguments ourselves.
 *
 * Each server has a health supervisor (health.ts): a crash is noticed from the
 * transport, the server's tools leave the effective set while it is down, and
 * it is reconnected in the background with backoff, its tools listed again.
 */
import { randomBytes } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { Principal } from "../auth/principal.js";
import { mintTaskToken } from "../auth/task-token.js";
import { ConfigError, type ToolErrorCode } from "../errors.js";
import type { ServerConfig, WarrantConfig } from "../policy/config.js";
import { buildCatalog, type CatalogTool, type ListedTool } from "./catalog.js";
import type { ConnectionEvents, ServerConnection } from "./connection.js";
import { classifyCallFailure, classifyRequestFailure, type Failure } from "./failures.js";
import { reasonOf, supervise, type HealthEvent, type Supervisor } from "./health.js";
import { httpConnection } from "./http-session.js";
import { normalizeResult, type NormalizedResult } from "./normalize.js";
import { normalizePrompt, normalizeResource, type PromptResult } from "./resources.js";
import { stdioConnection } from "./stdio-session.js";
import { withHostValues, type HostValues } from "./host-values.js";

export { classifyCallFailure } from "./failures.js";
export type { PromptResult } from "./resources.js";
export type { HealthEvent } from "./health.js";

export interface CallOptions {
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Who the call is for: task tokens for HTTP servers are minted from it, stdio servers get it in `_meta`. */
  principal: Principal;
  threadId: string;
}

/** The tools side of the host: catalog, health, calls, resources and prompts. */
export interface ToolHost {
  /** Contracted tools of the servers as last listed (a server that is down keeps its last listing). */
  catalog(): CatalogTool[];
  /** Above this many eligible tools, only the most relevant are offered. */
  readonly maxTools: number;
  /** Whether a server is currently usable. */
  isHealthy(server: string): boolean;
  /** Whether any connected server lists a tool by this name (contracted or not). */
  isListed(name: string): boolean;
  call(tool: CatalogTool, args: Record<string, unknown>, options: CallOptions): Promise<NormalizedResult>;
  /**
   * Reads a resource. ok → `text` is the resource's text contents joined by
   * newlines, `structured` the parsed JSON when the (single) content is JSON.
   * Errors: `unknown_tool` for a server not in the config, `tool_not_permitted`
   * when the server did not advertise the resources capability,
   * `server_unavailable` while it is down, `not_found` for an unknown URI,
   * otherwise as for calls.
   */
  readResource(server: string, uri: string, options: CallOptions): Promise<NormalizedResult>;
  /** Gets a prompt; errors as for `readResource` (capability: prompts). */
  getPrompt(server: string, name: string, args: Record<string, string>, options: CallOptions): Promise<PromptResult>;
  close(): Promise<void>;
}

/** Task-token settings: the signing secret shared with HTTP servers we launch. */
export interface TokenSettings {
  secret: Uint8Array;
  ttlSeconds: number;
}

/** Mints a fresh secret when none is configured (it is handed to the servers we launch). */
export function ephemeralTokenSettings(): TokenSettings {
  return { secret: new Uint8Array(randomBytes(32)), ttlSeconds: 120 };
}

export interface ConnectOptions {
  /** Health changes of servers; by default each one is a line on stderr. */
  onHealth?: (event: HealthEvent) => void;
  /** Jitter source for reconnect delays (tests). */
  random?: () => number;
  /** Values for `${NAME}` placeholders in server environments (host-values.ts); unset ones drop their variable. */
  hostValues?: HostValues;
}

/** The default health log: one line per change, never prefixed like a CLI error. */
function logHealth(event: HealthEvent): void {
  const line =
    event.type === "unhealthy"
      ? `server ${event.server} unavailable: ${event.reason}`
      : event.type === "reconnect_failed"
        ? `server ${event.server} reconnect attempt ${event.attempt} failed: ${event.reason}`
        : event.type === "healthy" && event.attempt > 0
          ? `server ${event.server} reconnected after ${event.attempt} attempt(s)`
          : undefined;
  if (line) process.stderr.write(`[warrant mcp] ${line}\n`);
}

interface ServerEntry {
  connection: ServerConnection;
  supervisor: Supervisor;
}

type Failed = { ok: false; code: ToolErrorCode; message: string };

const MAX_URI_CHARS = 2_048;
const MAX_PROMPT_NAME_CHARS = 128;

/**
 * Starts every configured server and lists its tools. A required server that
 * fails to start is a `ConfigError("mcp_start_failed")` naming it; an
 * `optional` one starts unhealthy and is retried in the background.
 */
export async function connectTools(configured: WarrantConfig, tokens: TokenSettings = ephemeralTokenSettings(), options: ConnectOptions = {}): Promise<ToolHost> {
  const config = withHostValues(configured, options.hostValues ?? {});
  const onHealth = options.onHealth ?? logHealth;
  const listed = new Map<string, ListedTool[]>();
  let tools: CatalogTool[] = [];
  const entries = new Map<string, ServerEntry>();
  const secretHex = Buffer.from(tokens.secret).toString("hex");

  const connectionFor = (server: ServerConfig, events: ConnectionEvents): ServerConnection =>
    server.transport === "stdio"
      ? stdioConnection(server, events)
      : httpConnection({
          server,
          mint: (request) =>
            mintTaskToken(
              tokens.secret,
              { audience: server.audience, tenant: request.tenant, subject: request.subject, task: request.task, scopes: [...request.scopes] },
              { ttlSeconds: tokens.ttlSeconds },
            ),
          launchEnvironment: { WARRANT_TASK_TOKEN_SECRET: secretHex },
          events,
        });

  /** What each server advertised when it last connected. */
  const capabilities = new Map<string, ServerCapabilities>();
  for (const [name, server] of Object.entries(config.servers)) {
    let supervisor: Supervisor | undefined;
    const connection = connectionFor(server, {
      down: (reason) => supervisor?.markDown(reason),
      suspect: (reason) => supervisor?.suspect(reason),
    });
    supervisor = supervise({
      server: name,
      policy: server.reconnect,
      connect: async () => {
        const opened = await connection.open();
        capabilities.set(name, opened.capabilities);
        listed.set(name, opened.tools);
        // Null prototype: a server named like an Object.prototype member must not find one.
        const byServer: Record<string, ListedTool[]> = Object.assign(Object.create(null) as Record<string, ListedTool[]>, Object.fromEntries(listed));
        tools = buildCatalog(config.tools, byServer).tools;
      },
      probe: () => connection.probe(),
      onEvent: onHealth,
      ...(options.random ? { random: options.random } : {}),
    });
    entries.set(name, { connection, supervisor });
  }

  let closing: Promise<void> | undefined;
  const closeAll = (): Promise<void> => {
    closing ??= Promise.all(
      [...entries.values()].map(async (entry) => {
        // Shut down first so a reconnect in flight fails fast, wait for it, then once more for anything it opened.
        const stopping = entry.supervisor.close();
        await entry.connection.shutdown().catch(() => undefined);
        await stopping;
        await entry.connection.shutdown().catch(() => undefined);
      }),
    ).then(() => undefined);
    return closing;
  };

  const names = [...entries.keys()];
  const started = await Promise.allSettled(names.map((name) => entries.get(name)?.supervisor.start()));
  const failures: string[] = [];
  started.forEach((outcome, index) => {
    const name = names[index] ?? "";
    if (outcome.status === "fulfilled") return;
    if (config.servers[name]?.optional) entries.get(name)?.supervisor.markDown(`start-up failed: ${reasonOf(outcome.reason)}`);
    else failures.push(`${name}: ${reasonOf(outcome.reason)}`);
  });
  if (failures.length > 0) {
    await closeAll();
    throw new ConfigError("mcp_start_failed", `an MCP server failed to start: ${failures.join("; ")}`);
  }

  const failed = (entry: ServerEntry, failure: Failure): Failed => {
    // The call found the server gone: its tools leave the effective set until it is back.
    if (failure.code === "server_unavailable") entry.supervisor.markDown(failure.message);
    return { ok: false, ...failure };
  };

  /** Sends one request on a caller's session; every failure becomes a typed result. */
  const send = async <R>(
    server: string,
    entry: ServerEntry,
    callOptions: CallOptions,
    work: (client: Client, meta: Record<string, string> | undefined, requestOptions: { timeout: number; signal?: AbortSignal }) => Promise<unknown>,
    normalize: (raw: unknown) => R,
    classify: (error: unknown) => Failure,
  ): Promise<R | Failed> => {
    if (!entry.supervisor.healthy) return { ok: false, code: "server_unavailable", message: `the ${server} server is unavailable; it is being reconnected` };
    const requestOptions = { timeout: callOptions.timeoutMs, ...(callOptions.signal ? { signal: callOptions.signal } : {}) };
    try {
      const session = await entry.connection.session({ principal: callOptions.principal, threadId: callOptions.threadId });
      const raw = await session.run((client) => work(client, session.meta, requestOptions));
      return normalize(raw);
    } catch (error) {
      return failed(entry, classify(error));
    }
  };

  /** The entry of a server that offers `capability`, or why not. */
  const serverFor = (server: string, capability: "resources" | "prompts"): { ok: true; entry: ServerEntry } | Failed => {
    const entry = entries.get(server);
    if (!entry) return { ok: false, code: "unknown_tool", message: "no such server" };
    if (!entry.supervisor.healthy) return { ok: false, code: "server_unavailable", message: `the ${server} server is unavailable; it is being reconnected` };
    if (!capabilities.get(server)?.[capability]) return { ok: false, code: "tool_not_permitted", message: `the ${server} server offers no ${capability}` };
    return { ok: true, entry };
  };

  return {
    catalog: () => tools,
    maxTools: config.selection.max_tools,
    isHealthy: (server) => entries.get(server)?.supervisor.healthy === true,
    isListed: (name) => [...listed.values()].some((serverTools) => serverTools.some((tool) => tool.name === name)) || tools.some((tool) => tool.name === name),
    async call(tool, args, callOptions) {
      const entry = entries.get(tool.server);
      if (!entry) return { ok: false, code: "unknown_tool", message: "no such server" };
      return send(
        tool.server,
        entry,
        callOptions,
        (client, _meta, requestOptions) => client.callTool({ name: tool.remote_name, arguments: args }, undefined, requestOptions),
        (raw) => normalizeResult(raw, tool.contract.output),
        classifyCallFailure,
      );
    },
    async readResource(server, uri, callOptions) {
      if (typeof uri !== "string" || uri.length === 0 || uri.length > MAX_URI_CHARS) return { ok: false, code: "invalid_arguments", message: "the resource URI is empty or too long" };
      const found = serverFor(server, "resources");
      if (!found.ok) return found;
      return send(
        server,
        found.entry,
        callOptions,
        (client, meta, requestOptions) => client.readResource({ uri, ...(meta ? { _meta: meta } : {}) }, requestOptions),
        normalizeResource,
        classifyRequestFailure,
      );
    },
    async getPrompt(server, name, args, callOptions) {
      if (typeof name !== "string" || name.length === 0 || name.length > MAX_PROMPT_NAME_CHARS) return { ok: false, code: "invalid_arguments", message: "the prompt name is empty or too long" };
      if (Object.values(args).some((value) => typeof value !== "string")) return { ok: false, code: "invalid_arguments", message: "prompt arguments must be strings" };
      const found = serverFor(server, "prompts");
      if (!found.ok) return found;
      return send(
        server,
        found.entry,
        callOptions,
        (client, meta, requestOptions) => client.getPrompt({ name, arguments: { ...args }, ...(meta ? { _meta: meta } : {}) }, requestOptions),
        normalizePrompt,
        classifyRequestFailure,
      );
    },
    close: closeAll,
  };
}
