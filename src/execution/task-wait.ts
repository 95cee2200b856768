/**
 * A write its server runs as a task, left to the poller of task waits instead of held by the run (Host.taskWaits):
 * the call's row stays `running` with its task id, and the execute node pauses the thread with a `task_wait`
 * interrupt. Only the poller resumes it (src/server/crons/task-waits.ts), once the task ended or its deadline
 * passed; the resumed node settles the row by polling the task as after a crash (call-journal.ts `resumeTask`).
 */
import { z } from "zod";
import type { TaskWaiting } from "../mcp/tasks.js";
import type { LedgerRow } from "../state/ledger.js";

/** The interrupt kind of a paused task write; a client's `command.resume` of it is refused (`task_waiting`). */
export const TASK_WAIT = "task_wait";

/** One call a task-wait interrupt waits for. */
export interface WaitedTask {
  call_id: string;
  attempt: number;
  server: string;
  tool: string;
  task_id: string;
  /** When the poller looks at the task next (ISO). */
  poll_after: string;
  /** The contract's deadline for the call (its send plus `timeout_ms`, ISO): the thread resumes by then. */
  deadline: string;
}

export const TaskWaitInterrupt = z.object({
  kind: z.literal(TASK_WAIT),
  tasks: z
    .array(
      z.object({
        call_id: z.string(),
        attempt: z.number().int(),
        server: z.string(),
        tool: z.string(),
        task_id: z.string(),
        poll_after: z.string(),
        deadline: z.string(),
      }),
    )
    .min(1),
});
export type TaskWaitInterrupt = z.infer<typeof TaskWaitInterrupt>;

/** What the poller resumes a task-wait interrupt with. */
export const TASK_WAIT_OVER = { kind: "task_wait_over" } as const;

/** Whether an interrupt's value is a task wait (only the poller may resume it). */
export function isTaskWaitInterrupt(value: unknown): boolean {
  return TaskWaitInterrupt.safeParse(value).success;
}

/** A call whose task is still working, left to the poller: thrown by the journal, caught by the execute node. */
export class CallWaiting extends Error {
  constructor(readonly task: WaitedTask) {
    super(`the call ${task.call_id} waits for task ${task.task_id}`);
    this.name = "CallWaiting";
  }
}

export function isCallWaiting(error: unknown): error is CallWaiting {
  return error instanceof Error && error.name === "CallWaiting" && typeof (error as CallWaiting).task === "object";
}

/** Whether `error` is the tool host's TaskWaiting (by name: mcp/ is imported for types only). */
export function isTaskWaiting(error: unknown): error is TaskWaiting {
  return error instanceof Error && error.name === "TaskWaiting" && typeof (error as TaskWaiting).taskId === "string";
}

/** The wait of `row`'s call, whose task said to poll again after `pollAfterMs`, bounded by its contract's timeout. */
export function waitedTask(row: LedgerRow, taskId: string, pollAfterMs: number, timeoutMs: number, now: number) {
  return new CallWaiting({
    call_id: row.call_id,
    attempt: row.attempt,
    server: row.server,
    tool: row.tool,
    task_id: taskId,
    poll_after: new Date(now + pollAfterMs).toISOString(),
    deadline: new Date(Date.parse(row.started_at) + timeoutMs).toISOString(),
  });
}
