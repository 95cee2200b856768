/**
 * study (every step of a study request): the study domain's own sequence,
 * run by code each turn: search the notes on the topic and
 * `calculate_schedule` → read the best relevant hits → one
 * `create_study_event` per session, all in one turn so they form one review
 * → the answer from what the calendar created (divisions: search each topic
 * → read the note backing it → shares among the supported topics). The
 * workflow's own branches apply to the notes it retrieves (branches.ts):
 * a refused read ends the run, one that failed for good stops it.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { observationsSinceRequest } from "../domains/rules-planner.js";
import { clockOf, profileOf } from "../domains/study/profile.js";
import { decideStudy } from "../domains/study/rules.js";
import type { Host } from "../host.js";
import { sanitizePlan } from "../planners/sanitize.js";
import { toToolSpec } from "../policy/contracts.js";
import { beginStep, concludeStep, proposeCalls, type StepUpdate } from "../graph/step.js";
import type { State } from "../state.js";
import { failureEnding } from "./branches.js";
import { propose, workflowRequest } from "./request.js";

const RETRIEVAL_TOOLS: ReadonlySet<string> = new Set(["search_notes", "read_note"]);

export function makeStudyNode(host: Host) {
  return async function study(state: State, config: LangGraphRunnableConfig): Promise<StepUpdate> {
    const step = await beginStep(host, state, config);
    const request = workflowRequest(step.request, clockOf(profileOf(step.run.context)));
    if (request.kind !== "study")
      return concludeStep(state, step, { type: "error", code: "workflow_misrouted", message: "not a study request" });
    if (request.parse.type === "needs_human")
      return concludeStep(state, step, { type: "needs_human", reason: request.parse.reason });
    const observations = observationsSinceRequest(state.messages);
    const ending = failureEnding(observations.filter((observation) => RETRIEVAL_TOOLS.has(observation.tool)));
    if (ending) return concludeStep(state, step, ending);
    const outcome = sanitizePlan(
      decideStudy(request.parse.request, step.offered.map(toToolSpec), state.evidence, observations, propose),
      state.messages,
    );
    if (outcome.type === "tool_calls") return proposeCalls(state, step, outcome);
    return concludeStep(state, step, outcome);
  };
}
