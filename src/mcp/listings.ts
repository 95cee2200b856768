/**
 * Pins a server's definitions and keeps the catalog: each server's tools as
 * last listed, checked against the pins (pins.ts), and the catalog of
 * contracted tools built from them, with the tools whose served definition
 * differs from the pin marked `definition_changed` (withheld from calls).
 * Knows nothing of transports or health: a listing is handed to `adopt`.
 */
import type { WarrantConfig } from "../policy/config.js";
import { buildCatalog, type ListedTool } from "./catalog.js";
import type { CatalogTool } from "../policy/contracts.js";
import type { ServerInfo } from "./connection.js";
import { definitionOf, type PinStore } from "./pins.js";

/** How a withheld tool's served definition differs from its pin. */
export interface Difference {
  pinned_hash: string;
  served_hash: string;
}

export interface Listings {
  /** Checks a server's listing against the pins (pinning new tools) and takes it into the catalog. */
  adopt(server: string, info: ServerInfo, tools: readonly ListedTool[]): Promise<void>;
  /** Contracted tools of every server as last listed. */
  catalog(): CatalogTool[];
  /** Whether any server lists a tool by this name (contracted or not). */
  isListed(name: string): boolean;
  /** Whether a contracted tool of `server` is withheld because its definition changed. */
  isWithheld(server: string, tool: string): boolean;
}

export interface ListingsOptions {
  config: Pick<WarrantConfig, "tools">;
  /** Without a store nothing is pinned (tests, the conformance client). */
  pins?: PinStore | undefined;
  log: (line: string) => void;
}

export function createListings({ config, pins, log }: ListingsOptions): Listings {
  const listed = new Map<string, readonly ListedTool[]>();
  /** Per server: its contracted tools whose served definition differs from the pin. */
  const changed = new Map<string, Map<string, Difference>>();
  let tools: CatalogTool[] = [];

  /** Compares a server's contracted tools with their pins (pinning new ones). */
  const checkPins = async (
    server: string,
    info: ServerInfo,
    serverTools: readonly ListedTool[],
  ): Promise<Map<string, Difference>> => {
    const found = new Map<string, Difference>();
    if (!pins) return found;
    const definitions = Object.entries(config.tools).flatMap(([tool, contract]) => {
      if (contract.server !== server) return [];
      const served = serverTools.find((candidate) => candidate.name === (contract.remote_name ?? tool));
      return served ? [definitionOf(tool, server, info, served, contract.pin)] : [];
    });
    for (const verdict of await pins.check(definitions)) {
      if (verdict.status !== "changed") continue;
      found.set(verdict.tool, { pinned_hash: verdict.pinned_hash, served_hash: verdict.served_hash });
      if (changed.get(server)?.get(verdict.tool)?.served_hash !== verdict.served_hash) {
        const hashes = `pinned ${verdict.pinned_hash.slice(0, 12)}, served ${verdict.served_hash.slice(0, 12)}`;
        log(
          `[warrant mcp] tool ${verdict.tool} of server ${server} withheld: its definition changed (${hashes}); ` +
            `review with \`npm run tools -- diff ${verdict.tool}\`\n`,
        );
      }
    }
    return found;
  };

  return {
    async adopt(server, info, serverTools) {
      const withdrawn = await checkPins(server, info, serverTools);
      listed.set(server, serverTools);
      changed.set(server, withdrawn);
      // Null prototype: a server named like an Object.prototype member must not find one.
      const byServer: Record<string, ListedTool[]> = Object.assign(
        Object.create(null) as Record<string, ListedTool[]>,
        Object.fromEntries([...listed].map(([name, entries]) => [name, [...entries]])),
      );
      tools = buildCatalog(config.tools, byServer).tools.map((tool) => {
        const difference = changed.get(tool.server)?.get(tool.name);
        return difference ? { ...tool, definition_changed: difference } : tool;
      });
    },
    catalog: () => tools,
    isListed: (name) =>
      [...listed.values()].some((serverTools) => serverTools.some((tool) => tool.name === name)) ||
      tools.some((tool) => tool.name === name),
    isWithheld: (server, tool) => changed.get(server)?.has(tool) === true,
  };
}
