/**
 * The shapes a review travels in: the interrupt payload the server sends and
 * the resume value it accepts, with the zod schema it validates that with.
 * Nothing here needs Node, so the page imports these types as they are
 * (web/src/types.ts); the binding of decisions to actions is approval.ts.
 */
import { z } from "zod";
import type { ReviewRule } from "./decision.js";

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
