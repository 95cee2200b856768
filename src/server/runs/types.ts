/**
 * What the run modules share: the graphs served, the stream modes a client
 * may ask for, and a run request as the routes hand it to the run manager.
 */
import type { CompiledStateGraph } from "@langchain/langgraph";
import type { BaseMessage } from "@langchain/core/messages";
import type { Principal } from "../../auth/principal.js";
import type { Owner, ThreadRow } from "../../stores/thread-rows.js";

/** Stream modes a client may ask for (the SDK's names). */
export const STREAM_MODES = [
  "values",
  "updates",
  "messages",
  "messages-tuple",
  "custom",
  "tasks",
  "checkpoints",
  "tools",
  "debug",
  "events",
] as const;
export type ClientStreamMode = (typeof STREAM_MODES)[number];

// The served graphs differ in state, update and node types; callers only invoke and stream them.
// biome-ignore lint/suspicious/noExplicitAny: see above
export type ServedGraph = CompiledStateGraph<any, any, any, any, any, any>;

export interface RunRequest {
  principal: Principal;
  thread: ThreadRow;
  assistantId: string;
  /** New input (already reduced to what the graph accepts), or null to continue from the last checkpoint. */
  input: { messages: BaseMessage[] } | null;
  resume?: { value: unknown } | undefined;
  streamModes: ClientStreamMode[];
  checkpointId?: string | undefined;
  metadata: Record<string, unknown>;
  /** The run's id when the caller chose it beforehand (an idempotency key was claimed for it); else a new one. */
  runId?: string | undefined;
  /**
   * The thread's last run stopped part-way (cancelled, or its server died) and
   * this new request closes it first: the stopped run is recorded `cancelled`
   * and never resumed; the new one starts from the beginning.
   */
  closeStopped?: boolean | undefined;
  /** Stop the run when the client that started it goes away (`on_disconnect: "cancel"`). */
  cancelOn?: AbortSignal | undefined;
  /** The request's `multitask_strategy` (kept in the run's kwargs; default `reject`). */
  multitaskStrategy?: string | undefined;
  /** A pending run (run-queue-store.ts) starting now: its `runs` row exists and turns `running`. */
  queued?: boolean | undefined;
  /** The client's `config.tags` (labels for tracing and search). */
  tags?: string[] | undefined;
  /** The client's `config.run_name`. */
  runName?: string | undefined;
  /** The client's `config.recursion_limit`; the budgets' limit caps it. */
  recursionLimit?: number | undefined;
  /** Run-bound arguments fixed for a new request (kept on the thread for its resumes). */
  runBound?: Record<string, string> | undefined;
  /**
   * Re-checks, under the lease, what the caller checked before taking it
   * (e.g. that an interrupt is still pending): a run that finished in
   * between must not be followed by a second one acting on stale state.
   */
  verify?: () => Promise<void>;
}

export const ownerOf = (principal: Principal): Owner => ({ tenant: principal.tenant, user_id: principal.user_id });

/**
 * The labels of a run as its record keeps them, where LangGraph's server
 * keeps them (`kwargs.config.tags`, `kwargs.config.run_name`); nothing when
 * the request set none.
 */
export function runConfigRecord(labels: { tags?: string[] | undefined; runName?: string | undefined }): {
  config?: { tags: string[]; run_name?: string };
} {
  if (labels.tags === undefined && labels.runName === undefined) return {};
  return { config: { tags: labels.tags ?? [], ...(labels.runName === undefined ? {} : { run_name: labels.runName }) } };
}
