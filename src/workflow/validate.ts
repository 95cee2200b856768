/**
 * validate (last step before observe ends the run): every citation of the
 * answer must be an item this run retrieved (retrieved.ts); one that is
 * not — invented, or seen only by an earlier run of the thread — stops the
 * run with `unsupported_citation`, whatever the answer says. Writes only the
 * verdict, and only to replace it.
 */
import { latestRequest } from "../planners/context.js";
import type { State, Update } from "../state.js";
import { workflowRequest } from "./request.js";
import { retrievedEvidence } from "./retrieved.js";

export function makeValidateNode() {
  return async function validate(state: State): Promise<Pick<Update, "verdict">> {
    const verdict = state.verdict;
    if (verdict?.type !== "final" || verdict.citations.length === 0) return {};
    const retrieval = workflowRequest(latestRequest(state.messages)).kind === "case" ? "case" : "notes";
    const retrieved = new Set(retrievedEvidence(state.messages, state.evidence, retrieval).map((item) => item.ref));
    const outside = [...new Set(verdict.citations)].filter((ref) => !retrieved.has(ref));
    if (outside.length === 0) return {};
    return {
      verdict: {
        type: "stop",
        code: "unsupported_citation",
        detail: `cited refs not in the retrieved set: ${outside.join(", ")}`,
      },
    };
  };
}
