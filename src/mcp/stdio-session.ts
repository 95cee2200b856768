/**
 * stdio MCP servers through the MCP SDK client: one child process per server,
 * shared by every caller. The child's exit closes the transport, which
 * reports the server down at once (not only when a later call fails).
 *
 * Not through `@langchain/mcp-adapters`: its restart option retries at a fixed
 * delay without jitter, reports nothing we could mark health from, and hides
 * the transport; the config still describes stdio servers the same way.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { childEnvironment, REPO_ROOT } from "../env.js";
import type { ServerConfig } from "../policy/config.js";
import {
  listAllTools,
  negotiated,
  OPEN_TIMEOUT_MS,
  PROBE_TIMEOUT_MS,
  serverInfoOf,
  watchToolList,
  type ConnectionEvents,
  type ServerConnection,
  v1Requests,
} from "./connection.js";
import { createHostClient } from "../elicitation/client.js";

type StdioServer = Extract<ServerConfig, { transport: "stdio" }>;

/** Closes a client without letting its close be reported as a crash. */
async function retire(client: Client): Promise<void> {
  client.onclose = undefined;
  client.onerror = undefined;
  await client.close().catch(() => undefined);
}

export function stdioConnection(server: StdioServer, events: ConnectionEvents): ServerConnection {
  let current: Client | undefined;
  /** A client still initializing, so shutdown can stop it too. */
  let opening: Client | undefined;
  let closed = false;

  return {
    async open() {
      if (closed) throw new Error("the connection is shut down");
      const previous = current;
      current = undefined;
      if (previous) await retire(previous);
      const transport = new StdioClientTransport({
        // "node" means the Node running us, so child servers never depend on PATH.
        command: server.command === "node" ? process.execPath : server.command,
        args: server.args,
        env: childEnvironment(server.env),
        cwd: server.cwd ?? REPO_ROOT,
        stderr: "inherit",
      });
      const client = createHostClient(events.elicit);
      let exited = false;
      client.onclose = () => {
        exited = true;
        if (current === client) {
          current = undefined;
          events.down("the server process exited");
        }
      };
      watchToolList(client, {
        ...events,
        // Only the current client's notifications count: one still opening lists its tools itself.
        toolsChanged: () => {
          if (current === client) events.toolsChanged();
        },
      });
      opening = client;
      try {
        await client.connect(transport, { timeout: OPEN_TIMEOUT_MS });
        const capabilities = negotiated(client);
        const tools = await listAllTools(client, capabilities);
        if (exited) throw new Error("the server process exited during start-up");
        if (closed) throw new Error("the connection is shut down");
        current = client;
        return { capabilities, info: serverInfoOf(client), tools };
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
          return work(v1Requests(client));
        },
      };
    },
    async relist() {
      if (!current) throw new Error("not connected");
      return listAllTools(current, negotiated(current));
    },
    async probe() {
      if (!current) throw new Error("not connected");
      await current.ping({ timeout: PROBE_TIMEOUT_MS });
    },
    async shutdown() {
      closed = true;
      const clients = [current, opening].filter((client): client is Client => client !== undefined);
      current = undefined;
      opening = undefined;
      // The SDK ends stdin, then SIGTERM, then SIGKILL: the child never outlives us.
      await Promise.all(clients.map(retire));
    },
  };
}
