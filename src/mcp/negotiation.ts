/**
 * Which MCP revision a stdio server is spoken to in, behind the one
 * `ServerConnection` interface (so the rest of src/mcp/ does not know): a
 * server pinned to a revision (`"protocol"` in its config) gets that one; an
 * unpinned one is spoken to in 2025-11-25 through the v1 client. The host's
 * 2026-07-28 path (the v2 client) lacks parity yet: resources and prompts
 * read through it fail, and `tools/list_changed` mid-session is not heard. So
 * `"protocol": "2026-07-28"` opts a server in, and a server that speaks only
 * 2026-07-28 must be pinned; negotiating by `server/discover` comes back when
 * the two paths match.
 */
import type { ServerConfig } from "../policy/config.js";
import type { ConnectionEvents, ServerConnection } from "./connection.js";
import { modernStdioConnection } from "./modern-session.js";
import { stdioConnection } from "./stdio-session.js";

type StdioServer = Extract<ServerConfig, { transport: "stdio" }>;

/** The revision a connection speaks. */
export type Revision = "2026-07-28" | "2025-11-25";

export interface NegotiatedConnection extends ServerConnection {
  revision(): Revision | undefined;
}

export function negotiatedStdioConnection(server: StdioServer, events: ConnectionEvents): NegotiatedConnection {
  if (server.protocol === "2026-07-28") return withRevision(modernStdioConnection(server, events), "2026-07-28");
  // Pinned to 2025-11-25, or unpinned (see above).
  return withRevision(stdioConnection(server, events), "2025-11-25");
}

function withRevision(connection: ServerConnection, revision: Revision): NegotiatedConnection {
  return { ...connection, revision: () => revision };
}
