/**
 * The shipped catalog without starting servers: warrant.config.json's
 * contracts joined with listings whose argument schemas come from the
 * shipped Cedar schema (generated from the servers' listings), and the
 * shipped Cedar engine compiled from policies/.
 */
import { readFileSync } from "node:fs";
import * as cedar from "@cedar-policy/cedar-wasm/nodejs";
import { buildCatalog, type ListedTool } from "../../src/mcp/catalog.js";
import type { CatalogTool } from "../../src/policy/contracts.js";
import type { CedarEngine } from "../../src/policy/cedar.js";
import { parseConfig, type WarrantConfig } from "../../src/policy/config.js";
import { compileConfiguredCedar } from "../../src/policy/policy-engine.js";

export const CONFIG_FILE = "warrant.config.json";

export function shippedConfig(): WarrantConfig {
  return parseConfig(readFileSync(CONFIG_FILE, "utf8"));
}

type Node = { type: string; element?: Node; attributes?: Record<string, Node> };

function jsonSchemaOf(node: Node): Record<string, unknown> {
  if (node.type === "String") return { type: "string" };
  if (node.type === "Long") return { type: "integer" };
  if (node.type === "Bool" || node.type === "Boolean") return { type: "boolean" };
  if (node.type === "Set") return { type: "array", items: node.element ? jsonSchemaOf(node.element) : {} };
  return {
    type: "object",
    properties: Object.fromEntries(Object.entries(node.attributes ?? {}).map(([k, v]) => [k, jsonSchemaOf(v)])),
  };
}

/** The shipped tools, as their servers list them (argument schemas from the shipped Cedar schema). */
export function shippedCatalog(config = shippedConfig()): CatalogTool[] {
  const text = readFileSync(config.policy.cedar?.schema ?? "policies/warrant.cedarschema", "utf8");
  const json = cedar.schemaToJsonWithResolvedTypes(text);
  if (json.type !== "success") throw new Error("the shipped schema does not parse");
  const actions = json.json["Warrant"]?.actions ?? {};
  const listed: Record<string, ListedTool[]> = {};
  for (const [name, contract] of Object.entries(config.tools)) {
    const context = actions[name]?.appliesTo?.context as Node | undefined;
    const args = context?.attributes?.["args"] ?? { type: "Record", attributes: {} };
    const tools = listed[contract.server] ?? [];
    tools.push({
      name: contract.remote_name ?? name,
      description: name,
      inputSchema: jsonSchemaOf(args),
    } as ListedTool);
    listed[contract.server] = tools;
  }
  return buildCatalog(config.tools, listed).tools;
}

export function shippedCedar(config = shippedConfig()): CedarEngine {
  if (!config.policy.cedar) throw new Error("the shipped config names no Cedar files");
  const { engine, problems } = compileConfiguredCedar(config.policy.cedar, CONFIG_FILE);
  if (!engine) throw new Error(problems.map((problem) => problem.message).join("\n"));
  return engine;
}
