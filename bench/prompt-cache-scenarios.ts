/**
 * The two prompt-cache scenarios of `npm run bench`, each thread run alone
 * while the scripted endpoint keeps its request bodies:
 *
 *   research_30   30 steps alternating `search_notes` / `read_note`, the
 *                 peers bound to the notes server's tools (the variants the
 *                 rest of the bench uses)
 *   all_tools_10  10 `search_notes` steps with every shipped and example
 *                 server configured: Warrant offers its run's candidate set,
 *                 the peers bind every listed tool (the notes tools through
 *                 the MCP adapter, the others with their listed schema, never
 *                 called), as a user of a prebuilt agent binds an MCP client's
 *                 tools
 */
import { randomUUID } from "node:crypto";
import { tool, type StructuredToolInterface } from "@langchain/core/tools";
import type { Settings } from "../src/env.js";
import type { Database } from "../src/stores/open-database.js";
import { cacheFigures, requestAlwaysSeen, type CacheFigures } from "./prompt-cache.js";
import type { PerVariant } from "./report.js";
import type { ScriptedEndpoint } from "./scripted-endpoint.js";
import { benchRequest } from "./script.js";
import { everyListedTool, everyServerConfig, retryingStart } from "./tool-tokens.js";
import { VARIANTS, peerVariant, warrantVariant, type Variant } from "./variants.js";

export const RESEARCH_STEPS = 30;
export const ALL_TOOLS_STEPS = 10;

export interface ScenarioFigures extends CacheFigures {
  /** Every request of the thread carried the user's request. */
  request_always_seen: boolean;
}

export interface PromptCache {
  research_30: PerVariant<ScenarioFigures>;
  all_tools_10: PerVariant<ScenarioFigures>;
}

async function scenario(
  variants: readonly Variant[],
  endpoint: ScriptedEndpoint,
  steps: number,
  research: boolean,
): Promise<PerVariant<ScenarioFigures>> {
  const figures: Partial<PerVariant<ScenarioFigures>> = {};
  for (const variant of variants) {
    endpoint.record();
    // Throws unless the thread made all its steps and ended with the script's answer.
    await variant.run(steps, randomUUID(), research);
    const bodies = endpoint.recorded();
    figures[variant.name] = {
      // Warrant sets Anthropic breakpoints on that wire; the peers, bound as their users bind ChatAnthropic, set none.
      ...cacheFigures(bodies, variant.name === "warrant"),
      request_always_seen: requestAlwaysSeen(bodies, benchRequest(steps, research)),
    };
  }
  return figures as PerVariant<ScenarioFigures>;
}

/** Stand-ins for every listed tool the notes adapter does not provide: the same definition, never called. */
export async function listedStandIns(provided: ReadonlySet<string>): Promise<StructuredToolInterface[]> {
  const listed = await everyListedTool(await everyServerConfig());
  return listed
    .filter((spec) => !provided.has(spec.name))
    .map((spec) =>
      tool(
        async () => {
          throw new Error(`${spec.name} is not part of the bench script`);
        },
        { name: spec.name, description: spec.description, schema: spec.parameters as Record<string, unknown> },
      ),
    );
}

export async function measurePromptCache(
  settings: Settings,
  database: Database,
  endpoint: ScriptedEndpoint,
  variants: readonly Variant[],
): Promise<PromptCache> {
  const research_30 = await scenario(variants, endpoint, RESEARCH_STEPS, true);
  const config = await everyServerConfig();
  const built: Variant[] = [];
  try {
    built.push(await retryingStart(() => warrantVariant(settings, database, endpoint, config)));
    const standIns = await retryingStart(() => listedStandIns(new Set(["search_notes", "read_note"])));
    for (const name of VARIANTS.filter((name) => name !== "warrant"))
      built.push(await peerVariant(name, settings, database, endpoint, standIns));
    const all_tools_10 = await scenario(built, endpoint, ALL_TOOLS_STEPS, false);
    return { research_30, all_tools_10 };
  } finally {
    for (const variant of built) await variant.close();
  }
}
