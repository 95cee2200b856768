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
import { ConfigError, type ToolErrorCode } from "../errors.js";
import type { ServerConfig, WarrantConfig } from "../policy/config.js";
import { buildCatalog, type CatalogTool, type ListedTool } from "./catalog.js";
import { normalizeResult, type NormalizedResult } from "./normalize.js";

export interface CallOptions {
  timeoutMs: number;
  signal?: AbortSignal;
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

function toConnection(server: ServerConfig): AdapterConnection {
  if (server.transport === "stdio") {
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
  return { transport: "http", url: server.url } as AdapterConnection;
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

/**
 * Starts every configured server and lists its tools. A server that fails
 * to start is a `ConfigError("mcp_start_failed")` naming it.
 */
export async function connectTools(config: WarrantConfig): Promise<ToolHost> {
  const mcpServers: Record<string, AdapterConnection> = {};
  for (const [name, server] of Object.entries(config.servers)) mcpServers[name] = toConnection(server);
  const client = new MultiServerMCPClient({ mcpServers, onConnectionError: "throw", useStandardContentBlocks: true });
  const unhealthy = new Set<string>();
  const listed: Record<string, ListedTool[]> = {};
  try {
    for (const server of Object.keys(config.servers)) {
      const session = await client.getClient(server);
      if (!session) throw new Error(`server "${server}" did not connect`);
      const { tools } = await session.listTools();
      listed[server] = tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema as Record<string, unknown>,
        annotations: tool.annotations as ListedTool["annotations"],
      }));
    }
  } catch (error) {
    await client.close().catch(() => undefined);
    const message = error instanceof Error ? error.message.split("\n", 1)[0] : String(error);
    throw new ConfigError("mcp_start_failed", `an MCP server failed to start: ${message}`);
  }
  const { tools } = buildCatalog(config.tools, listed);
  const listedNames = new Set(Object.values(listed).flatMap((serverTools) => serverTools.map((tool) => tool.name)));

  return {
    catalog: () => tools,
    maxTools: config.selection.max_tools,
    isHealthy: (server) => !unhealthy.has(server),
    isListed: (name) => listedNames.has(name) || tools.some((tool) => tool.name === name),
    async call(tool, args, options) {
      const session = await client.getClient(tool.server).catch(() => undefined);
      if (!session) {
        unhealthy.add(tool.server);
        return { ok: false, code: "server_unavailable", message: `server ${tool.server} is not connected` };
      }
      try {
        const raw = await session.callTool({ name: tool.remote_name, arguments: args }, undefined, {
          timeout: options.timeoutMs,
          ...(options.signal ? { signal: options.signal } : {}),
        });
        return normalizeResult(raw, tool.contract.output);
      } catch (error) {
        const failure = classifyCallFailure(error);
        if (failure.code === "server_unavailable") unhealthy.add(tool.server);
        return { ok: false, ...failure };
      }
    },
    close: () => client.close(),
  };
}
