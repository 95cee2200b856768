/**
 * Effective tools for one step = catalog ∩ principal scopes ∩ stage policy ∩
 * risk policy ∩ healthy servers, then, when still large, the top-k most
 * relevant to the request plus the always-available ones. Pure.
 */
import type { Principal } from "../auth/principal.js";
import type { CatalogTool, Risk } from "./contracts.js";
import { hasScopes } from "./authorization.js";

export interface EffectiveToolsInput {
  tools: readonly CatalogTool[];
  principal: Principal;
  stage: string;
  allowedRisks: readonly Risk[];
  isHealthy: (server: string) => boolean;
  maxTools: number;
  request: string;
}

export interface EffectiveTools {
  offered: CatalogTool[];
  withheld: { tool: string; reason: "scope" | "stage" | "risk" | "unhealthy" | "not_relevant" }[];
}

function words(text: string): Set<string> {
  return new Set(text.toLowerCase().split(/[^a-z0-9]+/).filter((word) => word.length > 2));
}

function relevance(tool: CatalogTool, requestWords: Set<string>): number {
  let score = 0;
  for (const word of words(`${tool.name.replace(/_/g, " ")} ${tool.description}`)) if (requestWords.has(word)) score += 1;
  return score;
}

export function effectiveTools(input: EffectiveToolsInput): EffectiveTools {
  const withheld: EffectiveTools["withheld"] = [];
  const eligible: CatalogTool[] = [];
  for (const tool of input.tools) {
    const stages = tool.contract.stages;
    if (!hasScopes(input.principal, tool.contract)) withheld.push({ tool: tool.name, reason: "scope" });
    else if (!stages.includes("any") && !stages.includes(input.stage)) withheld.push({ tool: tool.name, reason: "stage" });
    else if (!input.allowedRisks.includes(tool.contract.risk)) withheld.push({ tool: tool.name, reason: "risk" });
    else if (!input.isHealthy(tool.server)) withheld.push({ tool: tool.name, reason: "unhealthy" });
    else eligible.push(tool);
  }
  if (eligible.length <= input.maxTools) return { offered: eligible, withheld };

  const always = eligible.filter((tool) => tool.contract.always_available);
  const requestWords = words(input.request);
  const ranked = eligible
    .filter((tool) => !tool.contract.always_available)
    .map((tool, index) => ({ tool, index, score: relevance(tool, requestWords) }))
    // Stable: equal scores keep catalog order.
    .sort((a, b) => b.score - a.score || a.index - b.index);
  const room = Math.max(0, input.maxTools - always.length);
  const chosen = new Set([...always, ...ranked.slice(0, room).map((entry) => entry.tool)]);
  for (const entry of ranked.slice(room)) withheld.push({ tool: entry.tool.name, reason: "not_relevant" });
  return { offered: eligible.filter((tool) => chosen.has(tool)), withheld };
}
