/**
 * Routing between nodes, as pure functions of state, so the graph file stays
 * wiring and every branch is declared (Studio renders them).
 *
 * A node's route is taken in the node's own task (`routed`): the node
 * returns a `Command` with its update and where to go next. A conditional
 * edge would do the same in a second runnable after the node, reading a
 * fresh copy of the whole state; three of them a tool step were a tenth of
 * its CPU time.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { Command, END } from "@langchain/langgraph";
import type { Budgets } from "../env.js";
import { allowed, pendingReview } from "../policy/decision.js";
import { NODES, type State, type Update } from "../state.js";
import { isTerminal, statusReducer } from "../state/transitions.js";

export const afterPlan = (state: State) => ((state.proposals ?? []).length > 0 ? NODES.authorize : NODES.observe);

/**
 * After authorize and after human_review alike: pending reviews → human_review
 * (after a refused resume that asks again, as a fresh task, so nothing is
 * replayed), allowed calls → execute, else observe.
 */
export const afterDecisions = (state: State) => {
  const decisions = state.decisions ?? [];
  if ((state.connect ?? []).length > 0 || pendingReview(decisions).length > 0) return NODES.human_review;
  return allowed(decisions).length > 0 ? NODES.execute : NODES.observe;
};

export const afterObserve = (state: State) => (isTerminal(state.status) ? END : NODES.plan);

/**
 * What the routes read (proposals, decisions, connect, status) as they are once
 * `update` is applied: the first three are last-value fields, status goes
 * through its reducer. The rest of the state is as the node saw it.
 */
export function stateAfter(state: State, update: Partial<Update>): State {
  const status = update.status;
  // Nodes write status only through state/transitions (a status or a list of hops), never as an Overwrite.
  if (status !== undefined && typeof status !== "string" && !Array.isArray(status))
    throw new Error("routes: a node overwrote status");
  return {
    ...state,
    ...(update.proposals !== undefined ? { proposals: update.proposals } : {}),
    ...(update.decisions !== undefined ? { decisions: update.decisions } : {}),
    ...(update.connect !== undefined ? { connect: update.connect } : {}),
    status: status === undefined ? state.status : statusReducer(state.status, status),
  };
}

/**
 * Last-value fields nodes rewrite every turn, mostly with what they already
 * hold (null until the run ends or a resume is refused). Plan's `verdict` and
 * `tool_offer` are kept even when unchanged: the trace reads them from each
 * plan task's writes (src/trace/run-trace.ts).
 */
const SETTLED_FIELDS = ["termination_reason", "result", "review_feedback", "connect"] as const;
/** Fields whose reducer appends (or merges): an empty write changes nothing. */
const APPENDED_FIELDS = ["messages", "evidence", "ledger"] as const;

/** Deep equality of JSON-like values (what state fields hold). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a))
    return Array.isArray(b) && a.length === b.length && a.every((item, index) => sameValue(item, b[index]));
  if (
    Array.isArray(b) ||
    Object.getPrototypeOf(a) !== Object.prototype ||
    Object.getPrototypeOf(b) !== Object.prototype
  )
    return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  return (
    keys.length === Object.keys(right).length &&
    keys.every((key) => Object.hasOwn(right, key) && sameValue(left[key], right[key]))
  );
}

/**
 * `update` without the writes that change nothing: a settled field written
 * with the value it holds, an appended field written with nothing. Each
 * left-out write is a write row, a channel blob and a version fewer in the
 * step's checkpoint; the state after the step is the same. Returns `update`
 * itself when every write changes something.
 */
export function withoutNoOps<U extends Partial<Update>>(state: State, update: U): U {
  const record = update as Record<string, unknown>;
  const current = state as unknown as Record<string, unknown>;
  const unchanged = [
    ...SETTLED_FIELDS.filter(
      (field) =>
        Object.hasOwn(record, field) &&
        Object.hasOwn(current, field) &&
        current[field] !== undefined &&
        sameValue(record[field], current[field]),
    ),
    ...APPENDED_FIELDS.filter((field) => Array.isArray(record[field]) && (record[field] as unknown[]).length === 0),
  ];
  if (unchanged.length === 0) return update;
  const kept = { ...record };
  for (const field of unchanged) delete kept[field];
  return kept as U;
}

/** `node`, answering with its update (less its no-op writes) and `route`'s choice on the state it leaves. */
export function routed<U extends Partial<Update>, Next extends string>(
  node: (state: State, config: LangGraphRunnableConfig) => Promise<U>,
  route: (state: State) => Next,
): (state: State, config: LangGraphRunnableConfig) => Promise<Command<unknown, U, Next>> {
  return async (state, config) => {
    const update = withoutNoOps(state, await node(state, config));
    return new Command({ update, goto: route(stateAfter(state, update)) });
  };
}

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
