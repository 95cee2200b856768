/**
 * Run status and its legal transitions (DESIGN §4). Every status change goes
 * through `transition`; the state reducer calls `assertTransition` too, so an
 * illegal write fails even if a node forgets to ask.
 */
import { InvariantError } from "../errors.js";

export const RUN_STATUSES = [
  "created",
  "planning",
  "tool_proposed",
  "waiting_approval",
  "tool_authorized",
  "tool_running",
  "observing",
  "completed",
  "abstained",
  "needs_human",
  "stopped",
  "failed",
  "cancelled",
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const TERMINAL_STATUSES = ["completed", "abstained", "needs_human", "stopped", "failed", "cancelled"] as const;
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

/**
 * Terminal statuses accept a new request on the same thread (a new run
 * starts at `planning`). A cancelled run is never resumed: the API closes it
 * (`cancelled`) and only a new request moves the thread on.
 */
const NEW_RUN: readonly RunStatus[] = ["planning", "cancelled"];

const LEGAL: Record<RunStatus, readonly RunStatus[]> = {
  created: ["planning", "cancelled"],
  // planning → observing: the planner answered (final / needs_human) or failed.
  planning: ["tool_proposed", "observing", "cancelled"],
  // tool_proposed → observing: every proposal was denied; denials are observations.
  tool_proposed: ["tool_authorized", "waiting_approval", "observing", "cancelled"],
  // waiting_approval → observing: every pending action was rejected.
  waiting_approval: ["tool_authorized", "planning", "observing", "cancelled"],
  tool_authorized: ["tool_running", "cancelled"],
  tool_running: ["observing", "failed", "cancelled"],
  observing: ["planning", "completed", "abstained", "needs_human", "stopped", "failed", "cancelled"],
  completed: NEW_RUN,
  abstained: NEW_RUN,
  needs_human: NEW_RUN,
  stopped: NEW_RUN,
  failed: NEW_RUN,
  cancelled: ["planning"],
};

export function isTerminal(status: RunStatus): status is TerminalStatus {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}

export function canTransition(from: RunStatus, to: RunStatus): boolean {
  return LEGAL[from].includes(to);
}

/** Throws `InvariantError("illegal_transition")` unless `from → to` is in the table. */
export function assertTransition(from: RunStatus, to: RunStatus): void {
  if (!canTransition(from, to)) {
    throw new InvariantError("illegal_transition", `illegal status transition ${from} → ${to}`);
  }
}

/**
 * The one way a node changes status. A node may pass through several states
 * in one step (execute: tool_authorized → tool_running → observing); each hop
 * is checked here and again by the reducer.
 */
export function transition(from: RunStatus, ...hops: RunStatus[]): { status: RunStatus[] } {
  let current = from;
  for (const next of hops) {
    assertTransition(current, next);
    current = next;
  }
  return { status: hops };
}

/** Reducer for the `status` channel: last value, each hop a legal transition. */
export function statusReducer(current: RunStatus, update: RunStatus | RunStatus[]): RunStatus {
  let status = current;
  for (const next of Array.isArray(update) ? update : [update]) {
    if (next === status) continue;
    assertTransition(status, next);
    status = next;
  }
  return status;
}
