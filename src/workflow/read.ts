/**
 * read (second step of a notes question): the notes the question names, then
 * the search hits that support the question (of the course it names, on its
 * topic, by the server's calibrated scores: notes/question.ts, retrieval.ts),
 * each read once with `read_note`. A search that
 * was refused or failed for good ends the run (see branches.ts); nothing
 * worth reading → abstain, saying what cannot be found.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { cannotFind, retrieveFor } from "../domains/notes/question.js";
import { searchHits } from "../domains/notes/relevance.js";
import { observationsSinceRequest } from "../domains/rules-planner.js";
import type { Host } from "../host.js";
import { sanitizeProposals } from "../planners/sanitize.js";
import { beginStep, concludeStep, proposeCalls, type StepUpdate } from "../graph/step.js";
import type { State } from "../state.js";
import { failureEnding } from "./branches.js";
import { notesRequest, propose, READ_LIMIT } from "./request.js";

export function makeReadNode(host: Host) {
  return async function read(state: State, config: LangGraphRunnableConfig): Promise<StepUpdate> {
    const step = await beginStep(host, state, config);
    const request = notesRequest(step.request);
    const searches = observationsSinceRequest(state.messages).filter(
      (observation) => observation.tool === "search_notes",
    );
    const ending = failureEnding(searches);
    if (ending) return concludeStep(state, step, ending);
    // The same retrieval as the rules planner: the server's calibrated scores, thresholded (notes/retrieval.ts).
    const retrieval = retrieveFor(
      request,
      searches.flatMap((search) => searchHits(search.structured)),
      READ_LIMIT,
      step.request,
    );
    const hits = retrieval.type === "answer" ? retrieval.note_ids : [];
    const chosen = [...new Set([...request.named, ...hits])].slice(0, READ_LIMIT);
    if (chosen.length === 0)
      return concludeStep(state, step, cannotFind(request, retrieval.type === "abstain" ? retrieval.closest : []));
    // Note ids come from the search's output: made storable like any proposal before they are kept.
    return proposeCalls(state, step, {
      type: "tool_calls",
      calls: sanitizeProposals(
        chosen.map((noteId) => propose("read_note", { note_id: noteId })),
        state.messages,
      ),
    });
  };
}
