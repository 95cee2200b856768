/**
 * Which MCP revision a server (stdio or Streamable HTTP) is spoken to in, behind the one
 * `ServerConnection` interface (so the rest of src/mcp/ does not know): a
 * server pinned to a revision (`"protocol"` in its config) gets that one and
 * no other; an unpinned one is asked `server/discover` through the v2 client
 * at its first open and spoken to in 2026-07-28 when it answers with it, else
 * in 2025-11-25 through the v1 client (a v1-only server answers the discover
 * with an error). The verdict holds for the reopens after a crash (no second
 * process or probe per reconnect); a server that stops answering 2026-07-28 is spoken
 * to in 2025-11-25 from its next open, and a restart of the host asks again.
 * The host's guarantees hold on both (resources and prompts with the caller
 * in `_meta`, `tools/list_changed` re-listing against the pins).
 */
import type { ConnectionEvents, OpenedServer, Revision, ServerConnection } from "./connection.js";
import { httpEndpoint } from "./http-launch.js";
import { httpConnection, type HttpConnectionOptions } from "./http-session.js";
import { modernHttpConnection } from "./modern-http-session.js";
import { isNotModern, modernStdioConnection } from "./modern-session.js";
import { stdioConnection } from "./stdio-session.js";
import type { StdioServer } from "./stdio-process.js";

export type { Revision } from "./connection.js";

export interface NegotiatedConnection extends ServerConnection {
  /** The revision the connection speaks now (undefined before its first open and while it is not open). */
  revision(): Revision | undefined;
}

export function negotiatedStdioConnection(server: StdioServer, events: ConnectionEvents): NegotiatedConnection {
  return negotiatedConnection(
    server.protocol,
    () => modernStdioConnection(server, events),
    () => stdioConnection(server, events),
  );
}

/** A Streamable HTTP server with task tokens, on the revision negotiated or pinned (`protocol` in its config). */
export function negotiatedHttpConnection(options: HttpConnectionOptions): NegotiatedConnection {
  // One endpoint for both revisions' connections: a launched server is started once, whichever speaks to it.
  const endpoint = httpEndpoint(options.server, options.launchEnvironment, options.events);
  const shared = { ...options, endpoint };
  const connection = negotiatedConnection(
    options.server.protocol,
    () => modernHttpConnection(shared),
    () => httpConnection(shared),
  );
  return {
    ...connection,
    async shutdown() {
      await connection.shutdown();
      await endpoint.close();
    },
  };
}

/** An owner's authorization (link, callback), the same whichever revision the server is spoken to in. */
export type OwnerAuthorization = Pick<ServerConnection, "authorizationFor" | "completeAuthorization">;

/**
 * The revision `pin` names, else 2026-07-28 through `modern` when the server speaks it and 2025-11-25 through
 * `legacy` when it does not. Each builds a fresh connection (a failed open leaves nothing running). `owners`
 * (per-user OAuth servers) is passed through as the connection's `authorizationFor` and `completeAuthorization`.
 */
export function negotiatedConnection(
  pin: Revision | undefined,
  modern: () => ServerConnection,
  legacy: () => ServerConnection,
  owners: OwnerAuthorization = {},
): NegotiatedConnection {
  const authorization: OwnerAuthorization = {
    ...(owners.authorizationFor ? { authorizationFor: owners.authorizationFor } : {}),
    ...(owners.completeAuthorization ? { completeAuthorization: owners.completeAuthorization } : {}),
  };
  if (pin === "2025-11-25") return { ...withRevision(legacy(), "2025-11-25"), ...authorization };
  if (pin === "2026-07-28") return { ...withRevision(modern(), "2026-07-28"), ...authorization };
  let active: ServerConnection | undefined;
  let revision: Revision | undefined;
  let closed = false;
  let verdict: Revision | undefined;
  const current = (): ServerConnection => {
    if (!active) throw new Error("not connected");
    return active;
  };
  /** Opens `connection` as the active one; a failed open leaves nothing running. */
  const openAs = async (connection: ServerConnection, spoken: Revision): Promise<OpenedServer> => {
    active = connection;
    revision = spoken;
    try {
      return await connection.open();
    } catch (error) {
      active = undefined;
      revision = undefined;
      await connection.shutdown();
      throw error;
    }
  };
  return {
    ...authorization,
    revision: () => revision,
    async open() {
      if (closed) throw new Error("the connection is shut down");
      // Each open builds fresh connections: the previous one's process must not linger beside the new one.
      const previous = active;
      active = undefined;
      revision = undefined;
      if (previous) await previous.shutdown();
      if (verdict !== "2025-11-25") {
        try {
          const opened = await openAs(modern(), "2026-07-28");
          verdict = "2026-07-28";
          return opened;
        } catch (error) {
          if (!isNotModern(error)) throw error;
        }
      }
      if (closed) throw new Error("the connection is shut down");
      const opened = await openAs(legacy(), "2025-11-25");
      verdict = "2025-11-25";
      return opened;
    },
    session: (caller) => current().session(caller),
    relist: () => current().relist(),
    probe: () => current().probe(),
    async shutdown() {
      closed = true;
      const previous = active;
      active = undefined;
      await previous?.shutdown();
    },
  };
}

function withRevision(connection: ServerConnection, revision: Revision): NegotiatedConnection {
  return { ...connection, revision: () => revision };
}
