/**
 * What came of each action of a decided review, for the reviewer
 * (`POST /reviews/{thread_id}`): read from the thread's ledger and denials
 * after the resume run, matched to the review's actions through the call ids
 * the review was raised for. Pure: the route passes the two snapshots' values.
 */
import type { ResumeDecision } from "../policy/resume.js";
import type { ActionOutcome } from "../wording/proposal.js";

/** One action's result as the reviewer sees it. */
export interface ReviewedAction {
  action_id: string;
  tool: string;
  /** What the reviewer answered. */
  decision: ResumeDecision["type"] | null;
  outcome: ActionOutcome;
  /** The reviewer's reason for a rejection, or the denial's message for any other refusal. */
  reason: string | null;
  /** The arguments the action ran (or would have run) with, as the reviewer last saw or edited them. */
  args: Record<string, unknown>;
}

interface ReviewState {
  call_id: string;
  tool: string;
  model_args: Record<string, unknown>;
  approval: { action_id: string };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The actions waiting for review in a thread's values (the `review` decisions human_review raised). */
export function reviewsOf(values: unknown): ReviewState[] {
  const decisions = isRecord(values) && Array.isArray(values.decisions) ? values.decisions : [];
  return decisions.filter(
    (decision): decision is ReviewState =>
      isRecord(decision) &&
      decision.type === "review" &&
      typeof decision.call_id === "string" &&
      typeof decision.tool === "string" &&
      isRecord(decision.model_args) &&
      isRecord(decision.approval) &&
      typeof decision.approval.action_id === "string",
  );
}

function outcomeOf(
  decision: ResumeDecision | undefined,
  denial: Record<string, unknown> | undefined,
  ledgerStatus: string | undefined,
): ActionOutcome {
  if (denial) {
    if (denial.code === "approval_expired") return "expired";
    if (denial.code === "approval_rejected") return "rejected";
    return "failed";
  }
  if (ledgerStatus === "succeeded") return decision?.type === "edit" ? "edited_and_created" : "created";
  if (ledgerStatus === "running") return "pending";
  if (ledgerStatus !== undefined) return "failed";
  return "not_run";
}

/**
 * Per action of the review `before` (the thread's values when it waited), what the resume run left in `after`:
 * its ledger row's status and any denial of its call.
 */
export function reviewedActions(
  before: unknown,
  after: unknown,
  decisions: readonly ResumeDecision[],
): ReviewedAction[] {
  const denials = isRecord(after) && Array.isArray(after.denials) ? after.denials.filter(isRecord) : [];
  const ledger = isRecord(after) && Array.isArray(after.ledger) ? after.ledger.filter(isRecord) : [];
  return reviewsOf(before).map((review, index) => {
    const decision =
      decisions.find((item) => item.action_id === review.approval.action_id) ??
      (decisions.some((item) => item.action_id !== undefined) ? undefined : decisions[index]);
    const denial = denials.find((item) => item.call_id === review.call_id);
    // The last attempt of the call says how it ended.
    const rows = ledger.filter((row) => row.call_id === review.call_id);
    const last = rows[rows.length - 1];
    const outcome = outcomeOf(decision, denial, typeof last?.status === "string" ? last.status : undefined);
    const reason =
      outcome === "rejected"
        ? decision?.type === "reject"
          ? (decision.message ?? null)
          : null
        : typeof denial?.message === "string"
          ? denial.message
          : null;
    return {
      action_id: review.approval.action_id,
      tool: review.tool,
      decision: decision?.type ?? null,
      outcome,
      reason,
      args: decision?.type === "edit" ? decision.edited_action.args : review.model_args,
    };
  });
}
