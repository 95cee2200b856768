/**
 * The catalog: MCP tools that have a contract, with the schema the model sees
 * (host-injected arguments removed, unknown keys forbidden).
 */
import { DEFAULT_HINTS, type CatalogTool, type ToolContract, type ToolHints } from "../policy/contracts.js";

/** A raw tool as listed by an MCP server. */
export interface ListedTool {
  name: string;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
  /** Part of the pinned definition (src/mcp/pins.ts). */
  outputSchema?: Record<string, unknown> | undefined;
  annotations?: Partial<Record<keyof ToolHints, unknown>> | undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Removes injected arguments from a server's input schema and forbids unknown keys. */
export function modelSchemaFor(
  inputSchema: Record<string, unknown>,
  injected: readonly string[],
): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const serverProperties = isRecord(inputSchema["properties"]) ? inputSchema["properties"] : {};
  for (const [key, schema] of Object.entries(serverProperties)) {
    if (!injected.includes(key)) properties[key] = schema;
  }
  const required = Array.isArray(inputSchema["required"])
    ? inputSchema["required"].filter((key): key is string => typeof key === "string" && !injected.includes(key))
    : [];
  const schema: Record<string, unknown> = { type: "object", properties, required, additionalProperties: false };
  // Keep local definitions so `$ref`s inside properties still resolve.
  for (const key of ["$defs", "definitions"]) if (isRecord(inputSchema[key])) schema[key] = inputSchema[key];
  return schema;
}

function hintsFrom(annotations: ListedTool["annotations"]): ToolHints {
  const hint = (key: keyof ToolHints) => {
    const value = annotations?.[key];
    return typeof value === "boolean" ? value : DEFAULT_HINTS[key];
  };
  return {
    readOnlyHint: hint("readOnlyHint"),
    destructiveHint: hint("destructiveHint"),
    idempotentHint: hint("idempotentHint"),
    openWorldHint: hint("openWorldHint"),
  };
}

/**
 * Joins contracts with the tools servers actually list. A listed tool without
 * a contract is left out (hidden); a contract whose tool is not listed is
 * reported in `missing`.
 */
export function buildCatalog(
  contracts: Record<string, ToolContract>,
  listed: Record<string, ListedTool[]>,
): { tools: CatalogTool[]; missing: string[] } {
  const tools: CatalogTool[] = [];
  const missing: string[] = [];
  for (const [name, contract] of Object.entries(contracts)) {
    const remoteName = contract.remote_name ?? name;
    const match = (listed[contract.server] ?? []).find((tool) => tool.name === remoteName);
    if (!match) {
      missing.push(name);
      continue;
    }
    tools.push({
      name,
      remote_name: remoteName,
      server: contract.server,
      contract,
      description: contract.description ?? match.description ?? name,
      model_schema: modelSchemaFor(match.inputSchema, Object.keys(contract.injected)),
      hints: hintsFrom(match.annotations),
    });
  }
  return { tools, missing };
}
