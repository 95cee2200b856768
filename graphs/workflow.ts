/**
 * The fixed-workflow baseline: the same controlled graph, driven by the
 * rules planner, so code (not a model) owns the sequence of steps. The
 * evaluation compares it with `agent` on the same tasks and budgets.
 */
import { createRuntime } from "../src/bootstrap.js";
import { loadSettings } from "../src/env.js";
import { createRulesPlanner } from "../src/domains/rules-planner.js";
import { runOptions } from "../src/runtime/routes.js";
import { buildAgent } from "./agent.js";

const settings = loadSettings();

export const builder = buildAgent(createRuntime(settings, { planner: createRulesPlanner() }).host);

export const graph = builder.compile().withConfig(runOptions(settings.budgets));
