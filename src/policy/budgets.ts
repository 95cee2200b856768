/**
 * Budget checks shared by authorize (reserving tool calls) and observe
 * (stopping the run). Pure functions of usage, limits and the clock.
 */
import type { Budgets } from "../env.js";
import type { Usage } from "./usage.js";
import type { BudgetName } from "./decision.js";

/**
 * The first run-level budget that is used up, if any (tool calls are checked
 * per call in authorize). `waitedMs` is time spent waiting for reviewers: it
 * does not count against the deadline.
 */
export function exhaustedBudget(
  usage: Usage,
  budgets: Budgets,
  startedAt: string,
  now: number,
  waitedMs = 0,
): BudgetName | undefined {
  if (now - Date.parse(startedAt) - waitedMs >= budgets.deadline_ms) return "deadline";
  if (usage.input_tokens + usage.output_tokens >= budgets.tokens) return "tokens";
  if (usage.cost_usd >= budgets.cost_usd) return "cost";
  if (usage.model_calls >= budgets.model_turns) return "model_turns";
  return undefined;
}

/** Tool executions still available to this run. */
export function remainingToolCalls(usage: Usage, budgets: Budgets): number {
  return Math.max(0, budgets.tool_calls - usage.tool_calls);
}
