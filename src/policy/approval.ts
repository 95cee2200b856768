/**
 * Approval requests and resume values (DESIGN §8). The interrupt payload is
 * agent-chat-ui compatible plus our binding; the resume value is validated
 * strictly and bound to actions by `action_id` or, without ids, by position.
 */
import type { Principal } from "../auth/principal.js";
import type { Decision, ReviewRule } from "./decision.js";
import { ResumeSchema, type InterruptPayload, type ResumeDecision } from "./resume.js";

type Review = Extract<Decision, { type: "review" }>;

const MAX_RESUME_BYTES = 64 * 1024;
export function interruptPayload(pending: readonly Review[]): InterruptPayload {
  return {
    action_requests: pending.map((review) => ({
      name: review.tool,
      args: review.model_args,
      description: review.description,
    })),
    review_configs: pending.map((review) => ({
      action_name: review.tool,
      allowed_decisions: ["approve", "edit", "reject"],
      rule: review.rule,
    })),
    approvals: pending.map((review) => ({ ...review.approval })),
  };
}

export type Binding =
  | { ok: true; pairs: { review: Review; decision: ResumeDecision }[] }
  | { ok: false; message: string };

/** Validates a resume value and pairs each decision with its pending action. */
export function bindResume(value: unknown, pending: readonly Review[]): Binding {
  let size: number;
  try {
    size = Buffer.byteLength(JSON.stringify(value) ?? "");
  } catch {
    return { ok: false, message: "the resume value is not JSON" };
  }
  if (size > MAX_RESUME_BYTES)
    return { ok: false, message: `the resume value is larger than ${MAX_RESUME_BYTES} bytes` };
  const parsed = ResumeSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, message: `resume ${issue?.path.join(".") || "value"}: ${issue?.message ?? "invalid"}` };
  }
  const decisions = parsed.data.decisions;
  const byId = decisions.some((decision) => decision.action_id !== undefined);
  if (!byId) {
    if (decisions.length !== pending.length) {
      return { ok: false, message: `expected ${pending.length} decision(s), got ${decisions.length}` };
    }
    return {
      ok: true,
      pairs: pending.map((review, index) => ({ review, decision: decisions[index] as ResumeDecision })),
    };
  }
  const pairs: { review: Review; decision: ResumeDecision }[] = [];
  for (const review of pending) {
    const matches = decisions.filter((decision) => decision.action_id === review.approval.action_id);
    if (matches.length !== 1)
      return { ok: false, message: `action ${review.approval.action_id} needs exactly one decision` };
    pairs.push({ review, decision: matches[0] as ResumeDecision });
  }
  if (pairs.length !== decisions.length)
    return { ok: false, message: "a decision names an action that is not pending" };
  return { ok: true, pairs };
}

/** The scope that makes a principal a reviewer of its tenant. */
export const REVIEWER_SCOPE = "approvals:decide";

/**
 * Whether `approver` may decide a review under `rule` for a run `owner`
 * started (DESIGN §8): the owner, or a reviewer of the owner's tenant, for
 * `owner_or_reviewer`; only a reviewer of the tenant other than the owner
 * (four eyes) for `reviewer_not_owner`.
 */
export function mayDecide(
  approver: Principal,
  owner: Pick<Principal, "user_id" | "tenant">,
  rule: ReviewRule,
): boolean {
  const isOwner = approver.user_id === owner.user_id && approver.tenant === owner.tenant;
  const isReviewer = approver.tenant === owner.tenant && approver.scopes.includes(REVIEWER_SCOPE);
  return rule === "owner_or_reviewer" ? isOwner || isReviewer : isReviewer && !isOwner;
}
