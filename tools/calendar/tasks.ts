/**
 * `create_study_event` as a task (the MCP tasks extension, `io.modelcontextprotocol/tasks`, on 2026-07-28): with
 * `WARRANT_CALENDAR_TASK_MS` set, a call that declares the extension in its per-request capabilities is answered at
 * once with `resultType: "task"`, and the write is made that many milliseconds later. Tasks are kept in a JSON file
 * beside the store (written before the task answer leaves, so a `tasks/get` for it always resolves), and a process
 * that starts finds the tasks a previous one left `working` and finishes them: the write is idempotent by its key, so
 * finishing twice still makes one event. `tasks/get` answers a task's state (its tool result once completed),
 * `tasks/cancel` cancels a task still working, an unknown task id is JSON-RPC -32602 (as the extension says).
 * With `WARRANT_CALENDAR_CONFIRM=1` too, a task starts `input_required` with the confirmation in its `inputRequests`;
 * `tasks/update` {taskId, inputResponses} answers it: confirmed, the task works and writes once; refused, it completes
 * with the tool error a plain call answers (`tool_failed`, nothing written). `WARRANT_CALENDAR_TASK_ASK=late`: the
 * task works first and asks when its work is done, before it writes (a question the host's poller finds).
 */
import { randomUUID } from "node:crypto";
import { appendFileSync } from "node:fs";
import { readFile, rename, writeFile } from "node:fs/promises";
import { CreateStudyEventInputSchema } from "./calendar.js";
import { type ConfirmSettings, confirmationIn, confirmRequests } from "./confirm.js";
import type { CalendarStoreBackend, CreateOutcome } from "./store.js";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
const CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";
const TASK_TOOL = "create_study_event";
const INVALID_PARAMS = -32602;
const TTL_MS = 3_600_000;

type Status = "working" | "input_required" | "completed" | "failed" | "cancelled";

interface TaskRecord {
  taskId: string;
  status: Status;
  createdAt: string;
  lastUpdatedAt: string;
  args: Record<string, unknown>;
  result?: Record<string, unknown>;
  /** While `input_required`: what the task asks (the confirmation); the answer comes with `tasks/update`. */
  inputRequests?: Record<string, unknown>;
  /** When the work started (the task's creation, or the accepted confirmation). */
  workFrom?: string;
  /** The owner confirmed the write (`tasks/update`). */
  confirmed?: boolean;
}

interface Message {
  jsonrpc: "2.0";
  id?: string | number;
  method?: string;
  params?: Record<string, unknown>;
}

export interface TaskSettings {
  /** How long the work of a task takes before its write is made. */
  workMs: number;
  /** The `pollIntervalMs` the server suggests. */
  pollMs: number;
  /** The tasks file. */
  path: string;
  /** Test switch: the process exits right after answering a task (the server dies while the host polls). */
  exitAfterTask?: boolean;
  /** `WARRANT_CALENDAR_CONFIRM=1`: a task first asks to confirm (`input_required`), answered by `tasks/update`. */
  confirm?: boolean;
  /** `WARRANT_CALENDAR_TASK_ASK=late`: with `confirm`, the task asks once its work is done, not when it starts. */
  askLate?: boolean;
  /** `WARRANT_CALENDAR_CALL_LOG`: one JSON line per `create_study_event` task call and `tasks/update` received. */
  callLog?: string | undefined;
}

export interface CalendarTasks {
  /** Whether this message is one the tasks answer (decided at once, so the order of other messages is kept). */
  claims(message: Message): boolean;
  /** The JSON-RPC response to a claimed message. */
  answer(message: Message): Promise<Record<string, unknown>>;
  /** Finishes the tasks a previous process left working. */
  resume(): Promise<void>;
  close(): void;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether a request declares the tasks extension in its per-request capabilities. */
function declaresTasks(params: Record<string, unknown> | undefined): boolean {
  const meta = params?.["_meta"];
  const capabilities = isRecord(meta) ? meta[CAPABILITIES_KEY] : undefined;
  const extensions = isRecord(capabilities) ? capabilities["extensions"] : undefined;
  return isRecord(extensions) && isRecord(extensions[TASKS_EXTENSION]);
}

/** The task as the wire carries it (`CreateTaskResult` / `GetTaskResult` without `resultType`). */
function wireTask(record: TaskRecord, pollMs: number): Record<string, unknown> {
  return {
    taskId: record.taskId,
    status: record.status,
    createdAt: record.createdAt,
    lastUpdatedAt: record.lastUpdatedAt,
    ttlMs: TTL_MS,
    pollIntervalMs: pollMs,
    ...(record.status === "completed" && record.result ? { result: record.result } : {}),
    ...(record.status === "input_required" && record.inputRequests ? { inputRequests: record.inputRequests } : {}),
  };
}

type ToolResult = (outcome: CreateOutcome) => Record<string, unknown>;

/**
 * Tasks for create_study_event when `WARRANT_CALENDAR_TASK_MS` is set (tests: a slow write); none otherwise. The
 * tasks file is `<store file>.tasks.json`; `WARRANT_CALENDAR_TASK_POLL_MS` (default 200) the interval suggested;
 * `WARRANT_CALENDAR_TASK_EXIT=1` makes the process exit right after answering a task (tests).
 */
export function tasksFromEnvironment(
  environment: NodeJS.ProcessEnv,
  dataPath: string,
  store: CalendarStoreBackend,
  toolResult: ToolResult,
  log: (message: string) => void,
  confirm?: ConfirmSettings,
): CalendarTasks | undefined {
  const workMs = environment["WARRANT_CALENDAR_TASK_MS"];
  if (workMs === undefined || workMs === "") return undefined;
  const pollMs = environment["WARRANT_CALENDAR_TASK_POLL_MS"] ?? "200";
  if (!/^[0-9]{1,7}$/.test(workMs) || !/^[1-9][0-9]{0,5}$/.test(pollMs))
    throw new Error("invalid WARRANT_CALENDAR_TASK_MS or WARRANT_CALENDAR_TASK_POLL_MS (expected whole milliseconds)");
  const settings = {
    workMs: Number(workMs),
    pollMs: Number(pollMs),
    path: `${dataPath}.tasks.json`,
    exitAfterTask: environment["WARRANT_CALENDAR_TASK_EXIT"] === "1",
    confirm: confirm?.confirm === true,
    askLate: environment["WARRANT_CALENDAR_TASK_ASK"] === "late",
    callLog: confirm?.callLog,
  };
  return calendarTasks(settings, store, toolResult, log);
}

export function calendarTasks(
  settings: TaskSettings,
  store: CalendarStoreBackend,
  toolResult: ToolResult,
  log: (message: string) => void,
): CalendarTasks {
  const timers = new Map<string, NodeJS.Timeout>();
  let tail: Promise<unknown> = Promise.resolve();

  const read = async (): Promise<Record<string, TaskRecord>> => {
    try {
      return JSON.parse(await readFile(settings.path, "utf8")) as Record<string, TaskRecord>;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
      throw error;
    }
  };
  /** Read-modify-rename under this process's queue. */
  const update = <T>(change: (tasks: Record<string, TaskRecord>) => T): Promise<T> => {
    const run = tail.then(async () => {
      const tasks = await read();
      const value = change(tasks);
      const temporary = `${settings.path}.${process.pid}.tmp`;
      await writeFile(temporary, JSON.stringify(tasks, null, 2));
      await rename(temporary, settings.path);
      return value;
    });
    tail = run.catch(() => undefined);
    return run;
  };

  const work = async (taskId: string): Promise<void> => {
    timers.delete(taskId);
    const record = (await read())[taskId];
    if (record?.status !== "working") return;
    if (settings.confirm && !record.confirmed) {
      // Asking late: the work is done, the write waits for the answer.
      await update((tasks) => {
        const current = tasks[taskId];
        const inputRequests = confirmRequests(String(record.args["title"]));
        const now = new Date().toISOString();
        if (current?.status === "working")
          Object.assign(current, { status: "input_required", inputRequests, lastUpdatedAt: now });
      });
      log(`task ${taskId}: input_required (asking late)`);
      return;
    }
    const input = CreateStudyEventInputSchema.parse(record.args);
    let result: Record<string, unknown>;
    try {
      result = toolResult(await store.create(input));
    } catch (error) {
      log(`task ${taskId}: store update failed: ${error instanceof Error ? error.message : String(error)}`);
      // Left working: the next process (or a later attempt) finishes it; the key keeps it to one event.
      return;
    }
    await update((tasks) => {
      const current = tasks[taskId];
      // A cancel that came while the write was being made is too late: the task completed.
      if (current) Object.assign(current, { status: "completed", result, lastUpdatedAt: new Date().toISOString() });
    });
    log(`task ${taskId}: completed`);
  };
  const schedule = (record: TaskRecord): void => {
    const due = Date.parse(record.workFrom ?? record.createdAt) + settings.workMs - Date.now();
    timers.set(
      record.taskId,
      setTimeout(
        () => void work(record.taskId).catch((error: unknown) => log(`task ${record.taskId}: ${String(error)}`)),
        Math.max(0, due),
      ),
    );
  };

  const response = (message: Message, result: Record<string, unknown>) => ({
    jsonrpc: "2.0",
    id: message.id,
    result: { resultType: "complete", ...result },
  });
  const unknownTask = (message: Message) => ({
    jsonrpc: "2.0",
    id: message.id,
    error: { code: INVALID_PARAMS, message: "Failed to retrieve task: Task not found" },
  });
  const taskIdOf = (message: Message): string =>
    typeof message.params?.["taskId"] === "string" ? message.params["taskId"] : "";

  /** One line per task request that could write (tests count what reached the server). */
  const logCall = (method: string | undefined, key: unknown, inputResponses: boolean): void => {
    if (settings.callLog === undefined) return;
    const line = { method, idempotency_key: key, input_responses: inputResponses };
    appendFileSync(settings.callLog, `${JSON.stringify(line)}\n`);
  };
  /**
   * `tasks/update`: the answer to what an `input_required` task asked. Confirmed, the task works (and writes once);
   * refused, it completes with the tool error a plain call answers (nothing written).
   */
  const answerUpdate = async (message: Message): Promise<Record<string, unknown>> => {
    const taskId = taskIdOf(message);
    const decision = confirmationIn(message.params?.["inputResponses"]);
    const updated = await update((tasks) => {
      const record = tasks[taskId];
      if (!record) return undefined;
      logCall(message.method, record.args["idempotency_key"], decision !== undefined);
      if (record.status !== "input_required" || decision === undefined) return record;
      const now = new Date().toISOString();
      delete record.inputRequests;
      if (decision.kind === "confirmed")
        Object.assign(record, { status: "working", confirmed: true, workFrom: now, lastUpdatedAt: now });
      else {
        const action = decision.kind === "refused" ? decision.action : "not confirmed";
        const error = { code: "tool_failed" as const, message: `the event was not confirmed (${action})` };
        Object.assign(record, {
          status: "completed",
          result: toolResult({ kind: "rejected", error }),
          lastUpdatedAt: now,
        });
      }
      return record;
    });
    if (!updated) return unknownTask(message);
    if (updated.status === "working" && !timers.has(taskId)) schedule(updated);
    log(`task ${taskId}: updated, now ${updated.status}`);
    return response(message, {});
  };

  return {
    claims(message) {
      if (message.id === undefined) return false;
      if (message.method === "tasks/get" || message.method === "tasks/cancel" || message.method === "tasks/update")
        return true;
      return message.method === "tools/call" && message.params?.["name"] === TASK_TOOL && declaresTasks(message.params);
    },
    async answer(message) {
      if (message.method === "tools/call") {
        const parsed = CreateStudyEventInputSchema.safeParse(message.params?.["arguments"]);
        if (!parsed.success)
          return { jsonrpc: "2.0", id: message.id, error: { code: INVALID_PARAMS, message: "invalid arguments" } };
        const now = new Date().toISOString();
        logCall(message.method, parsed.data.idempotency_key, false);
        // Asked to confirm first: nothing is worked on (or written) before the answer (`tasks/update`).
        const asksFirst = settings.confirm === true && settings.askLate !== true;
        const record: TaskRecord = {
          taskId: randomUUID(),
          status: asksFirst ? "input_required" : "working",
          createdAt: now,
          lastUpdatedAt: now,
          args: parsed.data,
          ...(asksFirst ? { inputRequests: confirmRequests(parsed.data.title) } : {}),
        };
        // Durable before the answer leaves: a tasks/get for the returned id resolves.
        await update((tasks) => {
          tasks[record.taskId] = record;
        });
        if (record.status === "working") schedule(record);
        log(`task ${record.taskId}: ${record.status} on ${TASK_TOOL} for ${parsed.data.user_id}`);
        if (settings.exitAfterTask) {
          log(`task ${record.taskId}: exiting after the task answer (WARRANT_CALENDAR_TASK_EXIT=1)`);
          setTimeout(() => process.exit(1), 200);
        }
        return { jsonrpc: "2.0", id: message.id, result: { resultType: "task", ...wireTask(record, settings.pollMs) } };
      }
      const taskId = taskIdOf(message);
      if (message.method === "tasks/get") {
        const record = (await read())[taskId];
        return record ? response(message, wireTask(record, settings.pollMs)) : unknownTask(message);
      }
      if (message.method === "tasks/update") return answerUpdate(message);
      const cancelled = await update((tasks) => {
        const record = tasks[taskId];
        if (!record) return false;
        if (record.status === "working") {
          Object.assign(record, { status: "cancelled", lastUpdatedAt: new Date().toISOString() });
          clearTimeout(timers.get(taskId));
          timers.delete(taskId);
          log(`task ${taskId}: cancelled`);
        }
        return true;
      });
      return cancelled ? response(message, {}) : unknownTask(message);
    },
    async resume() {
      for (const record of Object.values(await read())) {
        if (record.status !== "working") continue;
        log(`task ${record.taskId}: resuming work a previous process left`);
        schedule(record);
      }
    },
    close() {
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
    },
  };
}
