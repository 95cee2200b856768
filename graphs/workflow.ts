/**
 * The fixed-workflow baseline: code (not a model) owns the sequence of steps.
 * The evaluation compares it with `agent` on the same tasks and budgets.
 *
 * `buildWorkflow(host)` mirrors `buildAgent(host)`: same state schema, same
 * run config, same checkpointer supplied by the caller. (Interim: the agent
 * graph driven by the rules planner, until the workflow's own steps land.)
 */
import { createRuntime } from "../src/bootstrap.js";
import { loadSettings } from "../src/env.js";
import { createRulesPlanner } from "../src/domains/rules-planner.js";
import type { Host } from "../src/host.js";
import { runOptions } from "../src/runtime/routes.js";
import { buildAgent, type NodeWrapper } from "./agent.js";

/** Builds the workflow's graph around a host (tests and the evaluation pass their own). */
export function buildWorkflow(host: Host, wrap?: NodeWrapper) {
  const planner = createRulesPlanner();
  return buildAgent({ ...host, planner: async () => planner }, wrap);
}

const settings = loadSettings();

export const builder = buildWorkflow(createRuntime(settings, { planner: createRulesPlanner() }).host);

export const graph = builder.compile().withConfig(runOptions(settings.budgets));
