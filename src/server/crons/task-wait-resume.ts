/**
 * How the poller of task waits resumes a paused thread (task-waits.ts): a run started through the run manager (the
 * one place a run is admitted) as the thread's owner, as the principal directory lists them now (never a client's
 * claim), answering the thread's `task_wait` interrupt. Checked again under the thread's lease: the interrupt must
 * still be pending, so two instances that both saw the task end resume it once.
 */
import type { StateSnapshot } from "@langchain/langgraph";
import type { PrincipalDirectory } from "../../auth/principal-directory.js";
import { ApiError } from "../../errors.js";
import { isTaskWaitInterrupt, TASK_WAIT_OVER } from "../../execution/task-wait.js";
import type { TaskWait } from "../../stores/task-wait-store.js";
import type { ThreadStore } from "../../stores/thread-store.js";
import { pendingInterrupts } from "../runs/outcome.js";
import type { RunManager } from "../runs/manager.js";
import { ownerOf } from "../runs/types.js";

export interface TaskWaitResumeContext {
  manager: RunManager;
  threads: ThreadStore;
  directory: PrincipalDirectory;
  snapshotOf(threadId: string): Promise<StateSnapshot>;
}

/** Resumes `wait`'s thread; "gone" when the thread no longer exists or no longer waits (nothing to resume). */
export async function resumeTaskWait(
  context: TaskWaitResumeContext,
  wait: TaskWait,
): Promise<{ run_id: string } | "gone"> {
  const principal = await context.directory.current(wait.principal);
  const thread = await context.threads.get(ownerOf(principal), wait.thread_id);
  if (!thread) return "gone";
  const waiting = async () => pendingInterrupts(await context.snapshotOf(wait.thread_id));
  const pending = await waiting();
  // Not stored yet (the run that paused is still saving its interrupt): throw, the poller comes back.
  if (pending.length === 0 && thread.active_run !== null)
    throw new ApiError("thread_busy", "the thread's run is still pausing");
  if (!pending.some((item) => isTaskWaitInterrupt(item.value))) return "gone";
  const verify = async () => {
    if (!(await waiting()).some((item) => isTaskWaitInterrupt(item.value)))
      throw new ApiError("no_pending_interrupt", "the task wait was resumed by another instance");
  };
  const active = await context.manager.start({
    principal,
    thread,
    assistantId: thread.graph_id ?? wait.assistant_id,
    input: null,
    resume: { value: TASK_WAIT_OVER },
    streamModes: ["values"],
    metadata: { task_id: wait.task_id },
    verify,
  });
  // A cancel asked for while the thread waited: the run settles its write step (the task already asked to cancel,
  // its row ends `task_cancelled`) and stops there, as a cancel of a run polling the task inline does.
  if (wait.cancel_requested) await context.manager.cancel(ownerOf(principal), wait.thread_id, active.run.run_id);
  return { run_id: active.run.run_id };
}
