/**
 * The pipeline's view of a step, built from the host and the state (never
 * from the model): shared by authorize (proposals) and human_review (edits),
 * so both decide with the same facts.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Host } from "../host.js";
import type { DecideContext } from "../policy/checks.js";
import type { State } from "../state.js";
import { runOwner } from "./owner.js";
import { runBoundFrom, threadIdFrom } from "../run-config.js";

/** What the pipeline knows about this step, from the host and the state (never from the model). */
export async function decideContextFor(
  state: State,
  config: LangGraphRunnableConfig,
  host: Host,
): Promise<DecideContext> {
  const tools = await host.tools();
  const catalog = tools.catalog();
  return {
    offer: { offered: state.tool_offer?.offered ?? [], withheld: state.tool_offer?.withheld ?? [] },
    catalog: { find: (name) => catalog.find((tool) => tool.name === name), isListed: (name) => tools.isListed(name) },
    owner: await runOwner(state, config, host),
    threadId: threadIdFrom(config),
    runBound: runBoundFrom(config),
    reviewPolicy: await host.reviewPolicy(),
    maxRepeats: host.budgets.max_repeats,
    now: host.now(),
    ...(host.policyEngine ? { engine: await host.policyEngine() } : {}),
  };
}

/** This run's repeat counts (a new run starts from none). */
export function repeatCountsOf(state: State): Record<string, number> {
  const runId = state.run?.run_id ?? "";
  return state.repeats?.run_id === runId ? state.repeats.counts : {};
}
