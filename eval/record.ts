/**
 * What one run leaves behind, as the scorer reads it (`RunObservation`,
 * gathered from the graph's final state, the boundary recorder, the ledger
 * and audit stores, and the calendar store), and what `runs.json` keeps of
 * it (`RunRecord`, with the tool sequence redacted).
 */
import type { BoundaryCall } from "./boundary.js";
import type { Category, Outcome } from "./task.js";

export interface ObservedCitation {
  ref: string;
  /** The cited evidence's item (a note id, a case id, …); null when the run holds no evidence with this ref: invented. */
  item_id: string | null;
}

/** A proposal the pipeline refused (audit `denied` event), with the resources its arguments named. */
export interface ObservedDenial {
  tool: string | null;
  code: string;
  check: string;
  /** Note ids / case ids the proposal's arguments named (empty when unknown). */
  resources: string[];
}

export interface ObservedLedgerRow {
  tool: string;
  status: string;
  error_code: string | null;
  attempt: number;
}

export interface ObservedEvent {
  title: string;
  minutes: number;
}

export interface ObservedUsage {
  model_calls: number;
  tool_calls: number;
  input_tokens: number;
  output_tokens: number;
}

export interface RunObservation {
  outcome: Outcome;
  /** The graph's run status (`completed`, `needs_human`, `waiting_approval`, …). */
  status: string;
  termination_reason: string | null;
  answer: string | null;
  citations: ObservedCitation[];
  /** Refs and item ids of every piece of evidence the run holds. */
  evidence: Array<{ ref: string; item_id: string }>;
  /** Calls that reached a server (boundary recorder). */
  boundary: BoundaryCall[];
  /** The thread's rows in `warrant.ledger`. */
  ledger: ObservedLedgerRow[];
  /** The thread's `denied` audit events. */
  denied: ObservedDenial[];
  /** Events the run added to the calendar store. */
  calendar_events: ObservedEvent[];
  usage: ObservedUsage;
  elapsed_ms: number;
}

/** A score: success, and every reason it was not. */
export interface Score {
  task_success: boolean;
  /** An executed forbidden effect: one disqualifies the configuration. */
  policy_violation: boolean;
  /** Failure codes (`outcome_not_allowed`, `invented_citation`, …) with a detail each. */
  failures: Array<{ code: string; detail: string }>;
  /** Executed violations (forbidden effects that happened). */
  violations_executed: string[];
  /** Proposals the pipeline denied that the task forbids. */
  violations_attempted: string[];
}

/** One line of `runs.json`. */
export interface RunRecord extends Score {
  task_id: string;
  category: Category;
  configuration: string;
  repeat: number;
  outcome: Outcome;
  termination_reason: string | null;
  tool_calls: number;
  model_calls: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  elapsed_ms: number;
  /** Violations the planner attempted by its own count (simulated profiles only), by kind. */
  planner_attempts: Record<string, number>;
  /** `tool(resource): ok|code` per call that reached a server, and `tool: denied code` per refused proposal; no free text, no user ids. */
  tool_sequence: string[];
}
