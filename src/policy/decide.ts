/**
 * The one place a call is decided. The named, pure checks of `checks.ts` run
 * in order at three stages:
 *
 *   propose  offered → arguments → run_bound → authorized → budget → repeat → review rule
 *   edit     expiry → review (the reviewer's answer) → for an edit, the propose checks
 *            on the edited version, which is then allowed as reviewed
 *   execute  execution → run_bound → authorized (against the owner's current permissions)
 *
 * Each check either passes or refuses with a typed denial tagged with its
 * name; the `approver` check refuses a resume rather than a call (see
 * `approverRefusal`). "Why was this call denied?" is answered by the
 * denial's `check` and `checks.ts`.
 */
import { randomUUID } from "node:crypto";
import type { Principal } from "../auth/principal.js";
import type { ResumeDecision } from "./resume.js";
import { injectArguments } from "./authorization.js";
import {
  argumentsValid,
  authorized,
  budget,
  type Candidate,
  type Check,
  type Counters,
  type DecideContext,
  execution,
  expiry,
  offered,
  repeat,
  requireArgs,
  requireTool,
  reviewAnswer,
  runBound,
} from "./checks.js";
import type { ReviewPolicy } from "./config.js";
import type { CatalogTool, Proposal } from "./contracts.js";
import type { CheckedAction, Decision, Denial, ReviewRule, Stage } from "./decision.js";
import { actionFingerprint } from "./fingerprint.js";

type Review = Extract<Decision, { type: "review" }>;

/** The checks each stage runs, in order. */
export const STAGES: Readonly<Record<Stage, readonly Check[]>> = {
  propose: [offered, argumentsValid, runBound, authorized, budget, repeat],
  edit: [expiry, reviewAnswer],
  execute: [execution, runBound, authorized],
};

/** The proposal checks, in order. `review` is not a refusal check: it decides allow or review at the end. */
export const CHECKS: readonly Check[] = STAGES.propose;

/** Runs `checks` in order: the first refusal becomes the call's denial. */
function runChecks(
  checks: readonly Check[],
  candidate: Candidate,
  context: DecideContext,
  counters: Counters,
): { ok: true; candidate: Candidate } | { ok: false; denial: Denial } {
  let current = candidate;
  for (const check of checks) {
    const result = check.run(current, context, counters);
    if (!result.ok) {
      const { proposal } = current;
      return {
        ok: false,
        denial: { type: "deny", call_id: proposal.call_id, tool: proposal.name, check: check.name, ...result.denial },
      };
    }
    current = result.candidate;
  }
  return { ok: true, candidate: current };
}

/** Who must decide an action of this risk, or null when none is needed (the deployment's review policy). */
export function reviewRuleFor(tool: CatalogTool, policy: ReviewPolicy): ReviewRule | null {
  const rule = policy[tool.contract.risk];
  return rule === "none" ? null : rule;
}

export interface DecideOptions {
  /**
   * A reviewer's edit: it is the reviewed version, so the final check allows
   * it rather than asking again. Everything before it runs as for a proposal.
   */
  reviewed?: { version: number };
}

/** Decides one proposal. Pure: the counters it returns include this decision's reservation. */
export function decideOne(
  proposal: Proposal,
  context: DecideContext,
  counters: Counters,
  options: DecideOptions = {},
): { decision: Decision; counters: Counters } {
  const start: Candidate = options.reviewed ? { proposal, stage: "edit", reviewed: true } : { proposal };
  const checked = runChecks(STAGES.propose, start, context, counters);
  if (!checked.ok) return { decision: checked.denial, counters };
  const candidate = checked.candidate;
  const tool = requireTool(candidate);
  const modelArgs = requireArgs(candidate);
  const fingerprint = candidate.fingerprint ?? actionFingerprint(tool.name, modelArgs);
  const action: CheckedAction = {
    call_id: proposal.call_id,
    tool: tool.name,
    server: tool.server,
    risk: tool.contract.risk,
    args: injectArguments(tool, modelArgs, context.owner, context.threadId),
    model_args: modelArgs,
    fingerprint,
  };
  const reserved: Counters = {
    budgetLeft: counters.budgetLeft - 1,
    repeats: {
      ...counters.repeats,
      [fingerprint]: (Object.hasOwn(counters.repeats, fingerprint) ? (counters.repeats[fingerprint] ?? 0) : 0) + 1,
    },
  };
  const rule = reviewRuleFor(tool, context.reviewPolicy);
  if (rule === null || options.reviewed) return { decision: { type: "allow", ...action }, counters: reserved };
  const requestedAt = new Date(context.now).toISOString();
  const whose = rule === "reviewer_not_owner" ? "a reviewer's" : "your";
  return {
    decision: {
      type: "review",
      ...action,
      rule,
      description: `${tool.name} (${tool.contract.risk.replace("_", " ")}) needs ${whose} approval`,
      approval: {
        action_id: randomUUID(),
        fingerprint,
        version: 1,
        requested_at: requestedAt,
        expires_at: new Date(context.now + tool.contract.approval_ttl_ms).toISOString(),
      },
    },
    counters: reserved,
  };
}

/** Decides a step's proposals in order; each reservation counts against the next. */
export function decideAll(
  proposals: readonly Proposal[],
  context: DecideContext,
  counters: Counters,
): { decisions: Decision[]; counters: Counters } {
  const decisions: Decision[] = [];
  let current = counters;
  for (const proposal of proposals) {
    const { decision, counters: next } = decideOne(proposal, context, current);
    decisions.push(decision);
    current = next;
  }
  return { decisions, counters: current };
}

/**
 * The edit stage: a reviewer's answer to one pending review. Expired or
 * rejected → denied; approved → the reviewed action as it was; edited → the
 * edited version through the proposal checks as the run's owner, allowed as
 * reviewed (never sent back for review).
 */
export function decideAnswer(
  review: Review,
  answer: ResumeDecision,
  context: DecideContext,
  counters: Counters,
  approver: Principal,
): { decision: Exclude<Decision, Review>; counters: Counters } {
  const { approval, description: _description, rule: _rule, type: _type, ...action } = review;
  const proposal: Proposal = { call_id: review.call_id, name: review.tool, raw_arguments: "" };
  const checked = runChecks(
    STAGES.edit,
    { proposal, answer: { review, decision: answer, approver } },
    context,
    counters,
  );
  if (!checked.ok) return { decision: checked.denial, counters };
  if (answer.type !== "edit") return { decision: { type: "allow", ...action }, counters };
  const edited: Proposal = { ...proposal, raw_arguments: JSON.stringify(answer.edited_action.args) };
  const result = decideOne(edited, context, counters, { reviewed: { version: approval.version + 1 } });
  if (result.decision.type === "review") throw new Error("pipeline: a reviewed edit is never sent back for review");
  return { decision: result.decision, counters: result.counters };
}

/**
 * The execute stage: an allowed call about to run, checked again as the owner
 * is now (a scope revoked while a review waited, a tool withdrawn since).
 * Returns the current catalog entry, or the call's denial.
 */
export function decideExecution(
  action: Extract<Decision, { type: "allow" }>,
  context: DecideContext,
  stage: "execute" | "still_listed" = "execute",
): { ok: true; tool: CatalogTool } | { ok: false; denial: Denial } {
  const proposal: Proposal = { call_id: action.call_id, name: action.tool, raw_arguments: "" };
  // A write already sent is settled by reconciliation whatever changed since: only its tool must still be there.
  const checks = stage === "execute" ? STAGES.execute : [execution];
  // The budget was reserved when the call was allowed; execute checks no counters.
  const reviewed = action.review !== undefined && action.review.outcome !== "reject";
  const candidate: Candidate = { proposal, modelArgs: action.model_args, stage: "execute", reviewed };
  const checked = runChecks(checks, candidate, context, {
    budgetLeft: 0,
    repeats: {},
  });
  return checked.ok ? { ok: true, tool: requireTool(checked.candidate) } : checked;
}
