/**
 * The poller of task waits, one loop per server instance (beside the cron scheduler): a task write the execute
 * node left to it (src/execution/task-wait.ts) is polled here, by whichever instance takes its due row first
 * (TaskWaitStore.claimDue: a lease, `FOR UPDATE SKIP LOCKED`), with one `tasks/get` at the server's interval.
 * Still working → polled again after the server's `pollIntervalMs` (bounded as tasks.ts bounds it). Ended
 * (completed, failed, cancelled, forgotten), asking for input (`input_required`: the resumed run asks the owner and
 * answers with `tasks/update`) or past the contract's deadline → the thread's `task_wait` interrupt
 * is resumed by a run started as its owner through the run manager; the resumed execute node settles the call
 * from its task, as after a crash. A resume refused (the thread busy, the interrupt not stored yet) is tried again
 * at the next poll.
 */
import { isApiError } from "../../errors.js";
import type { ToolHost } from "../../mcp/tool-host.js";
import { pollDelay } from "../../mcp/tasks.js";
import type { TaskWait, TaskWaitStore } from "../../stores/task-wait-store.js";

export interface TaskWaitPollerOptions {
  store: TaskWaitStore;
  tools: () => Promise<ToolHost>;
  /** Resumes the wait's thread (its `task_wait` interrupt) as its owner; throws when it cannot now. */
  resume(wait: TaskWait): Promise<{ run_id: string } | "gone">;
  intervalMs: number;
  log: (line: string) => void;
}

export interface TaskWaitPoller {
  /** Stops the loop and waits for the tick in progress. */
  stop(): Promise<void>;
}

/** Waits taken per tick. */
const BATCH = 20;
/** How long a taken wait is this instance's (others skip it); longer than one `tasks/get` may take. */
const LEASE_MS = 30_000;
/** When a wait whose resume failed for another reason than a busy thread is tried again. */
const RETRY_MS = 30_000;
/** How long one `tasks/get` may take. */
const LOOK_TIMEOUT_MS = 10_000;

export function startTaskWaitPoller(options: TaskWaitPollerOptions): TaskWaitPoller {
  let stopped = false;
  let current: Promise<void> = Promise.resolve();
  const tick = async () => {
    const due = await options.store.claimDue(BATCH, LEASE_MS);
    for (const wait of due) {
      if (stopped) return;
      await pollOnce(options, wait).catch((error: unknown) => {
        options.log(`task ${wait.task_id} of thread ${wait.thread_id}: poll failed: ${String(error)}`);
        // A thread still pausing (or busy) is tried again soon; anything else (an owner revoked) less often.
        const later = isApiError(error) && error.code === "thread_busy" ? options.intervalMs : RETRY_MS;
        return options.store.reschedule(wait, new Date(Date.now() + later));
      });
    }
  };
  const timer = setInterval(() => {
    // One tick at a time: a slow server makes ticks wait, never pile up.
    current = current.then(() =>
      stopped ? undefined : tick().catch((error: unknown) => options.log(`task wait tick failed: ${String(error)}`)),
    );
  }, options.intervalMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await current;
    },
  };
}

/** One look at a wait's task: poll again later, or resume its thread. */
async function pollOnce(options: TaskWaitPollerOptions, wait: TaskWait): Promise<void> {
  const now = Date.now();
  const left = wait.deadline.getTime() - now;
  if (wait.cancel_requested) {
    // Cooperative cancellation: the server is asked to cancel; the resumed run records what the task became.
    const host = await options.tools();
    await host.taskState?.(wait.server, wait.task_id, {
      principal: wait.principal,
      threadId: wait.thread_id,
      timeoutMs: LOOK_TIMEOUT_MS,
      cancel: true,
    });
  } else if (left > 0) {
    const host = await options.tools();
    const state = host.taskState
      ? await host.taskState(wait.server, wait.task_id, {
          principal: wait.principal,
          threadId: wait.thread_id,
          timeoutMs: Math.min(LOOK_TIMEOUT_MS, left),
        })
      : undefined;
    // The server is away (or slow): look again; the deadline bounds it.
    if (state && !state.ok && state.code !== "outcome_unknown") {
      await options.store.reschedule(wait, new Date(now + Math.min(options.intervalMs, left)));
      return;
    }
    // Asking for input: the thread is resumed, and the resumed run asks the owner (tasks.ts, `tasks/update`).
    if (state?.ok && state.task.status === "working") {
      await options.store.reschedule(wait, new Date(now + Math.min(pollDelay(state.task, options.intervalMs), left)));
      return;
    }
  }
  const resumed = await options.resume(wait);
  await options.store.remove(wait);
  options.log(
    resumed === "gone"
      ? `task ${wait.task_id}: its thread ${wait.thread_id} is gone; the wait is dropped`
      : `task ${wait.task_id} ended: thread ${wait.thread_id} resumed by run ${resumed.run_id}`,
  );
}
