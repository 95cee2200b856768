/**
 * The fixed workflow's only ways to end other than an answer, decided from
 * what the tools answered (execute has already retried transient failures of
 * reads as their contracts allow):
 * - no usable evidence → abstain, saying what cannot be found
 *   (notes/question.ts `cannotFind`, used by read and generate);
 * - `access_denied` (or a tool the owner may not use) → final: the run ends
 *   as a refusal, nothing is retried or read around it;
 * - any other failure that outlived its retries (`tool_timeout`, …) → the
 *   run stops with `tool_failure`.
 * Pure.
 */
import type { StudyObservation } from "../domains/study/rules.js";
import type { PlanVerdict } from "../state.js";

type Observation = StudyObservation;
type Ending = Exclude<PlanVerdict, { type: "tool_calls" }>;

/** Codes that say the owner may not have this: final, never retried. */
const REFUSALS: ReadonlySet<string> = new Set(["access_denied", "tool_not_permitted"]);

function what(observation: Observation): string {
  const noteId = observation.args?.["note_id"];
  return typeof noteId === "string" ? noteId : observation.tool;
}

/** How the failed calls among `observations` end the run, or undefined when none failed. */
export function failureEnding(observations: readonly Observation[]): Ending | undefined {
  const failed = observations.filter((observation) => !observation.ok);
  const refused = failed.filter((observation) => REFUSALS.has(observation.code ?? ""));
  if (refused.length > 0) {
    const items = [...new Set(refused.map(what))].join(", ");
    return {
      type: "final",
      answer: `You may not read ${items} (access_denied), so I will not answer from it or look for it elsewhere.`,
      citations: [],
      abstained: true,
    };
  }
  const broken = failed[0];
  if (!broken) return undefined;
  const message = broken.message ? `: ${broken.message}` : "";
  return {
    type: "stop",
    code: "tool_failure",
    detail: `${broken.code ?? "tool_failed"}: ${broken.tool} (${what(broken)}) failed after its retries${message}`,
  };
}
