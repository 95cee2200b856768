/**
 * Pinned tool definitions (issue 11, item 1: the MCP "rug pull"). The first
 * time the host sees a contracted tool it records a hash of its definition:
 * name, description, input and output schema, and the server's name and
 * version. A server that later serves a different definition for a pinned
 * tool loses that tool until an operator reviews the difference and approves
 * it (`npm run tools -- diff NAME`, `… approve NAME`). A contract may pin the
 * hash itself (`"pin": "sha256:…"` in `warrant.config.json`): that pin wins
 * over the database's, which is set to it (an approval by the config). The store is in
 * Postgres (src/stores/pin-store.ts); this file is the pure part.
 */
import { canonicalJson } from "../policy/fingerprint.js";
import { sha256Hex } from "../audit/chain.js";
import type { ListedTool } from "./catalog.js";

/** What is pinned of a tool. */
export interface ToolManifest {
  server: { name: string; version: string };
  name: string;
  description: string | null;
  input_schema: Record<string, unknown>;
  output_schema: Record<string, unknown> | null;
}

/** A contracted tool's definition as a server serves it now. */
export interface ToolDefinition {
  /** The contract's name for the tool (what the agent and the operator use). */
  tool: string;
  /** The config's name for its server. */
  server: string;
  hash: string;
  manifest: ToolManifest;
  /** The hash the contract pins (hex, without `sha256:`): compared instead of the database's pin, which it replaces. */
  configured_hash?: string;
}

/** Who a pin set by the config is recorded as approved by. */
export const CONFIG_APPROVER = "warrant.config.json";

/** A contract's `pin` (`sha256:<hex>`) as a bare hash, or undefined when it pins nothing. */
export function configuredHash(pin: string | undefined): string | undefined {
  return pin?.startsWith("sha256:") ? pin.slice("sha256:".length) : undefined;
}

const DRAFT_07 = "http://json-schema.org/draft-07/schema#";
const DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema";

/**
 * A schema as it is pinned: the two MCP SDKs describe one zod schema with a different dialect marker (v1,
 * on 2025-11-25, says draft-07; v2, on 2026-07-28, says 2020-12), so a 2020-12 `$schema` is pinned as
 * draft-07's. One definition then has one hash whichever revision the server speaks, and pins recorded
 * before a server moved to 2026-07-28 still match. Nothing else of the schema is touched.
 */
function pinnedSchema(schema: Record<string, unknown>): Record<string, unknown> {
  return schema["$schema"] === DRAFT_2020_12 ? { ...schema, $schema: DRAFT_07 } : schema;
}

export function manifestOf(serverInfo: { name: string; version: string }, listed: ListedTool): ToolManifest {
  return {
    server: { name: serverInfo.name, version: serverInfo.version },
    name: listed.name,
    description: listed.description ?? null,
    input_schema: pinnedSchema(listed.inputSchema),
    output_schema: listed.outputSchema ? pinnedSchema(listed.outputSchema) : null,
  };
}

/** SHA-256 (hex) of the manifest's canonical JSON: equal definitions, equal hashes, whatever the key order. */
export function manifestHash(manifest: ToolManifest): string {
  return sha256Hex(canonicalJson(manifest));
}

export function definitionOf(
  tool: string,
  server: string,
  serverInfo: { name: string; version: string },
  listed: ListedTool,
  pin?: string,
): ToolDefinition {
  const manifest = manifestOf(serverInfo, listed);
  const configured = configuredHash(pin);
  return {
    tool,
    server,
    manifest,
    hash: manifestHash(manifest),
    ...(configured ? { configured_hash: configured } : {}),
  };
}

/** How a served definition compares with the pin. */
export type PinVerdict =
  | { tool: string; status: "pinned_now" | "matches"; pinned_hash: string }
  | { tool: string; status: "changed"; pinned_hash: string; served_hash: string };

/** A stored pin, with the differing definition last served (if any) for review. */
export interface ToolPin {
  tool: string;
  server: string;
  hash: string;
  /** Null when the config pinned a hash whose definition this host has not been served yet. */
  manifest: ToolManifest | null;
  pinned_at: string;
  /** Who approved the pinned definition ({@link CONFIG_APPROVER} for a config pin); null when it was pinned on first sight. */
  approved_by: string | null;
  served_hash: string | null;
  served_manifest: ToolManifest | null;
  served_at: string | null;
}

export interface PinStore {
  /**
   * Pins each definition not pinned yet and compares the others with their
   * pin; a definition with a `configured_hash` is compared with that, and the
   * stored pin is set to it first (audit event `definition_approved` by the
   * config when it changes). A differing definition is recorded for review (once per new hash,
   * with an audit event naming the pinned and the served hash).
   */
  check(definitions: readonly ToolDefinition[]): Promise<PinVerdict[]>;
  get(tool: string): Promise<ToolPin | undefined>;
  /**
   * Pins the definition last served for review (only if it is still the one
   * with hash `served`, when given: approve what was reviewed); undefined when
   * there is none to approve.
   */
  approve(tool: string, approver: string, served?: string): Promise<ToolPin | undefined>;
}

/** One line per differing field of two manifests: what an operator reviews before approving. */
export function manifestDiff(
  pinned: ToolManifest,
  served: ToolManifest,
): { field: string; pinned: string; served: string }[] {
  const fields: (keyof ToolManifest)[] = ["server", "name", "description", "input_schema", "output_schema"];
  return fields
    .map((field) => ({ field, pinned: canonicalJson(pinned[field]), served: canonicalJson(served[field]) }))
    .filter((entry) => entry.pinned !== entry.served);
}
