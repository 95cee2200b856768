/**
 * Connects the configured MCP servers through `@langchain/mcp-adapters`,
 * builds the catalog of contracted tools, and calls them. Calls go through the
 * adapter's underlying MCP client so that we see the raw result
 * (`structuredContent`, `isError`) and can validate arguments ourselves; the
 * adapter's own tool wrappers pass extra arguments through and double-encode
 * structured content.
 */
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { childEnvironment, REPO_ROOT } from "../env.js";
import { randomBytes } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Principal } from "../auth/principal.js";
import { mintTaskToken } from "../auth/task-token.js";
import { ConfigError, type ToolErrorCode } from "../errors.js";
import { connectHttp, launchHttpServer, withTaskToken, type LaunchedServer } from "./http-session.js";
import type { ServerConfig, WarrantConfig } from "../policy/config.js";
import { buildCatalog, type CatalogTool, type ListedTool } from "./catalog.js";
import { normalizeResult, type NormalizedResult } from "./normalize.js";

export interface CallOptions {
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Who the call is for: task tokens for HTTP servers are minted from it. */
  principal: Principal;
  threadId: string;
}

/** The tools side of the host: catalog, health, calls. */
export interface ToolHost {
  catalog(): CatalogTool[];
  /** Above this many eligible tools, only the most relevant are offered. */
  readonly maxTools: number;
  /** Whether a server is currently usable. */
  isHealthy(server: string): boolean;
  /** Whether any connected server lists a tool by this name (contracted or not). */
  isListed(name: string): boolean;
  call(tool: CatalogTool, args: Record<string, unknown>, options: CallOptions): Promise<NormalizedResult>;
  close(): Promise<void>;
}

type AdapterConnection = ConstructorParameters<typeof MultiServerMCPClient>[0] extends infer C
  ? C extends { mcpServers: Record<string, infer S> }
    ? S
    : never
  : never;

function toConnection(server: Extract<ServerConfig, { transport: "stdio" }>): AdapterConnection {
  {
    return {
      transport: "stdio",
      // "node" means the Node running us, so child servers never depend on PATH.
      command: server.command === "node" ? process.execPath : server.command,
      args: server.args,
      env: childEnvironment(server.env),
      cwd: server.cwd ?? REPO_ROOT,
      stderr: "inherit",
    } as AdapterConnection;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Maps a thrown call failure onto our error classes. */
export function classifyCallFailure(error: unknown): { code: ToolErrorCode; message: string } {
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout) return { code: "tool_timeout", message: "the tool did not answer in time" };
    if (error.code === ErrorCode.InvalidParams) return { code: "invalid_arguments", message: "the server rejected the arguments" };
    if (error.code === ErrorCode.ConnectionClosed) return { code: "server_unavailable", message: "the server connection closed" };
    return { code: "protocol_error", message: `MCP error ${error.code}` };
  }
  const name = isRecord(error) ? error["name"] : undefined;
  if (name === "AbortError" || name === "TimeoutError") return { code: "tool_timeout", message: "the tool did not answer in time" };
  return { code: "server_unavailable", message: "the server could not be reached" };
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

interface HttpServer {
  name: string;
  url: string;
  audience: string;
  launched: LaunchedServer | undefined;
  /** One session per tenant: the server binds a session to the tenant that opened it. */
  sessions: Map<string, Promise<Client>>;
}

/**
 * Starts every configured server and lists its tools. A server that fails
 * to start is a `ConfigError("mcp_start_failed")` naming it.
 */
export async function connectTools(config: WarrantConfig, tokens: TokenSettings = ephemeralTokenSettings()): Promise<ToolHost> {
  const stdioServers: Record<string, AdapterConnection> = {};
  for (const [name, server] of Object.entries(config.servers)) if (server.transport === "stdio") stdioServers[name] = toConnection(server);
  const client = new MultiServerMCPClient({ mcpServers: stdioServers, onConnectionError: "throw", useStandardContentBlocks: true });
  const httpServers = new Map<string, HttpServer>();
  const unhealthy = new Set<string>();
  const listed: Record<string, ListedTool[]> = {};
  const secretHex = Buffer.from(tokens.secret).toString("hex");

  const tokenFor = (server: HttpServer, principal: Pick<Principal, "tenant" | "user_id" | "scopes">, task: string) =>
    mintTaskToken(tokens.secret, { audience: server.audience, tenant: principal.tenant, subject: principal.user_id, task, scopes: principal.scopes }, { ttlSeconds: tokens.ttlSeconds });

  const closeAll = async () => {
    await client.close().catch(() => undefined);
    for (const server of httpServers.values()) {
      for (const [tenant, session] of server.sessions) {
        const token = await tokenFor(server, { tenant, user_id: "warrant-host", scopes: [] }, "shutdown").catch(() => "");
        await withTaskToken(token, () => session.then((open) => open.close())).catch(() => undefined);
      }
      server.launched?.process.kill("SIGTERM");
    }
  };

  try {
    for (const [name, server] of Object.entries(config.servers)) {
      if (server.transport === "stdio") {
        const session = await client.getClient(name);
        if (!session) throw new Error(`server "${name}" did not connect`);
        listed[name] = toListed((await session.listTools()).tools);
        continue;
      }
      const launched = server.launch
        ? await launchHttpServer(server.launch.command, server.launch.args, { ...server.launch.env, WARRANT_TASK_TOKEN_SECRET: secretHex })
        : undefined;
      const entry: HttpServer = { name, url: server.url ?? launched?.url ?? "", audience: server.audience, launched, sessions: new Map() };
      httpServers.set(name, entry);
      // Listing tools needs no tenant data: a host-only token, a short-lived session.
      const catalogToken = await tokenFor(entry, { tenant: "warrant-host", user_id: "warrant-host", scopes: [] }, "catalog");
      const lister = await connectHttp(entry.url, catalogToken);
      listed[name] = await withTaskToken(catalogToken, async () => {
        const tools = toListed((await lister.listTools()).tools);
        await lister.close();
        return tools;
      });
    }
  } catch (error) {
    await closeAll();
    const message = error instanceof Error ? error.message.split("\n", 1)[0] : String(error);
    throw new ConfigError("mcp_start_failed", `an MCP server failed to start: ${message}`);
  }
  const { tools } = buildCatalog(config.tools, listed);
  const listedNames = new Set(Object.values(listed).flatMap((serverTools) => serverTools.map((tool) => tool.name)));

  const httpSession = async (server: HttpServer, options: CallOptions, token: string): Promise<Client> => {
    let session = server.sessions.get(options.principal.tenant);
    if (!session) {
      session = connectHttp(server.url, token);
      server.sessions.set(options.principal.tenant, session);
      session.catch(() => server.sessions.delete(options.principal.tenant));
    }
    return session;
  };

  return {
    catalog: () => tools,
    maxTools: config.selection.max_tools,
    isHealthy: (server) => !unhealthy.has(server),
    isListed: (name) => listedNames.has(name) || tools.some((tool) => tool.name === name),
    async call(tool, args, options) {
      const http = httpServers.get(tool.server);
      try {
        const request = { name: tool.remote_name, arguments: args };
        const requestOptions = { timeout: options.timeoutMs, ...(options.signal ? { signal: options.signal } : {}) };
        let raw: unknown;
        if (http) {
          const token = await tokenFor(http, options.principal, options.threadId);
          const session = await httpSession(http, options, token);
          raw = await withTaskToken(token, () => session.callTool(request, undefined, requestOptions));
        } else {
          const session = await client.getClient(tool.server);
          if (!session) throw new McpError(ErrorCode.ConnectionClosed, "not connected");
          raw = await session.callTool(request, undefined, requestOptions);
        }
        return normalizeResult(raw, tool.contract.output);
      } catch (error) {
        const failure = classifyCallFailure(error);
        if (failure.code === "server_unavailable") unhealthy.add(tool.server);
        return { ok: false, ...failure };
      }
    },
    close: closeAll,
  };
}

function toListed(tools: { name: string; description?: string | undefined; inputSchema: unknown; annotations?: unknown }[]): ListedTool[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema as Record<string, unknown>,
    annotations: tool.annotations as ListedTool["annotations"],
  }));
}
