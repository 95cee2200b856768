/**
 * Run-bound arguments: values the host fixes for a whole run from the
 * request (never from the model), e.g. the one case a CaseOps run may touch.
 * Authorization denies any call whose argument differs (fail-closed when a
 * contract declares a run-bound argument and the run has none).
 */
import { CASE_ID } from "../domains/caseops/rules.js";

/** The run-bound values for a request: the explicit case, else the one case id the request names. */
export function runBoundFor(request: string, caseId?: string): Record<string, string> {
  const found = caseId ?? CASE_ID.exec(request)?.[0];
  return found ? { case_id: found } : {};
}
