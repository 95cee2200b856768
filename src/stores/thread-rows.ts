/**
 * The rows of the threads and runs tables (thread-tables.ts) as the stores
 * read them, and the one column list per table that every statement over
 * them selects: thread-store.ts, thread-queries.ts, thread-lease.ts,
 * run-store.ts, run-admission.ts and run-keys.ts share these, and none of
 * them imports another for a type.
 */
import type pg from "pg";

export type ThreadStatus = "idle" | "busy" | "interrupted" | "error";
/** An API run's status (the LangGraph API's names), not the agent's `RunStatus` in state/transitions.ts. */
export type ApiRunStatus = "pending" | "running" | "success" | "error" | "interrupted" | "timeout";

/** The owner of a thread: the verified principal's tenant and user. */
export interface Owner {
  tenant: string;
  user_id: string;
}

export interface ThreadRow {
  thread_id: string;
  owner: string;
  tenant: string;
  metadata: Record<string, unknown>;
  graph_id: string | null;
  run_bound: Record<string, string>;
  status: ThreadStatus;
  /** Public state values kept when a run ends (`status`, `termination_reason`, `result`), for `values` filters. */
  state_values: Record<string, unknown>;
  active_run: string | null;
  created_at: Date;
  updated_at: Date;
}

/** Work that commits with a run's final status, on that transaction's client (see `setRunStatus`). */
export type RunEndHook = (client: pg.ClientBase, ended: RunRow) => Promise<void>;

export interface RunRow {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  owner: string;
  tenant: string;
  status: ApiRunStatus;
  metadata: Record<string, unknown>;
  kwargs: Record<string, unknown>;
  error: { error: string; message: string } | null;
  /** Where the run left the thread: its status and, when it ended, why (the termination reason). */
  outcome: RunOutcome | null;
  cancel_requested: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface RunOutcome {
  status: string;
  termination_reason: unknown;
  pending_review: boolean;
  /** The Warrant run (`state.run.run_id`, ledger, approvals, audit) this API run worked on. */
  warrant_run_id?: string;
}

export interface ThreadSearch {
  /**
   * Metadata containment. The keys the server owns and shows in every
   * thread's metadata (`owner`, `tenant`, `graph_id`, `assistant_id`) are
   * matched against the thread row's own columns.
   */
  metadata?: Record<string, unknown> | undefined;
  /** Containment on the state values kept at each run's end (`state_values`). */
  values?: Record<string, unknown> | undefined;
  /** Only these thread ids. */
  ids?: string[] | undefined;
  status?: ThreadStatus | undefined;
  sort_by?: "thread_id" | "status" | "created_at" | "updated_at" | undefined;
  sort_order?: "asc" | "desc" | undefined;
  limit: number;
  offset: number;
}

/** The threads table's columns, as `ThreadRow`. */
export const THREAD_COLUMNS = [
  "thread_id::text as thread_id",
  "owner",
  "tenant",
  "metadata",
  "graph_id",
  "run_bound",
  "status",
  "state_values",
  "active_run::text as active_run",
  "created_at",
  "updated_at",
].join(", ");
/** The runs table's columns, as `RunRow`, each prefixed with `alias` (`"r."`). */
export const runColumns = (alias = "") =>
  [
    "run_id::text as run_id",
    "thread_id::text as thread_id",
    "assistant_id",
    "owner",
    "tenant",
    "status",
    "metadata",
    "kwargs",
    "error",
    "outcome",
    "cancel_requested",
    "created_at",
    "updated_at",
  ]
    .map((column) => `${alias}${column}`)
    .join(", ");
export const RUN_COLUMNS = runColumns();
