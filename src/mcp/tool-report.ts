/**
 * What `npm run tools -- list` shows, computed the same way by the CLI on its
 * own host and by the server's operator route on the running one: every
 * contracted tool, its server and risk, whether that server lists it now, the
 * MCP revision the server is spoken to in, and its pin state. Hashes carry the `sha256:` prefix a config `pin` takes.
 */
import type { WarrantConfig } from "../policy/config.js";
import type { Revision } from "./connection.js";
import { configuredHash, type PinStore } from "./pins.js";
import type { ToolHost } from "./tool-host.js";

export type PinState =
  /** Pinned, and the server serves the pinned definition. */
  | "pinned"
  /** The config's `pin` governs the tool. */
  | "config_pinned"
  /** The server serves a different definition: the tool is withheld until approved. */
  | "changed"
  /** Never served to a host yet. */
  | "not_pinned";

export interface ToolStatusRow {
  tool: string;
  server: string;
  risk: string;
  /** The server is connected and lists the tool. */
  listed: boolean;
  /** The MCP revision the server was spoken to in at its last connect (null: it never connected). */
  revision: Revision | null;
  pin: PinState;
  pinned_hash: string | null;
  served_hash: string | null;
  /** The server may ask the run's owner for input during a call (its config's `elicitation: true`). */
  elicits: boolean;
}

export const withPrefix = (hash: string | null | undefined): string | null => (hash ? `sha256:${hash}` : null);

export async function toolStatus(config: WarrantConfig, pins: PinStore, host: ToolHost): Promise<ToolStatusRow[]> {
  const catalog = new Set(host.catalog().map((tool) => tool.name));
  const rows: ToolStatusRow[] = [];
  for (const [tool, contract] of Object.entries(config.tools).sort(([a], [b]) => a.localeCompare(b))) {
    const pin = await pins.get(tool);
    const configured = configuredHash(contract.pin);
    const state: PinState = !pin
      ? configured
        ? "config_pinned"
        : "not_pinned"
      : pin.served_hash !== null
        ? "changed"
        : configured
          ? "config_pinned"
          : "pinned";
    rows.push({
      tool,
      server: contract.server,
      risk: contract.risk,
      listed: catalog.has(tool) && host.isHealthy(contract.server),
      revision: host.revision?.(contract.server) ?? null,
      pin: state,
      pinned_hash: withPrefix(configured ?? pin?.hash),
      served_hash: withPrefix(pin?.served_hash),
      elicits: Object.hasOwn(config.servers, contract.server) && config.servers[contract.server]?.elicitation === true,
    });
  }
  return rows;
}

/** The list as a table, one tool a line. */
export function renderToolStatus(rows: readonly ToolStatusRow[]): string {
  const table = [["tool", "server", "risk", "served", "revision", "pin", "hash"]];
  for (const row of rows)
    table.push([
      row.tool,
      // A server that may ask the user during a call (elicitation) is marked.
      row.elicits ? `${row.server} (elicits)` : row.server,
      row.risk,
      row.listed ? "yes" : "no",
      row.revision ?? "-",
      row.pin,
      row.pin === "changed" ? `${row.pinned_hash} → served ${row.served_hash}` : (row.pinned_hash ?? "-"),
    ]);
  const widths = table[0]?.map((_, column) => Math.max(...table.map((line) => (line[column] ?? "").length))) ?? [];
  return table
    .map((line) =>
      line
        .map((cell, column) => cell.padEnd(widths[column] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
