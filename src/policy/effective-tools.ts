/**
 * Effective tools for one step = catalog (minus tools whose definition changed
 * since it was pinned) ∩ principal scopes ∩ stage policy ∩ risk policy ∩ healthy servers, then, when still large, the top-k most
 * relevant to the request plus the always-available ones. Pure.
 *
 * "Relevant" is word overlap between the request and a tool's name and
 * description (stop words dropped, plurals folded), widened to the tool's
 * server: a server's tools work together (a search finds the ids a read
 * takes), so a request that matches one of them makes all of them
 * candidates. When the set is large, only candidates are offered: every tool
 * offered costs definition tokens in every model call, and one the request
 * gives no reason to use rarely helps. When no tool matches at all, the
 * top-k by catalog order are offered as before, so a request in words no
 * description uses still gets tools.
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
  withheld: {
    tool: string;
    reason: "definition_changed" | "scope" | "stage" | "risk" | "unhealthy" | "not_relevant";
  }[];
}

/** Words too common to say what a request needs ("compare X with Y using my notes" is about notes, not about "with"). */
const STOP_WORDS: ReadonlySet<string> = new Set([
  "about",
  "all",
  "and",
  "any",
  "are",
  "can",
  "for",
  "from",
  "has",
  "have",
  "how",
  "into",
  "its",
  "not",
  "one",
  "our",
  "please",
  "that",
  "the",
  "their",
  "them",
  "then",
  "this",
  "use",
  "using",
  "was",
  "what",
  "when",
  "which",
  "who",
  "why",
  "will",
  "with",
  "you",
  "your",
]);

/** Folds a plural to its singular, so "notes" matches "note" (and "notes"). */
function stem(word: string): string {
  if (word.length > 4 && word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

function words(text: string): Set<string> {
  const found = new Set<string>();
  for (const word of text.toLowerCase().split(/[^a-z0-9]+/))
    if (word.length > 2 && !STOP_WORDS.has(word)) found.add(stem(word));
  return found;
}

/**
 * A tool's words, by tool: without this every step split every description
 * again. Reused only while the tool's name and description are the same
 * strings; a server's new listing makes new catalog tools, scored afresh.
 */
const toolWordsCache = new WeakMap<CatalogTool, { name: string; description: string; words: ReadonlySet<string> }>();

function toolWords(tool: CatalogTool): ReadonlySet<string> {
  const cached = toolWordsCache.get(tool);
  if (cached && cached.name === tool.name && cached.description === tool.description) return cached.words;
  const found = words(`${tool.name.replace(/_/g, " ")} ${tool.description}`);
  toolWordsCache.set(tool, { name: tool.name, description: tool.description, words: found });
  return found;
}

function relevance(tool: CatalogTool, requestWords: Set<string>): number {
  let score = 0;
  for (const word of toolWords(tool)) if (requestWords.has(word)) score += 1;
  return score;
}

/**
 * This step's effective tools. With `candidates` (the run's candidate set,
 * {@link candidateTools}), the step offers the candidates that pass this
 * step's checks and withholds every other tool as `not_relevant`: relevance
 * was decided once, when the run started, so the model's tools block stays
 * the same for the whole run. Without it (a caller with no run), relevance
 * narrows the eligible tools here, as at a run's start.
 */
export function effectiveTools(input: EffectiveToolsInput & { candidates?: readonly string[] }): EffectiveTools {
  const withheld: EffectiveTools["withheld"] = [];
  const eligible: CatalogTool[] = [];
  const candidates = input.candidates ? new Set(input.candidates) : undefined;
  for (const tool of input.tools) {
    const stages = tool.contract.stages;
    if (tool.definition_changed) withheld.push({ tool: tool.name, reason: "definition_changed" });
    else if (!hasScopes(input.principal, tool.contract)) withheld.push({ tool: tool.name, reason: "scope" });
    else if (!stages.includes("any") && !stages.includes(input.stage))
      withheld.push({ tool: tool.name, reason: "stage" });
    else if (!input.allowedRisks.includes(tool.contract.risk)) withheld.push({ tool: tool.name, reason: "risk" });
    else if (!input.isHealthy(tool.server)) withheld.push({ tool: tool.name, reason: "unhealthy" });
    else if (candidates && !candidates.has(tool.name)) withheld.push({ tool: tool.name, reason: "not_relevant" });
    else eligible.push(tool);
  }
  if (candidates) return { offered: eligible, withheld };
  const narrowed = narrow(eligible, input.maxTools, input.request);
  for (const tool of narrowed.dropped) withheld.push({ tool: tool.name, reason: "not_relevant" });
  return { offered: narrowed.chosen, withheld };
}

/**
 * The run's candidate set, fixed when it starts: the tools the owner may use
 * at all (definition unchanged, scopes, risk), narrowed by relevance to the
 * request once. Stage and server health are left out: they change during a
 * run and are applied per step by {@link effectiveTools} as a mask. Names,
 * in catalog order.
 */
export function candidateTools(input: Omit<EffectiveToolsInput, "stage" | "isHealthy">): string[] {
  const usable = input.tools.filter(
    (tool) =>
      !tool.definition_changed &&
      hasScopes(input.principal, tool.contract) &&
      input.allowedRisks.includes(tool.contract.risk),
  );
  return narrow(usable, input.maxTools, input.request).chosen.map((tool) => tool.name);
}

/** When more than `maxTools` are eligible: the always-available ones plus the top-k most relevant. */
function narrow(
  eligible: CatalogTool[],
  maxTools: number,
  request: string,
): { chosen: CatalogTool[]; dropped: CatalogTool[] } {
  if (eligible.length <= maxTools) return { chosen: eligible, dropped: [] };
  const always = eligible.filter((tool) => tool.contract.always_available);
  const requestWords = words(request);
  const scored = eligible
    .filter((tool) => !tool.contract.always_available)
    .map((tool, index) => ({ tool, index, score: relevance(tool, requestWords) }));
  const matchedServers = new Set(scored.filter((entry) => entry.score > 0).map((entry) => entry.tool.server));
  // With no match anywhere every tool is a candidate (the top-k by catalog order, as before).
  const candidate = (tool: CatalogTool) => matchedServers.size === 0 || matchedServers.has(tool.server);
  const ranked = scored
    .map((entry) => ({ ...entry, candidate: candidate(entry.tool) }))
    // Candidates first, then by score; stable: equal scores keep catalog order.
    .sort((a, b) => Number(b.candidate) - Number(a.candidate) || b.score - a.score || a.index - b.index);
  const room = Math.min(Math.max(0, maxTools - always.length), ranked.filter((entry) => entry.candidate).length);
  const chosen = new Set([...always, ...ranked.slice(0, room).map((entry) => entry.tool)]);
  return {
    chosen: eligible.filter((tool) => chosen.has(tool)),
    dropped: ranked.slice(room).map((entry) => entry.tool),
  };
}
