/**
 * retrieve (the workflow's first step for a notes question): one search of
 * the permitted notes with the question's content words. It plays the plan
 * node's part (starts the run, offers this step's tools, records the
 * proposal) without a planner: authorize decides the search like any call.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Host } from "../host.js";
import { sanitizeProposals } from "../planners/sanitize.js";
import { beginStep, proposeCalls, type StepUpdate } from "../graph/step.js";
import type { State } from "../state.js";
import { notesRequest, propose, SEARCH_LIMIT } from "./request.js";

export function makeRetrieveNode(host: Host) {
  return async function retrieve(state: State, config: LangGraphRunnableConfig): Promise<StepUpdate> {
    const step = await beginStep(host, state, config);
    const { query } = notesRequest(step.request);
    return proposeCalls(state, step, {
      type: "tool_calls",
      calls: sanitizeProposals([propose("search_notes", { query, limit: SEARCH_LIMIT })], state.messages),
    });
  };
}
