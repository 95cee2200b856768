/**
 * Connects the configured servers: one connection (stdio or HTTP, built by
 * the caller's factory) and one health supervisor (health.ts) per server.
 * Each (re)connect records what the server advertised and hands its tool
 * listing to the listings (pins and catalog); a `list_changed` notification
 * re-lists, one at a time, and a listing that cannot be checked takes the
 * server down (fail closed). Start-up: a required server that fails is a
 * `ConfigError("mcp_start_failed")` naming it; an optional one starts
 * unhealthy and is retried in the background.
 */
import type { ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { ConfigError } from "../errors.js";
import type { ServerConfig } from "../policy/config.js";
import type { ConnectionEvents, Revision, ServerConnection, ServerInfo } from "./connection.js";
import { reasonOf, supervise, type HealthEvent, type Supervisor } from "./health.js";
import type { Listings } from "./listings.js";
import type { ElicitationHandler } from "../elicitation/client.js";

/** One connected server. */
export interface ServerEntry {
  connection: ServerConnection;
  supervisor: Supervisor;
}

export interface ServerSet {
  get(server: string): ServerEntry | undefined;
  /** What the server advertised when it last connected (undefined before its first connect). */
  capabilities(server: string): ServerCapabilities | undefined;
  /** The MCP revision the server was spoken to in when it last connected (undefined before its first connect). */
  revision(server: string): Revision | undefined;
  /** Lists a connected server's tools again now and adopts them; throws when it is unknown or down. */
  relist(server: string): Promise<void>;
  /** Connects every server; rejects (after closing all) when a required one fails. */
  start(): Promise<void>;
  /** Shuts every connection down and stops reconnecting; idempotent. */
  close(): Promise<void>;
}

export interface ServerSetOptions {
  servers: Record<string, ServerConfig>;
  /** Builds a server's connection; it reports trouble through `events`. */
  connectionFor: (name: string, server: ServerConfig, events: ConnectionEvents) => ServerConnection;
  listings: Pick<Listings, "adopt">;
  onHealth: (event: HealthEvent) => void;
  random?: (() => number) | undefined;
  /** Who answers a server's `elicitation/create` (elicitation.ts); undefined: the host declares no elicitation. */
  elicitFor?: ((name: string, server: ServerConfig) => ElicitationHandler | undefined) | undefined;
}

export function createServerSet(options: ServerSetOptions): ServerSet {
  const entries = new Map<string, ServerEntry>();
  const capabilities = new Map<string, ServerCapabilities>();
  const infos = new Map<string, ServerInfo>();
  const revisions = new Map<string, Revision>();

  const infoOf = (server: string): ServerInfo => infos.get(server) ?? { name: "", version: "" };

  for (const [name, server] of Object.entries(options.servers)) {
    let supervisor: Supervisor | undefined;
    /** Re-listings after list_changed, one at a time. */
    let relisting: Promise<void> = Promise.resolve();
    const connection = options.connectionFor(name, server, {
      down: (reason) => supervisor?.markDown(reason),
      suspect: (reason) => supervisor?.suspect(reason),
      elicit: options.elicitFor?.(name, server),
      toolsChanged: () => {
        relisting = relisting
          .then(async () => options.listings.adopt(name, infoOf(name), await connection.relist()))
          // Fail closed: a listing we could not check against the pins takes the server down until it reconnects.
          .catch((error: unknown) => supervisor?.markDown(`re-listing tools failed: ${reasonOf(error)}`));
      },
    });
    supervisor = supervise({
      server: name,
      policy: server.reconnect,
      connect: async () => {
        const opened = await connection.open();
        capabilities.set(name, opened.capabilities);
        infos.set(name, opened.info);
        revisions.set(name, opened.revision ?? "2025-11-25");
        await options.listings.adopt(name, opened.info, opened.tools);
      },
      probe: () => connection.probe(),
      onEvent: options.onHealth,
      ...(options.random ? { random: options.random } : {}),
    });
    entries.set(name, { connection, supervisor });
  }

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
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

  return {
    get: (server) => entries.get(server),
    capabilities: (server) => capabilities.get(server),
    revision: (server) => revisions.get(server),
    async relist(server) {
      const entry = entries.get(server);
      if (!entry?.supervisor.healthy) throw new Error(`the ${server} server is not connected`);
      await options.listings.adopt(server, infoOf(server), await entry.connection.relist());
    },
    async start() {
      const names = [...entries.keys()];
      const started = await Promise.allSettled(names.map((name) => entries.get(name)?.supervisor.start()));
      const failures: string[] = [];
      started.forEach((outcome, index) => {
        const name = names[index] ?? "";
        if (outcome.status === "fulfilled") return;
        if (options.servers[name]?.optional)
          entries.get(name)?.supervisor.markDown(`start-up failed: ${reasonOf(outcome.reason)}`);
        else failures.push(`${name}: ${reasonOf(outcome.reason)}`);
      });
      if (failures.length > 0) {
        await close();
        throw new ConfigError("mcp_start_failed", `an MCP server failed to start: ${failures.join("; ")}`);
      }
    },
    close,
  };
}
