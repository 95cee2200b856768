/**
 * Routing between nodes, as pure functions of state, so the graph file stays
 * wiring and every branch is declared (Studio renders them).
 */
import { END } from "@langchain/langgraph";
import type { Budgets } from "../env.js";
import { allowed, pendingReview } from "../policy/decision.js";
import { NODES, type State } from "../state.js";
import { isTerminal } from "./transitions.js";

export const afterPlan = (state: State) => ((state.proposals ?? []).length > 0 ? NODES.authorize : NODES.observe);

/**
 * After authorize and after human_review alike: pending reviews → human_review
 * (after a refused resume that asks again, as a fresh task, so nothing is
 * replayed), allowed calls → execute, else observe.
 */
export const afterDecisions = (state: State) => {
  const decisions = state.decisions ?? [];
  if (pendingReview(decisions).length > 0) return NODES.human_review;
  return allowed(decisions).length > 0 ? NODES.execute : NODES.observe;
};

export const afterObserve = (state: State) => (isTerminal(state.status) ? END : NODES.plan);

/**
 * LangGraph's recursion limit sits above anything the budgets allow (at most
 * five node steps a planner turn), so a budget is always what stops a run.
 */
export function recursionLimitFor(budgets: Budgets): number {
  return budgets.model_turns * 5 + 10;
}

/**
 * Run options every entry point uses. Checkpoints are written synchronously:
 * with LangGraph's default ("async") a process killed mid-step can leave a
 * step's writes without its checkpoint, and the run could not be continued.
 */
export function runOptions(budgets: Budgets): { recursionLimit: number; durability: "sync" } {
  return { recursionLimit: recursionLimitFor(budgets), durability: "sync" };
}
