/**
 * The threads of this process whose execute node is settling a write: from
 * the node's start until its result is LangGraph's (its task committed), so
 * across a retry, a timeout and the reconciliation that follows it. A cancel
 * waits for this (server/run-execution.ts `safePointCancel`): a write's
 * ledger row leaves `running` when its call ends, but the step is not done
 * until the node has also reconciled an unknown outcome and its result is
 * in the checkpoint. Cut there, the thread would hold a write the
 * checkpoint does not know of, and the next request would be refused with
 * `thread_unfinished`.
 *
 * Process-local on purpose: a run is cancelled in the process that runs it
 * (the heartbeat brings another instance's cancel request there).
 */

const writing = new Map<string, number>();

/** Whether an execute node of `threadId` is settling a write in this process now. */
export function settlingWrite(threadId: string): boolean {
  return (writing.get(threadId) ?? 0) > 0;
}

/**
 * Runs `work` (an execute node's body) as a write being settled on
 * `threadId`. The mark outlives `work` by one turn of the event loop: the
 * node's return value becomes the task's writes in the promise callbacks
 * that follow it, before any timer, so a cancel polling on a timer sees the
 * step end only once LangGraph holds its result.
 */
export async function whileSettlingWrite<T>(threadId: string, work: () => Promise<T>): Promise<T> {
  writing.set(threadId, (writing.get(threadId) ?? 0) + 1);
  try {
    return await work();
  } finally {
    setImmediate(() => {
      const left = (writing.get(threadId) ?? 1) - 1;
      if (left > 0) writing.set(threadId, left);
      else writing.delete(threadId);
    });
  }
}
