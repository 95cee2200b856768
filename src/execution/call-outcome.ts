/**
 * What settling one allowed call yields, and the context it runs in: the
 * call's result (success, typed failure), the denial when the execute stage
 * refused it, or the news that the ledger already held rows for it (the call
 * is then settled again from them, src/execution/run-call.ts).
 */
import type { ToolErrorCode } from "../errors.js";
import type { CatalogTool } from "../policy/contracts.js";
import type { DecideContext } from "../policy/checks.js";
import type { Denial } from "../policy/decision.js";
import type { CallResult } from "../state.js";
import type { Allowed, CallContext, HistoryFound, Started } from "./call-journal.js";
import { idempotencyArgument } from "./reconcile.js";

export type Failure = Extract<CallResult, { ok: false }>;

/** A call's context in the execute step: the ledger's, plus the pipeline's view for the execute stage. */
export interface ExecuteContext extends CallContext {
  decide: DecideContext;
}

/** How settling a call ended: its result (and its denial, when the execute stage refused it), or history found. */
export type Settled = { kind: "settled"; result: CallResult; denial?: Denial } | HistoryFound;

export const settled = (result: CallResult, denial?: Denial): Settled =>
  denial ? { kind: "settled", result, denial } : { kind: "settled", result };

export function failure(action: Allowed, code: ToolErrorCode, message: string): Failure {
  return { call_id: action.call_id, tool: action.tool, ok: false, code, message };
}

export function success(action: Allowed, text: string, structured: unknown): CallResult {
  return { call_id: action.call_id, tool: action.tool, ok: true, text, structured };
}

/** The write's idempotency key, from the argument its contract names (null when it names none). */
export function idempotencyKeyOf(tool: CatalogTool, action: Allowed): string | null {
  const argument = idempotencyArgument(tool.contract);
  const value = argument === undefined ? undefined : action.args[argument];
  return typeof value === "string" ? value : null;
}

const budgetFailure = (action: Allowed) => failure(action, "budget_exhausted", "the run's tool-call budget is used up");

/** An attempt that could not start: no budget left, or (first insert of a fresh journal) history found. */
export function notStarted(action: Allowed, started: Started<never>): Settled {
  return started.kind === "history_found" ? started : settled(budgetFailure(action));
}
