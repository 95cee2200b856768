/**
 * Where a run left its thread, read from the thread's last checkpoint (or,
 * for a run that streamed to its end, from its stream): the thread's status
 * (interrupted while a review is pending), the outcome kept on the run row,
 * and the public values kept on the thread row.
 */
import type { StateSnapshot } from "@langchain/langgraph";
import { threadConfig } from "../../run-config.js";
import type { RunOutcome, ThreadStatus } from "../../stores/thread-rows.js";
import type { ServedGraph } from "./types.js";

export interface ThreadInspection {
  thread: ThreadStatus;
  outcome: RunOutcome | undefined;
  values?: Record<string, unknown>;
  /**
   * The API run that wrote the thread's last checkpoint (its metadata's
   * `run_id`), and whether that checkpoint ends the run: the graph has no
   * next step, or it waits on an interrupt (a review).
   */
  last?: { run_id: string | undefined; ended: boolean };
}

/** The pending interrupts of a snapshot, as the API shows them. */
export function pendingInterrupts(snapshot: StateSnapshot): { id: string | undefined; value: unknown }[] {
  return snapshot.tasks.flatMap((task) => task.interrupts.map((item) => ({ id: item.id, value: item.value })));
}

/** Reads the thread's checkpoint (with the assistant's graph, or any: they share one checkpointer). */
export async function inspectThread(
  graphs: Map<string, ServedGraph>,
  assistantId: string,
  threadId: string,
): Promise<ThreadInspection> {
  const graph = graphs.get(assistantId) ?? [...graphs.values()][0];
  if (!graph) return { thread: "idle", outcome: undefined };
  const snapshot = await graph.getState(threadConfig(threadId));
  const pending = pendingInterrupts(snapshot).length > 0;
  // Every checkpoint of an API run carries its run_id (checkpoint-metadata.ts).
  const lastRun = (snapshot.metadata as Record<string, unknown> | undefined)?.["run_id"];
  return inspection((snapshot.values ?? {}) as Record<string, unknown>, pending, {
    run_id: typeof lastRun === "string" ? lastRun : undefined,
    ended: pending || snapshot.next.length === 0,
  });
}

/**
 * Where a run that streamed to its end left its thread, from its stream
 * alone (`RunEmitter.ending`): its last `values` are the thread's values at
 * its last checkpoint, and it paused on a review exactly when an interrupt
 * came after them; either way its last checkpoint is its own and ends it.
 * The same inspection `inspectThread` would read back, without reading the
 * thread's state again.
 */
export function inspectEnding(values: Record<string, unknown>, interrupted: boolean, runId: string): ThreadInspection {
  return inspection(values, interrupted, { run_id: runId, ended: true });
}

function inspection(
  state: Record<string, unknown>,
  pending: boolean,
  last: NonNullable<ThreadInspection["last"]>,
): ThreadInspection {
  const values = state as {
    status?: unknown;
    termination_reason?: unknown;
    result?: unknown;
    run?: { run_id?: unknown } | null;
  };
  return {
    thread: pending ? "interrupted" : "idle",
    outcome: {
      status: typeof values.status === "string" ? values.status : "unknown",
      termination_reason: values.termination_reason ?? null,
      pending_review: pending,
      // The Warrant run this API run worked on: its own id when it started it, the starting run's when it resumed one.
      ...(typeof values.run?.run_id === "string" ? { warrant_run_id: values.run.run_id } : {}),
    },
    values: keptValues(values),
    last,
  };
}

/** Whether the thread's last checkpoint is the end of `runId`: written by it, with nothing left to run. */
export function endedBy(inspection: ThreadInspection | undefined, runId: string): boolean {
  return inspection?.last?.run_id === runId && inspection.last.ended;
}

/** The public values kept beside the thread row when a run ends (what `values` filters match). */
function keptValues(values: {
  status?: unknown;
  termination_reason?: unknown;
  result?: unknown;
}): Record<string, unknown> {
  return JSON.parse(
    JSON.stringify({
      status: values.status ?? null,
      termination_reason: values.termination_reason ?? null,
      result: values.result ?? null,
    }),
  ) as Record<string, unknown>;
}
