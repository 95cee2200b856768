/**
 * stdio MCP servers on the 2026-07-28 revision, through the v2 SDK client
 * (`@modelcontextprotocol/client`): no initialize and no session, each
 * request carries the revision and the host's capabilities in its `_meta`,
 * `server/discover` stands for the handshake (and for the liveness probe,
 * `ping` being gone from the revision).
 *
 * An `input_required` answer is fulfilled by the client itself through the
 * same `elicitation/create` handler as a 2025-11-25 server's elicitation
 * (the owner is asked; the call's timeout is paused while they answer), then
 * re-sent with the `inputResponses` under a new request id: to the host it
 * is one `tools/call`, so its ledger row and idempotency key stay the same.
 *
 * v2 failures are re-thrown as the v1 errors failures.ts classifies, so the
 * tool host's typed codes do not depend on the revision.
 */
import { Client, ProtocolError, SdkError, SdkErrorCode, type ListToolsResult } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { ErrorCode, McpError, type ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { childEnvironment, REPO_ROOT } from "../env.js";
import type { ServerConfig } from "../policy/config.js";
import type { ListedTool } from "./catalog.js";
import {
  OPEN_TIMEOUT_MS,
  PROBE_TIMEOUT_MS,
  type ConnectionEvents,
  type McpRequests,
  type RequestOptions,
  type ServerConnection,
} from "./connection.js";
import type { ElicitationHandler } from "../elicitation/client.js";
import { interceptTaskAnswers, taskRequests } from "./tasks.js";

export const MODERN_REVISION = "2026-07-28";
type StdioServer = Extract<ServerConfig, { transport: "stdio" }>;

/** tools/list pages followed at most (as for 2025-11-25 servers). */
const MAX_TOOL_PAGES = 50;

/** True when `error` says the server does not speak the 2026-07-28 revision (it did not answer `server/discover` with it). */
export function isNotModern(error: unknown): boolean {
  return error instanceof SdkError && error.code === SdkErrorCode.EraNegotiationFailed;
}

/** A v2 failure as the v1 error failures.ts classifies (same codes whatever the revision). */
export function asV1Error(error: unknown, signal?: AbortSignal): unknown {
  if (signal?.aborted && signal.reason instanceof Error) return signal.reason;
  if (error instanceof ProtocolError) return new McpError(error.code, error.message, error.data);
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.RequestTimeout) return new McpError(ErrorCode.RequestTimeout, error.message);
    if (error.code === SdkErrorCode.ConnectionClosed || error.code === SdkErrorCode.NotConnected)
      return new McpError(ErrorCode.ConnectionClosed, error.message);
    return new McpError(ErrorCode.InternalError, error.message);
  }
  return error;
}

async function translated<T>(options: RequestOptions, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asV1Error(error, options.signal);
  }
}

/** The host's v2 client, pinned to 2026-07-28, declaring form elicitation when `elicit` answers it. */
function createModernClient(elicit: ElicitationHandler | undefined): Client {
  const info = { name: "warrant-host", version: "0.1.0" };
  const negotiation = { versionNegotiation: { mode: { pin: MODERN_REVISION } } };
  if (!elicit) return new Client(info, negotiation);
  const client = new Client(info, { ...negotiation, capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler("elicitation/create", (request, context) =>
    elicit(client, request.params, context.mcpReq.signal),
  );
  return client;
}

function requestsOf(client: Client): McpRequests {
  return {
    client,
    callTool: (params, options) => translated(options, () => client.callTool(params, options)),
    readResource: (params, options) =>
      translated(options, () => client.readResource(params, { ...options, cacheMode: "bypass" })),
    getPrompt: (params, options) => translated(options, () => client.getPrompt(params, options)),
    tasks: taskRequests(client, (error, options) => asV1Error(error, options.signal)),
  };
}

/** Every tool (following pagination), never from the client's response cache: a pin must see what the server serves now. */
async function listAllTools(client: Client, capabilities: ServerCapabilities): Promise<ListedTool[]> {
  if (!capabilities.tools) return [];
  const tools: ListedTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page += 1) {
    const result: ListToolsResult = await client.listTools(cursor === undefined ? {} : { cursor }, {
      timeout: OPEN_TIMEOUT_MS,
      cacheMode: "bypass",
    });
    for (const tool of result.tools) {
      tools.push({
        name: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema as Record<string, unknown>,
        ...(tool.outputSchema ? { outputSchema: tool.outputSchema as Record<string, unknown> } : {}),
        annotations: tool.annotations as ListedTool["annotations"],
      });
    }
    cursor = result.nextCursor;
    if (cursor === undefined) return tools;
  }
  throw new Error(`tools/list did not end after ${MAX_TOOL_PAGES} pages`);
}

/**
 * The SDK's stdio transport under another name: the SDK probes a subclass in
 * place, where it would spawn a disposable sibling process for the probe of
 * its base class. One process per open, as on 2025-11-25; a server that
 * does not speak 2026-07-28 is stopped and the v1 client starts its own.
 */
class InPlaceStdioTransport extends StdioClientTransport {}

async function retire(client: Client): Promise<void> {
  client.onclose = undefined;
  client.onerror = undefined;
  await client.close().catch(() => undefined);
}

/** A stdio server spoken to on 2026-07-28; `open` rejects with {@link isNotModern} when the server does not speak it. */
export function modernStdioConnection(server: StdioServer, events: ConnectionEvents): ServerConnection {
  let current: Client | undefined;
  let opening: Client | undefined;
  let closed = false;

  const capabilitiesOf = (client: Client): ServerCapabilities => {
    const capabilities = client.getServerCapabilities();
    if (!capabilities) throw new Error("the server did not answer server/discover");
    return capabilities as ServerCapabilities;
  };

  return {
    async open() {
      if (closed) throw new Error("the connection is shut down");
      const previous = current;
      current = undefined;
      if (previous) await retire(previous);
      const transport = new InPlaceStdioTransport({
        command: server.command === "node" ? process.execPath : server.command,
        args: server.args,
        env: childEnvironment(server.env),
        cwd: server.cwd ?? REPO_ROOT,
        stderr: "inherit",
      });
      const client = createModernClient(events.elicit);
      let exited = false;
      client.onclose = () => {
        exited = true;
        if (current === client) {
          current = undefined;
          events.down("the server process exited");
        }
      };
      opening = client;
      try {
        await client.connect(transport, { timeout: OPEN_TIMEOUT_MS });
        interceptTaskAnswers(transport);
        const capabilities = capabilitiesOf(client);
        const tools = await listAllTools(client, capabilities);
        if (exited) throw new Error("the server process exited during start-up");
        if (closed) throw new Error("the connection is shut down");
        current = client;
        const info = client.getServerVersion();
        return { capabilities, info: { name: info?.name ?? "", version: info?.version ?? "" }, tools };
      } catch (error) {
        await retire(client);
        throw error;
      } finally {
        if (opening === client) opening = undefined;
      }
    },
    async session(caller) {
      const client = current;
      return {
        meta: { "warrant/user_id": caller.principal.user_id, "warrant/tenant": caller.principal.tenant },
        run: (work) => {
          if (!client) return Promise.reject(new McpError(ErrorCode.ConnectionClosed, "not connected"));
          return work(requestsOf(client));
        },
      };
    },
    async relist() {
      if (!current) throw new Error("not connected");
      return listAllTools(current, capabilitiesOf(current));
    },
    async probe() {
      if (!current) throw new Error("not connected");
      await current.discover({ timeout: PROBE_TIMEOUT_MS });
    },
    async shutdown() {
      closed = true;
      const clients = [current, opening].filter((client): client is Client => client !== undefined);
      current = undefined;
      opening = undefined;
      await Promise.all(clients.map(retire));
    },
  };
}
