/**
 * The fixed workflow: wiring only. Code (not a model) owns the sequence; its
 * steps live in src/workflow, and the control plane is the agent's own nodes
 * (authorize → execute | human_review → observe), so both graphs share tools,
 * contracts, budgets, ledger, approvals, audit and checkpointer.
 *
 *   START → retrieve | study | case
 *   retrieve, read, generate, study, case → authorize | validate | observe
 *   authorize → execute | human_review | observe;  execute → observe
 *   validate → observe;  observe → read | generate | study | case | END
 *
 * The evaluation builds it beside the agent, around one host.
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
import { afterDecisions, runOptions } from "../src/graph/routes.js";
import { AgentState, NODES } from "../src/state.js";
import { makeCaseNode } from "../src/workflow/case.js";
import { makeGenerateNode } from "../src/workflow/generate.js";
import { makeReadNode } from "../src/workflow/read.js";
import { makeRetrieveNode } from "../src/workflow/retrieve.js";
import { afterStep, makeFirstStep, nextStep, STEPS } from "../src/workflow/route.js";
import { makeStudyNode } from "../src/workflow/study.js";
import { makeValidateNode } from "../src/workflow/validate.js";
import type { NodeWrapper } from "./agent.js";

const afterSteps = [NODES.authorize, STEPS.validate, NODES.observe];

/**
 * Builds the workflow's graph around a host (tests and the evaluation pass
 * their own). `wrap` sees each workflow step under the name of the agent node
 * whose fields it writes (`plan`), so ownership checks apply unchanged.
 */
export function buildWorkflow(host: Host, wrap: NodeWrapper = (_name, node) => node) {
  // Every node opens holding for its thread's saves as it starts; observe declares the run's end (save-holding.ts).
  const node: NodeWrapper = (name, fn) => holdingSaves(host, wrap(name, fn));
  return new StateGraph(AgentState)
    .addNode(STEPS.retrieve, node(NODES.plan, makeRetrieveNode(host)))
    .addNode(STEPS.read, node(NODES.plan, makeReadNode(host)))
    .addNode(STEPS.generate, node(NODES.plan, makeGenerateNode(host)))
    .addNode(STEPS.study, node(NODES.plan, makeStudyNode(host)))
    .addNode(STEPS.case, node(NODES.plan, makeCaseNode(host)))
    .addNode(STEPS.validate, node(NODES.plan, makeValidateNode()))
    .addNode(NODES.authorize, node(NODES.authorize, makeAuthorizeNode(host)))
    .addNode(NODES.human_review, node(NODES.human_review, makeHumanReviewNode(host)))
    .addNode(NODES.execute, node(NODES.execute, makeExecuteNode(host)))
    .addNode(NODES.observe, node(NODES.observe, makeObserveNode(host)))
    .addConditionalEdges(START, makeFirstStep(host.contextProviders), [STEPS.retrieve, STEPS.study, STEPS.case])
    .addConditionalEdges(STEPS.retrieve, afterStep, afterSteps)
    .addConditionalEdges(STEPS.read, afterStep, afterSteps)
    .addConditionalEdges(STEPS.generate, afterStep, afterSteps)
    .addConditionalEdges(STEPS.study, afterStep, afterSteps)
    .addConditionalEdges(STEPS.case, afterStep, afterSteps)
    .addEdge(STEPS.validate, NODES.observe)
    .addConditionalEdges(NODES.authorize, afterDecisions, [NODES.execute, NODES.human_review, NODES.observe])
    .addConditionalEdges(NODES.human_review, afterDecisions, [NODES.execute, NODES.observe, NODES.human_review])
    .addEdge(NODES.execute, NODES.observe)
    .addConditionalEdges(NODES.observe, nextStep, [STEPS.read, STEPS.generate, STEPS.study, STEPS.case, END]);
}

const settings = loadSettings();

/** The builder on the default host: its planner (rules, or the configured model) is used only by generate. */
export const builder = buildWorkflow(defaultHost(settings));

/** What `langgraph.json` serves as `workflow`. The serving layer supplies the checkpointer. */
export const graph = builder.compile().withConfig(runOptions(settings.budgets));
