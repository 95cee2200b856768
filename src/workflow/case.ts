/**
 * case (every step of a claim investigation, a request naming a case id):
 * the CaseOps domain's own sequence, the one the rules planner follows
 * (snapshot and policy requirements → unclassified documents → alias
 * resolution → a verdict citing them), run by code each turn through the
 * same control plane. A case that cannot be read — missing, another
 * tenant's, refused — ends `needs_human` the same way in every case, so
 * the two cannot be told apart. Without the case tools (a principal who
 * may not use them) it asks for a human instead of proposing them.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { decideCase } from "../domains/caseops/rules.js";
import { observationsSinceRequest } from "../domains/rules-planner.js";
import type { Host } from "../host.js";
import { sanitizePlan } from "../planners/sanitize.js";
import { beginStep, concludeStep, proposeCalls, type StepUpdate } from "../graph/step.js";
import type { State } from "../state.js";
import { propose, workflowRequest } from "./request.js";

/** The tool whose offer shows the principal may investigate claims at all. */
const CASE_READER = "get_case_snapshot";

export function makeCaseNode(host: Host) {
  return async function investigate(state: State, config: LangGraphRunnableConfig): Promise<StepUpdate> {
    const step = await beginStep(host, state, config);
    const request = workflowRequest(step.request);
    if (request.kind !== "case")
      return concludeStep(state, step, { type: "error", code: "workflow_misrouted", message: "not a case request" });
    if (!step.offered.some((tool) => tool.name === CASE_READER))
      return concludeStep(state, step, {
        type: "needs_human",
        reason: "no tool that can read cases is available to you",
      });
    const outcome = sanitizePlan(
      decideCase(request.caseId, observationsSinceRequest(state.messages), state.evidence, propose),
      state.messages,
    );
    if (outcome.type === "tool_calls") return proposeCalls(state, step, outcome);
    return concludeStep(state, step, outcome);
  };
}
