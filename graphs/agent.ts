/**
 * The controlled agent: wiring only. Node logic lives in src/nodes.
 *   START → plan → authorize → (execute | human_review | observe) → observe → (plan | END)
 */
import { END, START, StateGraph } from "@langchain/langgraph";
import { defaultHost } from "../src/bootstrap.js";
import { loadSettings } from "../src/env.js";
import type { Host } from "../src/host.js";
import { makeAuthorizeNode } from "../src/nodes/authorize.js";
import { makeExecuteNode } from "../src/nodes/execute.js";
import { makeHumanReviewNode } from "../src/nodes/human_review.js";
import { makeObserveNode } from "../src/nodes/observe.js";
import { makePlanNode } from "../src/nodes/plan.js";
import { afterDecisions, afterObserve, afterPlan, runOptions } from "../src/runtime/routes.js";
import { AgentState, NODES, type NodeName } from "../src/state.js";

/** Wraps a node function (tracing, tests that check which fields a node writes). */
export type NodeWrapper = <F extends (...args: never[]) => Promise<unknown>>(name: NodeName, node: F) => F;

/** Builds the agent's graph around a host (tests pass their own). */
export function buildAgent(host: Host, wrap: NodeWrapper = (_name, node) => node) {
  return new StateGraph(AgentState)
    .addNode(NODES.plan, wrap(NODES.plan, makePlanNode(host)))
    .addNode(NODES.authorize, wrap(NODES.authorize, makeAuthorizeNode(host)))
    .addNode(NODES.human_review, wrap(NODES.human_review, makeHumanReviewNode(host)))
    .addNode(NODES.execute, wrap(NODES.execute, makeExecuteNode(host)))
    .addNode(NODES.observe, wrap(NODES.observe, makeObserveNode(host)))
    .addEdge(START, NODES.plan)
    .addConditionalEdges(NODES.plan, afterPlan, [NODES.authorize, NODES.observe])
    .addConditionalEdges(NODES.authorize, afterDecisions, [NODES.execute, NODES.human_review, NODES.observe])
    .addConditionalEdges(NODES.human_review, afterDecisions, [NODES.execute, NODES.observe, NODES.human_review])
    .addEdge(NODES.execute, NODES.observe)
    .addConditionalEdges(NODES.observe, afterObserve, [NODES.plan, END]);
}

const settings = loadSettings();

/** The builder on the default host (resources opened lazily on first use). */
export const builder = buildAgent(defaultHost(settings));

/** What `langgraph.json` serves. The serving layer supplies the checkpointer. */
export const graph = builder.compile().withConfig(runOptions(settings.budgets));
