/**
 * What `authorize` (and `human_review`) decide about each proposal. A
 * discriminated union, never a boolean plus a string.
 */
import { z } from "zod";
import { TOOL_ERROR_CODES } from "../errors.js";
import { RISKS } from "./contracts.js";
import { ENGINE_ERRORS } from "./engine-errors.js";

/** How a review ended (DESIGN §8). */
export const APPROVAL_OUTCOMES = ["approve", "edit", "reject", "expired", "edit_refused"] as const;
export type ApprovalOutcome = (typeof APPROVAL_OUTCOMES)[number];

/** Who may decide a review of this action (from the deployment's review policy for its risk). */
export const REVIEW_RULES = ["owner_or_reviewer", "reviewer_not_owner"] as const;
export type ReviewRule = (typeof REVIEW_RULES)[number];

/**
 * The named checks of the pipeline (`checks.ts`, run by `decide.ts`): the
 * proposal checks in the order they run, then those of the later stages.
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
export const CheckedActionSchema = z.object({
  call_id: z.string(),
  tool: z.string(),
  server: z.string(),
  risk: z.enum(RISKS),
  /** Arguments as the MCP server will receive them (host-injected ones included). */
  args: z.record(z.string(), z.unknown()),
  /** Arguments as the model proposed them (what a reviewer sees and edits). */
  model_args: z.record(z.string(), z.unknown()),
  fingerprint: z.string(),
});
export type CheckedAction = z.infer<typeof CheckedActionSchema>;

/** An approval request, bound to one exact action (DESIGN §8). */
export const ApprovalRequestSchema = z.object({
  action_id: z.string(),
  fingerprint: z.string(),
  version: z.number().int(),
  /** When the request was made (the reviewer's wait starts here). */
  requested_at: z.string(),
  expires_at: z.string(),
});
export type ApprovalRequest = z.infer<typeof ApprovalRequestSchema>;

/** Who decided a review, and how (set on decisions that came out of human_review). */
export const ReviewStampSchema = z.object({
  approver: z.string(),
  outcome: z.enum(APPROVAL_OUTCOMES),
  decided_at: z.string(),
});
export type ReviewStamp = z.infer<typeof ReviewStampSchema>;

/** Where a call is decided (decide.ts): its proposal, a reviewer's answer to its review, the moment before it runs. */
export const STAGES_IN_ORDER = ["propose", "edit", "execute"] as const;
export type Stage = (typeof STAGES_IN_ORDER)[number];

export const BUDGET_NAMES = ["model_turns", "tool_calls", "deadline", "tokens", "cost"] as const;

/**
 * A refused call: which check refused it, with a typed, repairable error.
 * The zod schema is the one description: the type, the API's JSON Schema and
 * the page's reader all come from it.
 */
export const DenialSchema = z.object({
  type: z.literal("deny"),
  call_id: z.string(),
  tool: z.string(),
  code: z.enum(TOOL_ERROR_CODES),
  message: z.string(),
  /** The check that refused it. */
  check: z.enum(CHECK_NAMES),
  /** For `offered`: why this step's effective set left the tool out (`scope`, `stage`, `risk`, `unhealthy`, `not_relevant`, …). */
  withheld: z.string().optional(),
  budget: z.enum(BUDGET_NAMES).optional(),
  review: ReviewStampSchema.optional(),
  /** For `authorized` under a policy language engine: the ids of the policies that decided (none: default deny). */
  policies: z.array(z.string()).optional(),
  /** For `authorized`: the engine could not decide, so the call was refused (fail closed). */
  engine_error: z.enum(ENGINE_ERRORS).optional(),
});
export type Denial = z.infer<typeof DenialSchema>;

/** Per proposal: allowed, denied, or waiting for a review. */
export const DecisionSchema = z.discriminatedUnion("type", [
  CheckedActionSchema.extend({ type: z.literal("allow"), review: ReviewStampSchema.optional() }),
  DenialSchema,
  CheckedActionSchema.extend({
    type: z.literal("review"),
    approval: ApprovalRequestSchema,
    rule: z.enum(REVIEW_RULES),
    description: z.string(),
  }),
]);
export type Decision = z.infer<typeof DecisionSchema>;

export type BudgetName = (typeof BUDGET_NAMES)[number];

/** A denial as the run keeps it (state `denials`): the run and the stage it was refused at. */
export const RecordedDenialSchema = DenialSchema.extend({ run_id: z.string(), stage: z.enum(STAGES_IN_ORDER) });
export type RecordedDenial = z.infer<typeof RecordedDenialSchema>;

export const allowed = (decisions: readonly Decision[]) =>
  decisions.filter((decision): decision is Extract<Decision, { type: "allow" }> => decision.type === "allow");
export const denials = (decisions: readonly Decision[]) =>
  decisions.filter((decision): decision is Denial => decision.type === "deny");
export const pendingReview = (decisions: readonly Decision[]) =>
  decisions.filter((decision): decision is Extract<Decision, { type: "review" }> => decision.type === "review");
