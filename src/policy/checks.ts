/**
 * The named checks of the policy pipeline: small pure functions, each passing
 * a candidate on (with what it established: the tool, the parsed arguments,
 * the fingerprint) or refusing it with a typed denial tagged with its name.
 * `decide.ts` runs them in order at each stage (a proposal, a reviewer's
 * answer, an execution); no code outside src/policy/ builds a denial.
 */
import type { Principal } from "../auth/principal.js";
import type { ResumeDecision } from "./resume.js";
import { ACCESS_DENIED_MESSAGE, runBoundMatches } from "./authorization.js";
import type { ReviewPolicy } from "./config.js";
import type { CatalogTool, Proposal } from "./contracts.js";
import type { CheckName, Decision, Denial, Stage } from "./decision.js";
import { builtinEngine, type PolicyEngine } from "./engine.js";
import { actionFingerprint } from "./fingerprint.js";
import { validateArguments } from "./validation.js";

type Review = Extract<Decision, { type: "review" }>;

/** What the checks know about the step. Everything here comes from the host, never from the model. */
export interface DecideContext {
  /** This step's effective set, and why other tools were left out. */
  offer: { offered: readonly string[]; withheld: readonly { tool: string; reason: string }[] };
  /** The catalog: contracted tools the servers list, and whether a name is listed at all. */
  catalog: { find(name: string): CatalogTool | undefined; isListed(name: string): boolean };
  /** The run's owner: every effect runs on the owner's behalf, whoever proposed or edited it. */
  owner: Principal;
  threadId: string;
  runBound: Record<string, unknown>;
  reviewPolicy: ReviewPolicy;
  maxRepeats: number;
  now: number;
  /** The engine the `authorized` check asks (`policy.engine` in the config); the built-in one when absent. */
  engine?: PolicyEngine;
}

/** What the step has used so far; the pipeline returns updated copies, never mutates them. */
export interface Counters {
  /** Tool executions still available to the run. */
  budgetLeft: number;
  /** Authorized action fingerprints of the run, and how often each was authorized. */
  repeats: Readonly<Record<string, number>>;
}

/** A proposal on its way through the checks; each check may add what it established. */
export interface Candidate {
  proposal: Proposal;
  tool?: CatalogTool;
  modelArgs?: Record<string, unknown>;
  fingerprint?: string;
  /** At the edit stage: the pending review, the answer to it and who sent that answer. */
  answer?: { review: Review; decision: ResumeDecision; approver: Principal };
  /** Where the candidate is checked (propose when absent) and whether a reviewer approved this version. */
  stage?: Stage;
  reviewed?: boolean;
}

export type CheckResult =
  | { ok: true; candidate: Candidate }
  | { ok: false; denial: Omit<Denial, "type" | "call_id" | "tool" | "check"> };

export interface Check {
  name: CheckName;
  run(candidate: Candidate, context: DecideContext, counters: Counters): CheckResult;
}

export const pass = (candidate: Candidate): CheckResult => ({ ok: true, candidate });
export const refuse = (
  code: Denial["code"],
  message: string,
  extra: Pick<Denial, "withheld" | "budget" | "policies" | "engine_error"> = {},
): CheckResult => ({ ok: false, denial: { code, message, ...extra } });

/** The tool exists and this step's effective set offers it. A hidden tool proposed anyway is `tool_not_permitted`. */
export const offered: Check = {
  name: "offered",
  run(candidate, context) {
    // plan replaced a name it could not store (control, bidi, zero-width characters) with a placeholder: say why.
    const refusal = candidate.proposal.refusal;
    if (refusal?.code === "unknown_tool") return refuse(refusal.code, refusal.message);
    const name = candidate.proposal.name;
    const tool = context.offer.offered.includes(name) ? context.catalog.find(name) : undefined;
    if (tool) return pass({ ...candidate, tool });
    if (!context.catalog.isListed(name) && !context.catalog.find(name)) return refuse("unknown_tool", "no such tool");
    const withheld = context.offer.withheld.find((entry) => entry.tool === name)?.reason ?? "not_offered";
    return refuse("tool_not_permitted", `this tool is not available in this step (${withheld})`, { withheld });
  },
};

/** The raw argument text parses strictly and matches the model-visible schema. */
export const argumentsValid: Check = {
  name: "arguments",
  run(candidate) {
    // plan refused a call id it could not store, or argument text over any limit (planners/sanitize).
    const refusal = candidate.proposal.refusal;
    if (refusal) return refuse(refusal.code, refusal.message);
    const tool = requireTool(candidate);
    const validation = validateArguments(tool, candidate.proposal.raw_arguments);
    if (!validation.ok) return refuse(validation.code, validation.message);
    return pass({ ...candidate, modelArgs: validation.args });
  },
};

/** Arguments the contract binds to the run equal the values the host fixed for it. */
export const runBound: Check = {
  name: "run_bound",
  run(candidate, context) {
    const tool = requireTool(candidate);
    if (!runBoundMatches(tool.contract, requireArgs(candidate), context.runBound))
      return refuse("access_denied", ACCESS_DENIED_MESSAGE);
    return pass(candidate);
  },
};

/**
 * The owner may make this call on the resource its arguments name (before any
 * existence check): the policy engine decides, from the principal, the tool,
 * the resource, the arguments and the run's state.
 */
export const authorized: Check = {
  name: "authorized",
  run(candidate, context, counters) {
    const tool = requireTool(candidate);
    const args = requireArgs(candidate);
    const fingerprint = candidate.fingerprint ?? actionFingerprint(tool.name, args);
    const answer = (context.engine ?? builtinEngine).authorize({
      principal: context.owner,
      tool,
      args,
      stage: candidate.stage ?? "propose",
      run: {
        budgetLeft: counters.budgetLeft,
        repeats: Object.hasOwn(counters.repeats, fingerprint) ? (counters.repeats[fingerprint] ?? 0) : 0,
      },
      now: context.now,
      reviewed: candidate.reviewed === true,
    });
    if (answer.allow) return pass(candidate);
    return refuse(answer.code, answer.message, {
      ...(answer.withheld !== undefined ? { withheld: answer.withheld } : {}),
      ...(answer.policies !== undefined ? { policies: answer.policies } : {}),
      ...(answer.engineError !== undefined ? { engine_error: answer.engineError } : {}),
    });
  },
};

/** A tool execution is left in the run's budget. */
export const budget: Check = {
  name: "budget",
  run(candidate, _context, counters) {
    if (counters.budgetLeft <= 0)
      return refuse("budget_exhausted", "the run's tool-call budget is used up", { budget: "tool_calls" });
    return pass(candidate);
  },
};

/** This exact action (tool + canonical arguments) is under its repeat limit in the run. */
export const repeat: Check = {
  name: "repeat",
  run(candidate, context, counters) {
    const tool = requireTool(candidate);
    const fingerprint = actionFingerprint(tool.name, requireArgs(candidate));
    const seen = Object.hasOwn(counters.repeats, fingerprint) ? (counters.repeats[fingerprint] ?? 0) : 0;
    if (seen >= context.maxRepeats) return refuse("repeated_action", "this exact call was already made in this run");
    return pass({ ...candidate, fingerprint });
  },
};

/** The approval request has not expired (an answer exactly at `expires_at` is late too). */
export const expiry: Check = {
  name: "expiry",
  run(candidate, context) {
    const review = requireAnswer(candidate).review;
    if (Date.parse(review.approval.expires_at) <= context.now)
      return refuse("approval_expired", "the approval request expired");
    return pass(candidate);
  },
};

/**
 * The reviewer's answer lets the action go on: a reject refuses it; an edit
 * may change the arguments but never the tool (the edited version then goes
 * through the proposal checks).
 */
export const reviewAnswer: Check = {
  name: "review",
  run(candidate, context) {
    const { review, decision, approver } = requireAnswer(candidate);
    if (decision.type === "reject")
      return refuse("approval_rejected", rejection(approver, context.owner, decision.message));
    if (decision.type === "edit" && decision.edited_action.name !== review.tool)
      return refuse("tool_not_permitted", "an edit may not change the tool");
    return pass(candidate);
  },
};

/** Who rejected, and why when they said: the owner rejecting their own action is not "the reviewer". */
export function rejection(approver: Principal, owner: Principal, message: string | undefined): string {
  const who = approver.user_id === owner.user_id ? `${approver.user_id} (the owner)` : `${approver.user_id} (reviewer)`;
  return `rejected by ${who}${message ? `: ${message}` : ""}`;
}

/** The tool is still in the catalog when its call is about to run (a server can drop it while a review waits). */
export const execution: Check = {
  name: "execution",
  run(candidate, context) {
    const tool = context.catalog.find(candidate.proposal.name);
    if (!tool) return refuse("server_unavailable", "the tool is no longer available");
    return pass({ ...candidate, tool });
  },
};

/**
 * Who answered may decide these reviews: the policy engine's `approve` (the
 * review policy per risk; with Cedar, the `approve` action's policies). A
 * refused approver denies no call: the same request is asked again with the
 * refusal (human_review's `review_feedback`), tagged with this check's name
 * and naming the policies that decided.
 */
export function approverRefusal(
  approver: Principal,
  owner: Principal,
  pending: readonly (Pick<Review, "tool" | "rule"> & { approval: Pick<Review["approval"], "action_id"> })[],
  engine: PolicyEngine = builtinEngine,
  now: number = Date.now(),
): {
  check: Extract<CheckName, "approver">;
  code: "approver_not_permitted";
  message: string;
  policies: string[];
} | null {
  const refused = pending
    .map((review) => ({
      review,
      answer: engine.approve({ approver, owner, tool: review.tool, rule: review.rule, now }),
    }))
    .filter((entry) => !entry.answer.allow);
  if (refused.length === 0) return null;
  const names = refused
    .map(({ review }) => `${review.tool} (${review.approval.action_id}: ${review.rule.replaceAll("_", " ")})`)
    .join(", ");
  const policies = [...new Set(refused.flatMap(({ answer }) => answer.policies ?? []))];
  const failed = refused.map(({ answer }) => (answer.allow ? undefined : answer.engineError)).find(Boolean);
  const why = failed
    ? `; the policy engine could not decide (${failed})`
    : policies.length > 0
      ? `; policy ${policies.join(", ")}`
      : "";
  return { check: "approver", code: "approver_not_permitted", message: `you may not decide ${names}${why}`, policies };
}

export function requireTool(candidate: Candidate): CatalogTool {
  if (!candidate.tool) throw new Error("pipeline order: the offered check must run first");
  return candidate.tool;
}

export function requireArgs(candidate: Candidate): Record<string, unknown> {
  if (!candidate.modelArgs) throw new Error("pipeline order: the arguments check must run first");
  return candidate.modelArgs;
}

function requireAnswer(candidate: Candidate): NonNullable<Candidate["answer"]> {
  if (!candidate.answer) throw new Error("pipeline order: answer checks run on a reviewer's answer only");
  return candidate.answer;
}
