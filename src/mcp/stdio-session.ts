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
import { clientSlot, overSlot, stdioParameters, type StdioServer } from "./stdio-process.js";

export function stdioConnection(server: StdioServer, events: ConnectionEvents): ServerConnection {
  const slot = clientSlot<Client>(events);
  return {
    open() {
      const client = createHostClient(events.elicit);
      watchToolList(client, {
        ...events,
        // Only the current client's notifications count: one still opening lists its tools itself.
        toolsChanged: () => {
          if (slot.current() === client) events.toolsChanged();
        },
      });
      return slot.open(client, async () => {
        await client.connect(new StdioClientTransport(stdioParameters(server)), { timeout: OPEN_TIMEOUT_MS });
        const capabilities = negotiated(client);
        const tools = await listAllTools(client, capabilities);
        return { capabilities, info: serverInfoOf(client), tools, revision: "2025-11-25" };
      });
    },
    ...overSlot(slot, {
      requests: v1Requests,
      list: (client) => listAllTools(client, negotiated(client)),
      probe: (client) => client.ping({ timeout: PROBE_TIMEOUT_MS }),
    }),
  };
}
