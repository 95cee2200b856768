/**
 * The rules planner's CaseOps branch: snapshot → requirements → unclassified
 * documents → alias resolution → a verdict with evidence refs. Code, not a
 * model, owns this sequence.
 */
import type { Evidence } from "../../state/evidence.js";
import type { PlanOutcome } from "../../planners/planner.js";
import type { Proposal } from "../../policy/contracts.js";

export const CASE_ID = /\bC-[0-9]{3}\b/;

export interface CaseObservation {
  tool: string;
  ok: boolean;
  structured: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

function latest(observations: readonly CaseObservation[], tool: string): CaseObservation | undefined {
  return observations.filter((observation) => observation.tool === tool).at(-1);
}

function refOf(evidence: readonly Evidence[], tool: string, itemId?: string): string[] {
  return evidence
    .filter((item) => item.tool === tool && (itemId === undefined || item.item_id === itemId))
    .map((item) => item.ref)
    .slice(-1);
}

/** The next CaseOps step, or a final verdict. */
export function decideCase(
  caseId: string,
  observations: readonly CaseObservation[],
  evidence: readonly Evidence[],
  call: (name: string, args: Record<string, unknown>) => Proposal,
): PlanOutcome {
  const snapshot = latest(observations, "get_case_snapshot");
  const policy = latest(observations, "get_policy_requirements");
  if (!snapshot || !policy) {
    const calls = [];
    if (!snapshot) calls.push(call("get_case_snapshot", { case_id: caseId }));
    if (!policy) calls.push(call("get_policy_requirements", { case_id: caseId }));
    return { type: "tool_calls", calls };
  }
  if (!snapshot.ok || !policy.ok || !isRecord(snapshot.structured) || !isRecord(policy.structured)) {
    return { type: "needs_human", reason: `case ${caseId} could not be read` };
  }
  const present = new Set(strings(snapshot.structured["document_codes"]));
  const missing = strings(policy.structured["required_documents"]).filter((code) => !present.has(code));
  const base = [...refOf(evidence, "get_case_snapshot"), ...refOf(evidence, "get_policy_requirements")];
  if (missing.length === 0)
    return {
      type: "final",
      answer: `DOCUMENTS_COMPLETE: case ${caseId} has every required document.`,
      citations: base,
      abstained: false,
    };

  const listing = latest(observations, "list_unclassified_documents");
  if (!listing) return { type: "tool_calls", calls: [call("list_unclassified_documents", { case_id: caseId })] };
  const documents =
    listing.ok && isRecord(listing.structured) && Array.isArray(listing.structured["documents"])
      ? listing.structured["documents"]
      : [];
  const documentIds = documents.flatMap((document) =>
    isRecord(document) && typeof document["document_id"] === "string" ? [document["document_id"]] : [],
  );

  const resolutions = observations.filter((observation) => observation.tool === "resolve_document_alias");
  if (documentIds.length > 0 && resolutions.length === 0) {
    return {
      type: "tool_calls",
      calls: documentIds.map((documentId) =>
        call("resolve_document_alias", { case_id: caseId, document_id: documentId }),
      ),
    };
  }
  const covered = new Map<string, string>();
  for (const resolution of resolutions) {
    const result = resolution.structured;
    if (
      resolution.ok &&
      isRecord(result) &&
      typeof result["normalized_code"] === "string" &&
      typeof result["document_id"] === "string"
    ) {
      if (missing.includes(result["normalized_code"])) covered.set(result["normalized_code"], result["document_id"]);
    }
  }
  const stillMissing = missing.filter((code) => !covered.has(code));
  if (stillMissing.length === 0) {
    const aliasRefs = [...covered.values()].flatMap((documentId) =>
      refOf(evidence, "resolve_document_alias", documentId),
    );
    const mapped = [...covered.entries()].map(([code, documentId]) => `${documentId} → ${code}`).join(", ");
    return {
      type: "final",
      answer: `DOCUMENTS_COMPLETE_AFTER_NORMALIZATION: case ${caseId} is complete once ${mapped} is recognised.`,
      citations: [...base, ...aliasRefs],
      abstained: false,
    };
  }
  return {
    type: "final",
    answer: `DOCUMENTS_MISSING: case ${caseId} lacks ${stillMissing.join(", ")}.`,
    citations: base,
    abstained: false,
  };
}
