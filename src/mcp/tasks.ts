/**
 * Tool calls answered as tasks (the MCP tasks extension, `io.modelcontextprotocol/tasks`, on 2026-07-28), for tools
 * whose contract opts in (`"task": true`). The v2 SDK client has no runtime for the extension (it refuses a
 * `resultType: "task"` answer), so the host speaks it here: the call declares the extension in its per-request
 * capabilities; a task answer is turned, at the transport, into an error carrying the task, which `callTool`
 * hands back as a task handle; `tasks/get` and `tasks/cancel` are sent with their own result schema.
 *
 * `callAsTask` is what the tool host runs for such a call: the task id is handed to `TaskHooks.started` (the
 * ledger row records it durably) before anything else happens, then the task is polled at the server's
 * `pollIntervalMs`, within the contract's timeout, until it ends. A call whose row already holds a task id
 * (recovery after a crash) skips the call and polls that task. A task the server does not know (any more) is
 * `outcome_unknown` (the write protocol reconciles it as any unknown outcome); a run cancel sends `tasks/cancel`
 * and records what the server says the task became.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Client } from "@modelcontextprotocol/client";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { type ElicitationHandler, isUrlRefusal } from "../elicitation/client.js";
import type { ToolErrorCode } from "../errors.js";
import type { RequestOptions, TaskRequests, TaskState } from "./connection.js";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
const CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";
/** The code of the error a task answer is turned into on its way to the SDK client (JSON-RPC's implementation range). */
const TASK_ANSWER = -32_009;
/** Bounds of the poll interval the host honours, whatever the server suggests. */
const MIN_POLL_MS = 50;
const MAX_POLL_MS = 30_000;
/** How long `tasks/cancel` and the look after it may take when a run is cancelled. */
const CANCEL_TIMEOUT_MS = 5_000;

/** The answer to a question the host cannot ask (no elicitation for this server, or not an elicitation). */
const DECLINED = { action: "decline" } as const;

const TaskSchema = z.looseObject({
  taskId: z.string().min(1).max(256),
  status: z.enum(["working", "input_required", "completed", "failed", "cancelled"]),
  pollIntervalMs: z.number().int().nonnegative().optional(),
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.looseObject({ code: z.number().int(), message: z.string() }).optional(),
  inputRequests: z.record(z.string(), z.unknown()).optional(),
});

/** What the caller of a task call is told, and may know already. */
export interface TaskHooks {
  /** A task id the call's ledger row holds (a call recovered after a crash): poll it, send nothing. */
  resume?: string | undefined;
  /** Called with the task id the moment it arrives; polling starts only once it resolves (the id is durable). */
  started(taskId: string): Promise<void>;
  /**
   * The run does not wait here: a task still working after its first poll ends the call with {@link TaskWaiting}
   * (the thread pauses and a poller on any instance waits for it; src/server/crons/task-waits.ts).
   */
  detach?: boolean | undefined;
}

/** A task still working that the run leaves to the poller: the call is neither settled nor failed. */
export class TaskWaiting extends Error {
  constructor(
    readonly taskId: string,
    readonly pollAfterMs: number,
  ) {
    super(`the task ${taskId} is still working`);
    this.name = "TaskWaiting";
  }
}

/** Whether `error` is a {@link TaskWaiting} (by name: it crosses the tool host's failure classification). */
export function isTaskWaiting(error: unknown): error is TaskWaiting {
  return error instanceof Error && error.name === "TaskWaiting" && typeof (error as TaskWaiting).taskId === "string";
}

/** How a task call ended without a tool result, with the code the ledger records. */
export class TaskEnded extends Error {
  constructor(
    readonly code: ToolErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "TaskEnded";
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

interface MessageTransport {
  onmessage?: ((message: never, ...rest: never[]) => void) | undefined;
}

/**
 * Turns each task answer arriving on `transport` into an error response carrying the task (the SDK client
 * refuses `resultType: "task"` and keeps no payload). Call after the client connected (it set `onmessage`).
 */
export function interceptTaskAnswers(transport: MessageTransport): void {
  const deliver = transport.onmessage as ((message: unknown, ...rest: unknown[]) => void) | undefined;
  if (!deliver) return;
  const wrapped = (message: unknown, ...rest: unknown[]): void => {
    const result = isRecord(message) ? message["result"] : undefined;
    if (isRecord(message) && isRecord(result) && result["resultType"] === "task") {
      const { resultType: _resultType, ...task } = result;
      const error = { code: TASK_ANSWER, message: "task", data: { task } };
      deliver({ jsonrpc: "2.0", id: message["id"], error }, ...rest);
      return;
    }
    deliver(message, ...rest);
  };
  transport.onmessage = wrapped as MessageTransport["onmessage"];
}

/**
 * The task requests of `client`; `translate` turns a v2 failure into the v1 error failures.ts classifies; `elicit`
 * (the client's elicitation handler: same owner binding and records as a plain call's question) answers what an
 * `input_required` task asks. Without it, or for anything but `elicitation/create`, the host declines.
 */
export function taskRequests(
  client: Client,
  translate: (error: unknown, options: RequestOptions) => unknown,
  elicit?: ElicitationHandler,
): TaskRequests {
  // The client's own capabilities, with the extension added: per-request capabilities replace the client's.
  const base = (client as unknown as { _capabilities?: Record<string, unknown> })._capabilities ?? {};
  const extensions = isRecord(base["extensions"]) ? base["extensions"] : {};
  const capabilities = { ...base, extensions: { ...extensions, [TASKS_EXTENSION]: {} } };
  const translated = async <T>(options: RequestOptions, work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      throw translate(error, options);
    }
  };
  return {
    async callTool(params, options) {
      try {
        const meta = { ...params._meta, [CAPABILITIES_KEY]: capabilities };
        const raw = await client.callTool({ ...params, _meta: meta }, options);
        return { kind: "result", raw };
      } catch (error) {
        const data = isRecord(error) && error["code"] === TASK_ANSWER ? error["data"] : undefined;
        if (!isRecord(data)) throw translate(error, options);
        const task = TaskSchema.safeParse(data["task"]);
        if (!task.success) throw new McpError(ErrorCode.InvalidRequest, "the server answered a malformed task");
        return { kind: "task", task: task.data };
      }
    },
    get: (taskId, options) =>
      translated(options, () => client.request({ method: "tasks/get", params: { taskId } }, TaskSchema, options)),
    cancel: (taskId, options) =>
      translated(options, async () => {
        await client.request({ method: "tasks/cancel", params: { taskId } }, z.looseObject({}), options);
      }),
    async answer(inputRequests, signal) {
      const answers: Record<string, unknown> = {};
      // One question at a time, in the server's order: the owner sees them as the server asked.
      for (const [key, request] of Object.entries(inputRequests)) {
        const params = isRecord(request) && request["method"] === "elicitation/create" ? request["params"] : undefined;
        answers[key] = elicit && isRecord(params) ? await askOnce(elicit, client, key, params, signal) : DECLINED;
      }
      return answers;
    },
    update: (taskId, inputResponses, options) =>
      translated(options, async () => {
        const params = { taskId, inputResponses };
        await client.request({ method: "tasks/update", params }, z.looseObject({}), options);
      }),
  };
}

/**
 * One question of a task through the client's elicitation handler. A URL-mode one is known by its key among the
 * task's `inputRequests` (2026-07-28 has no `elicitationId`), and a refused URL reaches the server as `decline`
 * (an input response cannot be an error), as for a plain call's `input_required` (modern-session.ts).
 */
async function askOnce(
  elicit: ElicitationHandler,
  client: Client,
  key: string,
  params: Record<string, unknown>,
  signal: AbortSignal,
): Promise<unknown> {
  if (params["mode"] !== "url") return elicit(client, params, signal);
  try {
    return await elicit(client, { ...params, elicitationId: key }, signal);
  } catch (error) {
    if (isUrlRefusal(error)) return DECLINED;
    throw error;
  }
}

/** How long to wait before polling `task` again: the server's interval, bounded. */
export const pollDelay = (task: TaskState, fallback: number): number =>
  Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, task.pollIntervalMs ?? fallback));

/** A task the server does not know: JSON-RPC invalid params on `tasks/get`, as the extension says. */
function forgotten(error: unknown): boolean {
  return error instanceof McpError && error.code === ErrorCode.InvalidParams;
}

/**
 * Runs a tool call that its server may answer as a task, to the tool's raw result: the call (or, with
 * `hooks.resume`, the task already started), the task id handed to `hooks.started`, then polling within
 * `options.timeout`. Throws as a call does (failures.ts), or {@link TaskEnded}.
 */
export async function callAsTask(
  requests: TaskRequests,
  params: { name: string; arguments: Record<string, unknown> },
  options: RequestOptions,
  hooks: TaskHooks,
): Promise<unknown> {
  const deadline = Date.now() + options.timeout;
  let task: TaskState | undefined;
  let taskId = hooks.resume;
  if (taskId === undefined) {
    const answer = await requests.callTool(params, options);
    if (answer.kind === "result") return answer.raw;
    task = answer.task;
    taskId = task.taskId;
    await hooks.started(taskId);
  }
  let delay = task ? pollDelay(task, 0) : 0;
  let polls = 0;
  // A task the owner answered is waited for here, not left to the poller: the row keeps the question's record.
  let answered = false;
  for (;;) {
    // Detached: once polled (and still working), the wait is the poller's; the row keeps the task id.
    if (hooks.detach && !answered && polls > 0 && task?.status === "working")
      throw new TaskWaiting(taskId, pollDelay(task, delay));
    if (task?.status === "completed") return task.result ?? { content: [] };
    if (task?.status === "failed")
      throw new McpError(task.error?.code ?? ErrorCode.InternalError, task.error?.message ?? "the task failed");
    if (task?.status === "cancelled") throw new TaskEnded("task_cancelled", "the task was cancelled at the server");
    if (task?.status === "input_required" && task.inputRequests) {
      // The owner answers as for a plain call's question; the answers go back on the same task (no new tools/call).
      await answerTask(requests, task, deadline, options);
      answered = true;
      task = undefined;
    }
    const left = deadline - Date.now();
    if (left <= 0) throw new McpError(ErrorCode.RequestTimeout, "the task did not end in time");
    try {
      await sleep(Math.min(delay, left), undefined, options.signal ? { signal: options.signal } : undefined);
      task = await requests.get(taskId, { timeout: left, ...(options.signal ? { signal: options.signal } : {}) });
      polls += 1;
    } catch (error) {
      if (options.signal?.aborted) return cancelled(requests, taskId, options.signal);
      if (forgotten(error)) throw new TaskEnded("outcome_unknown", "the server no longer knows the task");
      throw error;
    }
    delay = pollDelay(task, delay);
  }
}

/** Asks what `task` asks (the owner, through the client's elicitation handler) and sends the answers (`tasks/update`). */
async function answerTask(
  requests: TaskRequests,
  task: TaskState,
  deadline: number,
  options: RequestOptions,
): Promise<void> {
  const signal = options.signal ?? new AbortController().signal;
  const inputResponses = await requests.answer(task.inputRequests ?? {}, signal);
  const timeout = Math.max(deadline - Date.now(), MIN_POLL_MS);
  await requests.update(task.taskId, inputResponses, {
    timeout,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

/**
 * One look at a task a call started (the poller of task waits): `tasks/get`, or with `cancel` a `tasks/cancel`
 * first. Throws {@link TaskEnded} `outcome_unknown` for a task the server does not know, or a server no longer on
 * 2026-07-28 (no task requests).
 */
export async function lookAtTask(
  requests: TaskRequests | undefined,
  taskId: string,
  options: RequestOptions,
  cancel = false,
): Promise<TaskState> {
  if (!requests)
    throw new TaskEnded("outcome_unknown", "the task cannot be polled: the server no longer speaks 2026-07-28");
  try {
    if (cancel) await requests.cancel(taskId, options).catch(() => undefined);
    return await requests.get(taskId, options);
  } catch (error) {
    if (forgotten(error)) throw new TaskEnded("outcome_unknown", "the server no longer knows the task");
    throw error;
  }
}

/** A run cancel: asks the server to cancel the task and records what the task became (cooperative cancellation). */
async function cancelled(requests: TaskRequests, taskId: string, signal: AbortSignal): Promise<unknown> {
  const options = { timeout: CANCEL_TIMEOUT_MS };
  await requests.cancel(taskId, options).catch(() => undefined);
  const after = await requests.get(taskId, options).catch(() => undefined);
  // Finished before the cancel took effect: its effect happened, and the ledger says so.
  if (after?.status === "completed") return after.result ?? { content: [] };
  if (after?.status === "cancelled") throw new TaskEnded("task_cancelled", "the task was cancelled at the server");
  throw signal.reason;
}
