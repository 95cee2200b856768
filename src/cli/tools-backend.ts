/**
 * Where `npm run tools` reads and writes pins: the running server of this
 * checkout (its operator routes), or the database and the MCP servers
 * themselves. Either way `current` first looks at what the tool's server
 * serves now (a fresh listing, checked against the pin), so a changed
 * definition shows before any host restarts.
 */
import { loadApiSecret } from "../auth/api-token.js";
import type { Settings } from "../env.js";
import type { ToolPin } from "../mcp/pins.js";
import { connectTools } from "../mcp/tool-host.js";
import { toolStatus, type ToolStatusRow } from "../mcp/tool-report.js";
import { openDatabase, type Database } from "../stores/open-database.js";
import type { WarrantConfig } from "../policy/config.js";
import { redactionKeyFrom } from "../secrets/scanner.js";
import { findServer, operatorToken, requestJson } from "./server-client.js";

export interface ToolsBackend {
  list(): Promise<ToolStatusRow[]>;
  /** The stored pin after listing the tool's server again; `relisted` is true, or why it could not be. */
  current(name: string): Promise<{ pin: ToolPin | undefined; relisted: true | string }>;
  /** The stored pin as last reviewed (no new listing: approve pins what diff showed). */
  stored(name: string): Promise<ToolPin | undefined>;
  /** Pins the definition last served (only if its hash is still `served`); undefined when it changed again or there is none. */
  approve(name: string, by: string, served: string): Promise<ToolPin | undefined>;
  close(): Promise<void>;
}

export async function toolsBackend(settings: Settings, config: WarrantConfig): Promise<ToolsBackend> {
  const server = await findServer(settings);
  return server ? remoteBackend(server, await operatorToken(settings)) : localBackend(settings, config);
}

function remoteBackend(url: string, token: string): ToolsBackend {
  const tool = (name: string) => `/operator/tools/${encodeURIComponent(name)}`;
  return {
    list: async () => (await requestJson<{ tools: ToolStatusRow[] }>(url, token, "GET", "/operator/tools")).body.tools,
    async current(name) {
      const { body } = await requestJson<{ pin: ToolPin | null; relisted: true | string }>(
        url,
        token,
        "GET",
        tool(name),
      );
      return { pin: body.pin ?? undefined, relisted: body.relisted };
    },
    async stored(name) {
      const { body } = await requestJson<{ pin: ToolPin | null }>(url, token, "GET", `${tool(name)}?relist=false`);
      return body.pin ?? undefined;
    },
    async approve(name, by, served) {
      const answer = await requestJson<{ pin: ToolPin }>(url, token, "POST", `${tool(name)}/approve`, {
        body: { by, served_hash: served },
        accept: [409],
      });
      return answer.status === 409 ? undefined : answer.body.pin;
    },
    close: async () => undefined,
  };
}

function localBackend(settings: Settings, config: WarrantConfig): ToolsBackend {
  let database: Promise<Database> | undefined;
  const open = () =>
    (database ??= openDatabase({
      ...(settings.databaseUrl ? { databaseUrl: settings.databaseUrl } : {}),
      dataDir: settings.dataDir,
    }));
  const hosts: { close(): Promise<void> }[] = [];
  /** A host on some of the config's servers, pinning and comparing what they serve, as the server's host does. */
  const connect = async (servers: string[]) => {
    const { pins, audit } = await open();
    const only = new Set(servers);
    const subset: WarrantConfig = {
      ...config,
      servers: Object.fromEntries(Object.entries(config.servers).filter(([name]) => only.has(name))),
      tools: Object.fromEntries(Object.entries(config.tools).filter(([, contract]) => only.has(contract.server))),
    };
    const secret = await loadApiSecret({ configured: settings.server.authSecret, dataDir: settings.dataDir });
    const host = await connectTools(subset, undefined, {
      hostValues: { DATABASE_URL: settings.databaseUrl },
      pins,
      audit,
      redactionKey: redactionKeyFrom(secret),
    });
    hosts.push(host);
    return host;
  };
  return {
    async list() {
      const host = await connect(Object.keys(config.servers));
      return toolStatus(config, (await open()).pins, host);
    },
    async current(name) {
      const server = Object.hasOwn(config.tools, name) ? config.tools[name]?.server : undefined;
      let relisted: true | string = "the tool has no contract in the config";
      if (server !== undefined)
        relisted = await connect([server]).then(
          () => true as const,
          (error: unknown) => (error instanceof Error ? error.message : String(error)),
        );
      return { pin: await (await open()).pins.get(name), relisted };
    },
    stored: async (name) => (await open()).pins.get(name),
    approve: async (name, by, served) => (await open()).pins.approve(name, by, served),
    async close() {
      await Promise.allSettled(hosts.map((host) => host.close()));
      if (database) await (await database).close();
    },
  };
}
