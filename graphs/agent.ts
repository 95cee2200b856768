/**
 * The controlled agent: wiring only. Node logic lives in src/nodes.
 *   START → plan → authorize → (execute | human_review | observe) → observe → (plan | END)
 * plan, authorize, human_review and observe choose their next node themselves (routes.ts `routed`).
 * Each node is a `nodeRunnable` (src/graph/node-runnable.ts), not a plain function.
 */
import { END, START, StateGraph } from "@langchain/langgraph";
import { defaultHost } from "../src/bootstrap.js";
import { loadSettings } from "../src/env.js";
import type { Host } from "../src/host.js";
import { holdingSaves } from "../src/graph/save-holding.js";
import { makeAuthorizeNode } from "../src/nodes/authorize.js";
import { makeExecuteNode } from "../src/nodes/execute.js";
import { makeHumanReviewNode } from "../src/nodes/human_review.js";
import { makeObserveNode } from "../src/nodes/observe.js";
import { makePlanNode } from "../src/nodes/plan.js";
import { nodeRunnable, useLeanRunContext } from "../src/graph/node-runnable.js";
import { afterDecisions, afterObserve, afterPlan, routed, runOptions } from "../src/graph/routes.js";
import { AgentState, NODES, type NodeName } from "../src/state.js";

/** Wraps a node function (tracing, tests that check which fields a node writes). */
export type NodeWrapper = <F extends (...args: never[]) => Promise<unknown>>(name: NodeName, node: F) => F;

/** Builds the agent's graph around a host (tests pass their own). */
export function buildAgent(host: Host, wrap: NodeWrapper = (_name, node) => node) {
  // Every node opens holding for its thread's saves as it starts; observe declares the run's end (save-holding.ts).
  const node: NodeWrapper = (name, fn) => holdingSaves(host, wrap(name, fn));
  // Each node routes itself (a Command); `ends` declares where it may go, for Studio and validation.
  // nodeRunnable and useLeanRunContext: no disabled LangSmith run tree per node call, channel write or edge when
  // nothing traces (src/graph/node-runnable.ts).
  useLeanRunContext();
  const plan = routed(node(NODES.plan, makePlanNode(host)), afterPlan);
  const authorize = routed(node(NODES.authorize, makeAuthorizeNode(host)), afterDecisions);
  const humanReview = routed(node(NODES.human_review, makeHumanReviewNode(host)), afterDecisions);
  const execute = node(NODES.execute, makeExecuteNode(host));
  const observe = routed(node(NODES.observe, makeObserveNode(host)), afterObserve);
  return new StateGraph(AgentState)
    .addNode(NODES.plan, nodeRunnable(NODES.plan, plan), { ends: [NODES.authorize, NODES.observe] })
    .addNode(NODES.authorize, nodeRunnable(NODES.authorize, authorize), {
      ends: [NODES.execute, NODES.human_review, NODES.observe],
    })
    .addNode(NODES.human_review, nodeRunnable(NODES.human_review, humanReview), {
      ends: [NODES.execute, NODES.observe, NODES.human_review],
    })
    .addNode(NODES.execute, nodeRunnable(NODES.execute, execute))
    .addNode(NODES.observe, nodeRunnable(NODES.observe, observe), { ends: [NODES.plan, END] })
    .addEdge(START, NODES.plan)
    .addEdge(NODES.execute, NODES.observe);
}

const settings = loadSettings();

/** The builder on the default host (resources opened lazily on first use). */
export const builder = buildAgent(defaultHost(settings));

/** What `langgraph.json` serves. The serving layer supplies the checkpointer. */
export const graph = builder.compile().withConfig(runOptions(settings.budgets));
