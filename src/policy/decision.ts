/**
 * What `authorize` (and `human_review`) decide about each proposal. A
 * discriminated union, never a boolean plus a string.
 */
import type { ToolErrorCode } from "../errors.js";
import type { ApprovalOutcome } from "../runtime/approvals.js";
import type { Risk } from "../runtime/ledger.js";

/** The fields every checked, well-formed action carries. */
export interface CheckedAction {
  call_id: string;
  tool: string;
  server: string;
  risk: Risk;
  /** Arguments as the MCP server will receive them (host-injected ones included). */
  args: Record<string, unknown>;
  /** Arguments as the model proposed them (what a reviewer sees and edits). */
  model_args: Record<string, unknown>;
  fingerprint: string;
}

/** An approval request, bound to one exact action (DESIGN §8). */
export interface ApprovalRequest {
  action_id: string;
  fingerprint: string;
  version: number;
  expires_at: string;
}

/** Who decided a review, and how (set on decisions that came out of human_review). */
export interface ReviewStamp {
  approver: string;
  outcome: ApprovalOutcome;
  decided_at: string;
}

export type Decision =
  | ({ type: "allow"; review?: ReviewStamp } & CheckedAction)
  | { type: "deny"; call_id: string; tool: string; code: ToolErrorCode; message: string; budget?: BudgetName; review?: ReviewStamp }
  | ({ type: "review"; approval: ApprovalRequest; description: string } & CheckedAction);

export type BudgetName = "model_turns" | "tool_calls" | "deadline" | "tokens" | "cost";

export const allowed = (decisions: readonly Decision[]) =>
  decisions.filter((decision): decision is Extract<Decision, { type: "allow" }> => decision.type === "allow");
export const pendingReview = (decisions: readonly Decision[]) =>
  decisions.filter((decision): decision is Extract<Decision, { type: "review" }> => decision.type === "review");
