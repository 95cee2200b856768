/**
 * The one place a proposal is decided. Every proposal (authorize) and every
 * reviewer's edit (human_review) runs through the same ordered list of named,
 * pure checks:
 *
 *   offered → arguments → run_bound → authorized → budget → repeat → review
 *
 * Each check either passes (possibly adding what it learned: the tool, the
 * parsed arguments, the fingerprint) or refuses with a typed denial tagged
 * with its name. "Why was this call denied?" is answered by the denial's
 * `check` and this file.
 */
import { randomUUID } from "node:crypto";
import type { Principal } from "../auth/principal.js";
import {
  hasScopes,
  injectArguments,
  resourceAllowed,
  runBoundMatches,
  ACCESS_DENIED_MESSAGE,
} from "./authorization.js";
import type { ReviewPolicy } from "./config.js";
import type { CatalogTool, Proposal } from "./contracts.js";
import type { CheckName, CheckedAction, Decision, Denial, ReviewRule } from "./decision.js";
import { actionFingerprint } from "./fingerprint.js";
import { validateArguments } from "./validation.js";

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
}

/** What the step has used so far; the pipeline returns updated copies, never mutates them. */
export interface Counters {
  /** Tool executions still available to the run. */
  budgetLeft: number;
  /** Authorized action fingerprints of the run, and how often each was authorized. */
  repeats: Readonly<Record<string, number>>;
}

/** A proposal on its way through the checks; each check may add what it established. */
interface Candidate {
  proposal: Proposal;
  tool?: CatalogTool;
  modelArgs?: Record<string, unknown>;
  fingerprint?: string;
}

type CheckResult =
  | { ok: true; candidate: Candidate }
  | { ok: false; denial: Omit<Denial, "type" | "call_id" | "tool" | "check"> };

interface Check {
  name: CheckName;
  run(candidate: Candidate, context: DecideContext, counters: Counters): CheckResult;
}

const pass = (candidate: Candidate): CheckResult => ({ ok: true, candidate });
const refuse = (
  code: Denial["code"],
  message: string,
  extra: Pick<Denial, "withheld" | "budget"> = {},
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

/** The owner holds the contract's scopes and the resource the arguments name (before any existence check). */
export const authorized: Check = {
  name: "authorized",
  run(candidate, context) {
    const tool = requireTool(candidate);
    if (!hasScopes(context.owner, tool.contract))
      return refuse("tool_not_permitted", `${tool.name} is not available to you`, { withheld: "scope" });
    if (!resourceAllowed(tool.contract, requireArgs(candidate), context.owner))
      return refuse("access_denied", ACCESS_DENIED_MESSAGE);
    return pass(candidate);
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

/** The pipeline, in order. `review` is not a refusal check: it decides allow or review at the end. */
export const CHECKS: readonly Check[] = [offered, argumentsValid, runBound, authorized, budget, repeat];

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
  let candidate: Candidate = { proposal };
  for (const check of CHECKS) {
    const result = check.run(candidate, context, counters);
    if (!result.ok) {
      const denial: Denial = {
        type: "deny",
        call_id: proposal.call_id,
        tool: proposal.name,
        check: check.name,
        ...result.denial,
      };
      return { decision: denial, counters };
    }
    candidate = result.candidate;
  }
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
  return {
    decision: {
      type: "review",
      ...action,
      rule,
      description: `${tool.name} (${tool.contract.risk.replace("_", " ")}) needs ${rule === "reviewer_not_owner" ? "a reviewer's" : "your"} approval`,
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

function requireTool(candidate: Candidate): CatalogTool {
  if (!candidate.tool) throw new Error("pipeline order: the offered check must run first");
  return candidate.tool;
}

function requireArgs(candidate: Candidate): Record<string, unknown> {
  if (!candidate.modelArgs) throw new Error("pipeline order: the arguments check must run first");
  return candidate.modelArgs;
}
