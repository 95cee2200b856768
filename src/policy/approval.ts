/**
 * Approval requests and resume values (DESIGN §8). The interrupt payload is
 * agent-chat-ui compatible plus our binding; the resume value is validated
 * strictly and bound to actions by `action_id` or, without ids, by position.
 */
import { z } from "zod";
import type { Principal } from "../auth/principal.js";
import type { Decision, ReviewRule } from "./decision.js";

type Review = Extract<Decision, { type: "review" }>;

const MAX_RESUME_BYTES = 64 * 1024;
const actionId = z.string().min(1).max(100).optional();

export const ResumeDecisionSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("approve"), action_id: actionId }).strict(),
  z
    .object({
      type: z.literal("edit"),
      action_id: actionId,
      edited_action: z.object({ name: z.string().min(1).max(64), args: z.record(z.string(), z.unknown()) }).strict(),
    })
    .strict(),
  z.object({ type: z.literal("reject"), action_id: actionId, message: z.string().max(2000).optional() }).strict(),
]);
export type ResumeDecision = z.infer<typeof ResumeDecisionSchema>;

export const ResumeSchema = z.object({ decisions: z.array(ResumeDecisionSchema).min(1).max(64) }).strict();

export interface InterruptPayload {
  action_requests: { name: string; args: Record<string, unknown>; description: string }[];
  /** `rule`: who may decide (`owner_or_reviewer`, or `reviewer_not_owner` for four eyes). */
  review_configs: { action_name: string; allowed_decisions: ("approve" | "edit" | "reject")[]; rule: ReviewRule }[];
  approvals: { action_id: string; fingerprint: string; version: number; requested_at: string; expires_at: string }[];
  /** Present when the previous resume value was refused; the same request is asked again. */
  error?: { code: "invalid_resume" | "approver_not_permitted"; message: string; policies?: string[] };
}

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
