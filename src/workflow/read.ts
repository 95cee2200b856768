/**
 * read (second step of a notes question): the notes the question names, then
 * the search hits above the relevance floor, each read once with
 * `read_note`. A search that was refused or failed for good ends the run
 * (see branches.ts); nothing worth reading → abstain.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { contentTerms, isRelevant, searchHits } from "../domains/notes/relevance.js";
import { observationsSinceRequest } from "../domains/rules-planner.js";
import type { Host } from "../host.js";
import { sanitizeProposals } from "../planners/sanitize.js";
import { beginStep, concludeStep, proposeCalls, type StepUpdate } from "../runtime/step.js";
import type { State } from "../state.js";
import { failureEnding, NO_EVIDENCE } from "./branches.js";
import { propose, READ_LIMIT, workflowRequest } from "./request.js";

export function makeReadNode(host: Host) {
  return async function read(state: State, config: LangGraphRunnableConfig): Promise<StepUpdate> {
    const step = await beginStep(host, state, config);
    const request = workflowRequest(step.request);
    const searches = observationsSinceRequest(state.messages).filter((observation) => observation.tool === "search_notes");
    const ending = failureEnding(searches);
    if (ending) return concludeStep(state, step, ending);
    const named = request.kind === "notes" ? request.named : [];
    const terms = contentTerms(request.kind === "notes" ? request.query : step.request);
    const hits = searches.flatMap((search) => searchHits(search.structured)).filter((hit) => isRelevant(hit, terms)).map((hit) => hit.note_id);
    const chosen = [...new Set([...named, ...hits])].slice(0, READ_LIMIT);
    if (chosen.length === 0) return concludeStep(state, step, NO_EVIDENCE);
    // Note ids come from the search's output: made storable like any proposal before they are kept.
    return proposeCalls(state, step, { type: "tool_calls", calls: sanitizeProposals(chosen.map((noteId) => propose("read_note", { note_id: noteId })), state.messages) });
  };
}
