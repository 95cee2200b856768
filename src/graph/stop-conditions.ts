/**
 * The named stop conditions of a run: one ordered list of small pure tests,
 * each returning how the run ends (status, termination code, detail, and the
 * answer when there is one) or nothing. observe runs them in order after each
 * step and ends the run on the first that holds; none holding hands the run
 * back to plan. "Why did the run stop" is answered like "why was it denied"
 * (`checks.ts`): by the name of the condition that held.
 */
import { MAX_WRITE_SENDS } from "../policy/contracts.js";
import type { CallResult, Citation, PlanVerdict, RunInfo, RunResult, State, TerminationReason } from "../state.js";
import type { Evidence } from "../state/evidence.js";
import type { RunStatus } from "../state/transitions.js";
import { describeAction } from "../wording/proposal.js";
import type { Budgets } from "../env.js";
import { exhaustedBudget } from "../policy/budgets.js";
import type { Decision } from "../policy/decision.js";

/** What the conditions read about the step just observed. Everything here comes from the state and the host. */
export interface StopFacts {
  /** The step's state (its proposals, results, decisions and the run's usage). */
  state: Pick<State, "proposals" | "call_results" | "usage"> & Partial<Pick<State, "decisions">>;
  verdict: PlanVerdict | null;
  /** This step's decisions and results (empty unless the planner proposed calls). */
  decisions: readonly Decision[];
  results: readonly CallResult[];
  /** The thread's evidence, this step's included. */
  evidence: readonly Evidence[];
  stepsWithoutProgress: number;
  run: RunInfo | null;
  budgets: Budgets;
  /** The host's clock, read only by the condition that needs it. */
  now: () => number;
  /** Milliseconds the run spent waiting for reviewers (not counted against its time budget). */
  waitedMs: number;
}

/** How the run ends when a condition holds. */
export interface Stop {
  status: RunStatus;
  reason: Omit<TerminationReason, "turn">;
  /** The structured answer, when the run ends with one (it is also added to the transcript). */
  result?: RunResult;
}

export const STOP_NAMES = [
  "unresolved_write",
  "unsupported_citation",
  "abstained",
  "final_answer",
  "planner_needs_human",
  "planner_error",
  "workflow_stop",
  "repeated_action",
  "tool_budget",
  "run_budget",
  "no_progress",
] as const;
export type StopName = (typeof STOP_NAMES)[number];

export interface StopCondition {
  name: StopName;
  test(facts: StopFacts): Stop | undefined;
}

/**
 * A write whose effect is still unknown after execute tried to reconcile it
 * (no status tool, status unreachable, no budget left to ask) stops the run
 * for a human, with that reason: neither the planner nor the host may guess
 * whether to send it again. Only this step's results count.
 */
export function unresolvedWrites(
  state: Pick<State, "proposals" | "call_results"> & Partial<Pick<State, "decisions">>,
): string | undefined {
  const proposed = new Set((state.proposals ?? []).map((proposal) => proposal.call_id));
  const results = (state.call_results ?? []).filter((result) => proposed.has(result.call_id));
  const unfinished = results.filter((result) => !result.ok && result.unfinished === true);
  if (unfinished.length > 0) return unfinishedWrites(unfinished, state.decisions ?? []);
  const unknown = results.filter((result) => !result.ok && result.code === "outcome_unknown");
  if (unknown.length === 0) return undefined;
  const calls = unknown.map((result) => `${result.tool} (${result.call_id})${result.ok ? "" : `: ${result.message}`}`);
  return `outcome_unknown: ${calls.join("; ")}. Check whether it took effect before asking again.`;
}

/**
 * Writes whose every send was found not applied (execute's `unfinished`): the
 * approved effect never happened and the host sends it no more. Each is named
 * by its tool and what it would have done, so the person knows what to redo.
 */
function unfinishedWrites(results: readonly CallResult[], decisions: readonly Decision[]): string {
  const named = results.map((result) => {
    const action = decisions.find((decision) => decision.type === "allow" && decision.call_id === result.call_id);
    const args = action?.type === "allow" ? action.model_args : {};
    const zone = typeof args["timezone"] === "string" ? args["timezone"] : "UTC";
    return `${result.tool} (${result.call_id}): “${describeAction(result.tool, args, zone).summary}”`;
  });
  return (
    `unfinished write: ${named.join("; ")}. It was approved and sent ${MAX_WRITE_SENDS} times, and each time the ` +
    "server reported it not applied, so nothing was done and it will not be sent again. Check the server, then ask again."
  );
}

function citationsFor(
  refs: readonly string[],
  evidence: readonly Evidence[],
): { citations: Citation[]; unsupported: string[] } {
  const citations: Citation[] = [];
  const unsupported: string[] = [];
  for (const ref of new Set(refs)) {
    const item = evidence.find((entry) => entry.ref === ref);
    if (!item) {
      unsupported.push(ref);
      continue;
    }
    const citation: Citation = { ref, source_id: item.source_id };
    if (item.page !== undefined) citation.page = item.page;
    if (item.title !== undefined) citation.title = item.title;
    citations.push(citation);
  }
  return { citations, unsupported };
}

type Final = Extract<PlanVerdict, { type: "final" }>;
const finalOf = (facts: StopFacts): Final | undefined => (facts.verdict?.type === "final" ? facts.verdict : undefined);

/** The answer a final verdict gives, its citations resolved against the evidence. */
function answerOf(verdict: Final, evidence: readonly Evidence[]): RunResult {
  const { citations } = citationsFor(verdict.citations, evidence);
  return { answer: verdict.answer, citations, abstained: verdict.abstained };
}

/** This step proposed a write whose effect is unknown or that was never applied: a person decides. */
export const unresolvedWrite: StopCondition = {
  name: "unresolved_write",
  test(facts) {
    const unresolved = facts.verdict?.type === "tool_calls" ? unresolvedWrites(facts.state) : undefined;
    return unresolved === undefined
      ? undefined
      : { status: "needs_human", reason: { code: "needs_human", detail: unresolved } };
  },
};

/** The answer cites a ref that is not in the evidence. */
export const unsupportedCitation: StopCondition = {
  name: "unsupported_citation",
  test(facts) {
    const verdict = finalOf(facts);
    if (!verdict) return undefined;
    const { unsupported } = citationsFor(verdict.citations, facts.evidence);
    if (unsupported.length === 0) return undefined;
    return {
      status: "failed",
      reason: { code: "unsupported_citation", detail: `cited refs not in evidence: ${unsupported.join(", ")}` },
    };
  },
};

/** The planner abstained: no supporting evidence. */
export const abstained: StopCondition = {
  name: "abstained",
  test(facts) {
    const verdict = finalOf(facts);
    if (!verdict?.abstained) return undefined;
    return {
      status: "abstained",
      reason: { code: "abstained", detail: "no supporting evidence" },
      result: answerOf(verdict, facts.evidence),
    };
  },
};

/** The planner answered, every citation in the evidence. */
export const finalAnswer: StopCondition = {
  name: "final_answer",
  test(facts) {
    const verdict = finalOf(facts);
    if (!verdict) return undefined;
    const result = answerOf(verdict, facts.evidence);
    return {
      status: "completed",
      reason: { code: "final_answer", detail: `answered with ${result.citations.length} citation(s)` },
      result,
    };
  },
};

/** The planner asked for a person. */
export const plannerNeedsHuman: StopCondition = {
  name: "planner_needs_human",
  test: ({ verdict }) =>
    verdict?.type === "needs_human"
      ? { status: "needs_human", reason: { code: "needs_human", detail: verdict.reason } }
      : undefined,
};

/** The planner failed (the model's reply could not be used). */
export const plannerError: StopCondition = {
  name: "planner_error",
  test: ({ verdict }) =>
    verdict?.type === "error"
      ? { status: "failed", reason: { code: "planner_error", detail: `${verdict.code}: ${verdict.message}` } }
      : undefined,
};

/** A code-owned step (the fixed workflow) stopped the run. */
export const workflowStop: StopCondition = {
  name: "workflow_stop",
  test: ({ verdict }) =>
    verdict?.type === "stop" ? { status: "failed", reason: { code: verdict.code, detail: verdict.detail } } : undefined,
};

/** A call was refused as a repeat of an authorized one. */
export const repeatedAction: StopCondition = {
  name: "repeated_action",
  test({ decisions }) {
    // Only the first budget or repeat denial counts, as it is the one the run met first.
    const denial = decisions.find(
      (decision): decision is Extract<Decision, { type: "deny" }> =>
        decision.type === "deny" && (decision.code === "budget_exhausted" || decision.code === "repeated_action"),
    );
    if (denial?.code !== "repeated_action") return undefined;
    return {
      status: "stopped",
      reason: { code: "repeated_action", detail: `${denial.tool} was proposed again with the same arguments` },
    };
  },
};

/** A call was refused, or failed, because the run's tool calls are used up. */
export const toolBudget: StopCondition = {
  name: "tool_budget",
  test({ decisions, results, budgets }) {
    const denied = decisions.some((decision) => decision.type === "deny" && decision.code === "budget_exhausted");
    const failed = results.some((result) => !result.ok && result.code === "budget_exhausted");
    if (!denied && !failed) return undefined;
    return {
      status: "stopped",
      reason: {
        code: "budget_exhausted",
        budget: "tool_calls",
        detail: `tool-call budget of ${budgets.tool_calls} used up`,
      },
    };
  },
};

/** One of the run's budgets (model calls, tokens, cost, time) is used up. */
export const runBudget: StopCondition = {
  name: "run_budget",
  test({ run, state, budgets, now, waitedMs }) {
    const budget = run ? exhaustedBudget(state.usage, budgets, run.started_at, now(), waitedMs) : undefined;
    return budget
      ? { status: "stopped", reason: { code: "budget_exhausted", budget, detail: `${budget} budget used up` } }
      : undefined;
  },
};

/** Too many turns in a row brought no new result or evidence. */
export const noProgress: StopCondition = {
  name: "no_progress",
  test({ stepsWithoutProgress, budgets }) {
    if (stepsWithoutProgress < budgets.no_progress_steps) return undefined;
    return {
      status: "stopped",
      reason: { code: "no_progress", detail: `${stepsWithoutProgress} turns without new results or evidence` },
    };
  },
};

/** The conditions, in the order observe tests them: the first that holds ends the run. */
export const STOP_CONDITIONS: readonly StopCondition[] = [
  unresolvedWrite,
  unsupportedCitation,
  abstained,
  finalAnswer,
  plannerNeedsHuman,
  plannerError,
  workflowStop,
  repeatedAction,
  toolBudget,
  runBudget,
  noProgress,
];

/** The first condition that holds, tagged with its name; undefined: the run goes on. */
export function firstStop(
  facts: StopFacts,
  conditions: readonly StopCondition[] = STOP_CONDITIONS,
): (Stop & { condition: StopName }) | undefined {
  for (const condition of conditions) {
    const stop = condition.test(facts);
    if (stop) return { ...stop, condition: condition.name };
  }
  return undefined;
}
