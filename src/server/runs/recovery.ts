/**
 * Recovery of runs whose process died: their lease expired, so the first
 * request that needs the thread (or the periodic sweep) marks them as ended,
 * `success` when their graph had reached its end or its review, else
 * `server_restarted`, and frees the thread. A lease whose run row was never
 * written, or whose end was already recorded, is freed too.
 */
import type { RunEndHook, ThreadStatus } from "../../stores/thread-rows.js";
import type { ThreadStore } from "../../stores/thread-store.js";
import { endedBy, inspectThread, type ThreadInspection } from "./outcome.js";
import type { ServedGraph } from "./types.js";

export interface RecoveryContext {
  store: ThreadStore;
  graphs: Map<string, ServedGraph>;
  onRunEnd?: RunEndHook | undefined;
  /** Whether the run executes in this process (its lease is not orphaned, only late). */
  active: (runId: string) => boolean;
}

/**
 * Marks runs left behind by a process that died (their lease expired) as
 * failed and frees their threads, so the threads can be continued. All of
 * them (the periodic sweep), or those of one thread (a request that needs it).
 */
export async function recoverOrphans(context: RecoveryContext, threadId?: string): Promise<number> {
  const { store, graphs, onRunEnd } = context;
  const orphans = await store.orphanedRuns(threadId);
  let recovered = 0;
  for (const run of orphans) {
    if (context.active(run.run_id)) continue;
    const inspected = await inspectThread(graphs, run.assistant_id, run.thread_id).catch(
      (): ThreadInspection => ({ thread: "error", outcome: undefined }),
    );
    // A run whose graph reached its end (or its review) before the process died finished: it reads as it ended.
    if (endedBy(inspected, run.run_id))
      await store.setRunStatus(run.run_id, "success", undefined, inspected.outcome, onRunEnd);
    else
      await store.setRunStatus(
        run.run_id,
        "error",
        {
          error: "server_restarted",
          message: "the server running this run stopped; send a new message or continue the thread with input null",
        },
        undefined,
        onRunEnd,
      );
    await store.release(run.thread_id, run.run_id, inspected.thread, inspected.values);
    recovered += 1;
  }
  // An expired lease is free whatever it points at: also a run whose row was never written (its
  // process died between taking the lease and recording the run) or whose end was recorded.
  for (const lease of await store.admission.stranded(threadId)) {
    if (context.active(lease.active_run)) continue;
    const inspected = await inspectThread(graphs, lease.graph_id ?? "agent", lease.thread_id).catch(() => ({
      thread: "error" as ThreadStatus,
      values: undefined,
    }));
    await store.release(lease.thread_id, lease.active_run, inspected.thread, inspected.values);
    recovered += 1;
  }
  return recovered;
}
