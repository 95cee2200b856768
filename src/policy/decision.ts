/**
 * What `authorize` (and `human_review`) decide about each proposal. A
 * discriminated union, never a boolean plus a string.
 */
import type { ToolErrorCode } from "../errors.js";
import type { Risk } from "./contracts.js";

/** How a review ended (DESIGN §8). */
export const APPROVAL_OUTCOMES = ["approve", "edit", "reject", "expired", "edit_refused"] as const;
export type ApprovalOutcome = (typeof APPROVAL_OUTCOMES)[number];

/** Who may decide a review of this action (from the deployment's review policy for its risk). */
export type ReviewRule = "owner_or_reviewer" | "reviewer_not_owner";

/**
 * The named checks of the pipeline (`decide.ts`), in the order they run.
 * A denial names the check that refused it.
 */
export const CHECK_NAMES = [
  "offered",
  "arguments",
  "run_bound",
  "authorized",
  "budget",
  "repeat",
  "review",
  "approver",
  "expiry",
  "execution",
] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

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
  /** When the request was made (the reviewer's wait starts here). */
  requested_at: string;
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
  | Denial
  | ({ type: "review"; approval: ApprovalRequest; rule: ReviewRule; description: string } & CheckedAction);

/** A refused proposal: which check refused it, with a typed, repairable error. */
export interface Denial {
  type: "deny";
  call_id: string;
  tool: string;
  code: ToolErrorCode;
  message: string;
  /** The check that refused it. */
  check: CheckName;
  /** For `offered`: why this step's effective set left the tool out (`scope`, `stage`, `risk`, `unhealthy`, `not_relevant`, …). */
  withheld?: string;
  budget?: BudgetName;
  review?: ReviewStamp;
}

export type BudgetName = "model_turns" | "tool_calls" | "deadline" | "tokens" | "cost";

export const allowed = (decisions: readonly Decision[]) =>
  decisions.filter((decision): decision is Extract<Decision, { type: "allow" }> => decision.type === "allow");
export const denials = (decisions: readonly Decision[]) =>
  decisions.filter((decision): decision is Denial => decision.type === "deny");
export const pendingReview = (decisions: readonly Decision[]) =>
  decisions.filter((decision): decision is Extract<Decision, { type: "review" }> => decision.type === "review");
