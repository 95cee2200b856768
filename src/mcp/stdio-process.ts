/**
 * What a stdio connection does the same way whichever SDK client speaks to
 * the server (stdio-session.ts for 2025-11-25, modern-session.ts for
 * 2026-07-28): how the child process is started, which client is current,
 * and that the child's exit reports the server down at once.
 */
import { traceparentOf } from "../trace-ids.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { childEnvironment, REPO_ROOT } from "../env.js";
import type { ServerConfig } from "../policy/config.js";
import type { ListedTool } from "./catalog.js";
import type { ConnectionEvents, McpRequests, OpenedServer, ServerConnection } from "./connection.js";

export type StdioServer = Extract<ServerConfig, { transport: "stdio" }>;

/** What both SDKs' clients offer for their lifecycle. */
export interface ClosableClient {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  close(): Promise<void>;
}

/** The parameters of both SDKs' stdio client transports for `server`. */
export function stdioParameters(server: StdioServer) {
  return {
    // "node" means the Node running us, so child servers never depend on PATH.
    command: server.command === "node" ? process.execPath : server.command,
    args: server.args,
    env: childEnvironment(server.env),
    cwd: server.cwd ?? REPO_ROOT,
    stderr: "inherit" as const,
  };
}

/** Closes a client without letting its close be reported as a crash. */
export async function retire(client: ClosableClient): Promise<void> {
  client.onclose = undefined;
  client.onerror = undefined;
  await client.close().catch(() => undefined);
}

/** The client a stdio connection currently speaks through, and the one still opening. */
export interface ClientSlot<C extends ClosableClient> {
  /** The open client (undefined while down, opening or shut down). */
  current(): C | undefined;
  /**
   * Retires the current client, then starts `client` with `start` (connect and list); it becomes current when
   * `start` succeeds and its process is still there. A failed open leaves nothing running.
   */
  open(client: C, start: (client: C) => Promise<OpenedServer>): Promise<OpenedServer>;
  shutdown(): Promise<void>;
}

export function clientSlot<C extends ClosableClient>(events: Pick<ConnectionEvents, "down">): ClientSlot<C> {
  let current: C | undefined;
  /** A client still starting, so shutdown can stop it too. */
  let opening: C | undefined;
  let closed = false;
  return {
    current: () => current,
    async open(client, start) {
      if (closed) throw new Error("the connection is shut down");
      const previous = current;
      current = undefined;
      if (previous) await retire(previous);
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
        const opened = await start(client);
        if (exited) throw new Error("the server process exited during start-up");
        if (closed) throw new Error("the connection is shut down");
        current = client;
        return opened;
      } catch (error) {
        await retire(client);
        throw error;
      } finally {
        if (opening === client) opening = undefined;
      }
    },
    async shutdown() {
      closed = true;
      const clients = [current, opening].filter((client): client is C => client !== undefined);
      current = undefined;
      opening = undefined;
      // The SDKs end stdin, then SIGTERM, then SIGKILL: the child never outlives us.
      await Promise.all(clients.map(retire));
    },
  };
}

/** How one SDK's client sends a caller's requests, lists the tools and probes the server. */
export interface ClientWays<C> {
  requests(client: C): McpRequests;
  list(client: C): Promise<ListedTool[]>;
  probe(client: C): Promise<unknown>;
}

/** Everything of a stdio connection but its open, over `slot`'s current client (stdio servers get the caller in `_meta`). */
export function overSlot<C extends ClosableClient>(
  slot: ClientSlot<C>,
  ways: ClientWays<C>,
): Omit<ServerConnection, "open"> {
  const connected = (): C => {
    const client = slot.current();
    if (!client) throw new Error("not connected");
    return client;
  };
  return {
    async session(caller) {
      const client = slot.current();
      return {
        meta: {
          "warrant/user_id": caller.principal.user_id,
          "warrant/tenant": caller.principal.tenant,
          ...(caller.trace
            ? { traceparent: traceparentOf(caller.trace.runId, caller.trace.callId, caller.trace.attempt) }
            : {}),
        },
        run: (work) => {
          if (!client) return Promise.reject(new McpError(ErrorCode.ConnectionClosed, "not connected"));
          return work(ways.requests(client));
        },
      };
    },
    relist: async () => ways.list(connected()),
    async probe() {
      await ways.probe(connected());
    },
    shutdown: () => slot.shutdown(),
  };
}
