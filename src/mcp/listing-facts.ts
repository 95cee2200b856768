/**
 * What a connected tool host can tell the config checks (policy/config-check.ts):
 * per configured server, the contracted tools it lists with the schema the model
 * sees, or why it could not be listed.
 */
import type { ListedToolFacts } from "../policy/config-check.js";
import type { WarrantConfig } from "../policy/config.js";
import type { ToolHost } from "./tool-host.js";

export function listingFacts(
  config: WarrantConfig,
  tools: Pick<ToolHost, "catalog" | "isHealthy">,
): Record<string, readonly ListedToolFacts[] | { error: string }> {
  const catalog = tools.catalog();
  const facts: Record<string, readonly ListedToolFacts[] | { error: string }> = {};
  for (const server of Object.keys(config.servers)) {
    facts[server] = tools.isHealthy(server)
      ? catalog
          .filter((tool) => tool.server === server)
          .map((tool) => ({ name: tool.remote_name, inputSchema: tool.model_schema }))
      : { error: "the server is unavailable" };
  }
  return facts;
}
