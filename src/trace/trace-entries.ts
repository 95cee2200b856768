/**
 * The shape of one run's trace: the node steps it is assembled from, its
 * origin and labels, and its entries (plan, decision, approval, execution,
 * observe). Assembled by run-trace.ts, read by the renderers, the explainer
 * and the OpenTelemetry export.
 */
import type { Usage } from "../policy/usage.js";
import type { ApprovalRecord, RunLabels, RunOrigin } from "../ports.js";
import type { LedgerRow } from "../state/ledger.js";

/** One node's run, as the checkpoint history recorded it. */
export interface NodeStep {
  node: string;
  /** When the checkpoint the node started from was taken. */
  started_at: string;
  /** When the next checkpoint was taken (null: the node has not finished, e.g. an open review). */
  ended_at: string | null;
  /** The node's update, as stored (null when it has not written yet). */
  writes: Record<string, unknown> | null;
}

export interface TraceInputs {
  origin: RunOrigin;
  /** The thread's node steps, oldest first (every run of the thread; filtered here). */
  steps: readonly NodeStep[];
  ledger: readonly LedgerRow[];
  approvals: readonly ApprovalRecord[];
}

export interface PlanEntry {
  kind: "plan";
  /** `plan` in the agent; the fixed workflow's steps (`retrieve`, `read`, `generate`, `study`, `validate`) write the same fields. */
  node: string;
  at: string;
  ended_at: string | null;
  turn: number;
  model: string | null;
  usage: { model_calls: number; input_tokens: number; output_tokens: number; cost_usd: number };
  offered: string[];
  withheld: { tool: string; reason: string }[];
  proposed: { call_id: string; tool: string }[];
  /** `tool_calls`, `final`, `needs_human` or `error:<code>`. */
  verdict: string;
  /**
   * The planner's context once old tool results were compacted in this
   * thread (planners/context.ts): each compaction raises `compactions`.
   * Null while nothing is compacted.
   */
  context: { tokens: number; compacted_through: number; compacted_results: number; compactions: number } | null;
}

export interface DecisionEntry {
  kind: "decision";
  at: string;
  node: "authorize" | "human_review";
  call_id: string;
  tool: string;
  outcome: "allow" | "deny" | "review";
  /** The check that refused it (denials), or `review` when it waits for a human. */
  check: string | null;
  code: string | null;
  message: string | null;
  /** The arguments as the model proposed them (allowed and reviewed calls), as stored: secrets already redacted. */
  arguments: Record<string, unknown> | null;
  /** For a refusal by a policy language engine: the ids of the policies that decided (absent otherwise). */
  policies?: string[];
}

export interface ApprovalEntry {
  kind: "approval";
  at: string;
  call_id: string;
  tool: string;
  outcome: string;
  approver: string;
  version: number;
  fingerprint: string;
}

export interface ExecutionEntry {
  kind: "execution";
  at: string;
  ended_at: string | null;
  call_id: string;
  tool: string;
  server: string;
  risk: string;
  attempt: number;
  status: string;
  error_code: string | null;
  /** The class of the error (DESIGN §6): `transient`, `contract`, `authorization`, `unknown_effect`, … */
  error_class: string | null;
  elapsed_ms: number | null;
  approved_by: string | null;
  /** For a status check that settled an unknown write: the write attempt it asked about. */
  reconciles: number | null;
  /** For a write its server ran as an MCP task: the task id (src/mcp/tasks.ts). */
  task_id?: string;
}

export interface ObserveEntry {
  kind: "observe";
  at: string;
  ended_at: string | null;
  evidence_refs: string[];
  termination: { code: string; detail: string } | null;
}

export type TraceEntry = PlanEntry | DecisionEntry | ApprovalEntry | ExecutionEntry | ObserveEntry;

export interface RunTrace {
  run_id: string;
  thread_id: string;
  owner: string;
  graph_id: string | null;
  api_runs: string[];
  request: string | null;
  started_at: string;
  ended_at: string | null;
  /** The run's last status as a node wrote it. */
  status: string | null;
  /** Every entry, ordered by time (plans, decisions, approvals, attempts, observations). */
  timeline: TraceEntry[];
  /** The nodes in the order they ran, with their times (the spans of an OpenTelemetry export). */
  nodes: { node: string; started_at: string; ended_at: string | null }[];
  evidence_refs: string[];
  usage: Usage;
  termination: { code: string; detail: string; turn: number | null; budget: string | null } | null;
  /** The client's labels of the run's API runs (absent: none were recorded). */
  labels?: RunLabels | undefined;
}
