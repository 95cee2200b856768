/**
 * A served assistant as an A2A agent (`@a2a-js/sdk`'s request handler
 * interface; the SDK's JSON-RPC transport in routes/a2a.ts speaks the wire).
 *
 * - An A2A task is a run on one of the caller's threads, followed through
 *   the resumes a reviewer's decision starts; the task id is
 *   `{thread_id}:{run_id}` and the context id is the thread id, so context
 *   ids map to threads per principal (another principal's read as unknown).
 * - States: `input-required` while a review waits (decided in the inbox,
 *   never by a message here), `auth-required` for an `authorization_required`
 *   pause, then `completed` / `failed` / `canceled` from the run's outcome.
 * - The principal is the authenticated request's; message and request
 *   metadata are never read.
 */
import {
  type AgentCard,
  type Artifact,
  type Message,
  type Part,
  Role,
  type StreamResponse,
  type Task,
  TaskState,
} from "@a2a-js/sdk";
import {
  type A2AError,
  ExtendedAgentCardNotConfiguredError,
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from "@a2a-js/sdk/errors";
import type { A2ARequestHandler } from "@a2a-js/sdk/server";
import type { Principal } from "../auth/principal.js";
import { logLine } from "../secrets/process-scanner.js";
import type { RouteContext } from "./context.js";
import { ownerOf } from "./runs/types.js";
import { DEFAULT_WAIT_MS, describeRun, type RunView, startExternalRun, waitBriefly } from "./runs/external.js";
import { isDatabaseBusy, isDatabaseUnavailable, isApiError } from "../errors.js";

/** How long a streamed `message/stream` follows its run before ending with the state reached. */
const STREAM_WAIT_MS = 10 * 60_000;

const STATES: Record<RunView["state"], TaskState> = {
  working: TaskState.TASK_STATE_WORKING,
  input_required: TaskState.TASK_STATE_INPUT_REQUIRED,
  auth_required: TaskState.TASK_STATE_AUTH_REQUIRED,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  canceled: TaskState.TASK_STATE_CANCELED,
};

const TASK_ID = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):([0-9a-f-]{36})$/i;

export const taskIdOf = (view: Pick<RunView, "thread_id" | "run_id">) => `${view.thread_id}:${view.run_id}`;

export interface A2AAgentOptions {
  context: RouteContext;
  assistantId: string;
  principal: Principal;
  /** The server as the caller reached it (for review links). */
  origin: string;
  card: AgentCard;
  waitMs?: number | undefined;
}

/** The handler for one request to `/a2a/{assistant_id}`, acting for `principal`. */
export function a2aAgent(options: A2AAgentOptions): A2ARequestHandler {
  const { context, assistantId, principal, origin } = options;
  const waitMs = options.waitMs ?? DEFAULT_WAIT_MS;
  const owner = ownerOf(principal);

  const view = async (taskId: string): Promise<RunView> => {
    const match = TASK_ID.exec(taskId);
    if (!match) throw new TaskNotFoundError({ message: "task not found", metadata: { code: "not_found" } });
    const found = await describeRun(context, principal, match[1] ?? "", match[2] ?? "", origin);
    // A task belongs to the agent it was sent to.
    if (found.assistant_id !== assistantId)
      throw new TaskNotFoundError({ message: "task not found", metadata: { code: "not_found" } });
    return found;
  };

  /** Starts the run a message asks for; a message to an existing task is refused (a review is decided in the inbox). */
  const start = async (message: Message | undefined) => {
    if (!message)
      throw new RequestMalformedError({ message: "message is required", metadata: { code: "invalid_request" } });
    const text = textOf(message);
    if (text === undefined)
      throw new RequestMalformedError({
        message: "the message needs one text part",
        metadata: { code: "invalid_request" },
      });
    if (message.taskId) {
      const existing = await view(message.taskId);
      throw refusalFor(existing);
    }
    return startExternalRun(context, principal, {
      assistantId,
      text,
      threadId: message.contextId === "" ? undefined : message.contextId,
    });
  };

  return {
    getAgentCard: async () => options.card,
    getAuthenticatedExtendedAgentCard: () =>
      Promise.reject(new ExtendedAgentCardNotConfiguredError("this agent has no extended card")),
    sendMessage: (params) =>
      typed(async () => {
        const run = await start(params.message);
        if (!params.configuration?.returnImmediately) await waitBriefly(context, owner, run, waitMs);
        return toTask(await describeRun(context, principal, run.thread_id, run.run_id, origin));
      }),
    async *sendMessageStream(params): AsyncGenerator<StreamResponse, void, undefined> {
      const run = await typed(() => start(params.message));
      const first = await typed(() => describeRun(context, principal, run.thread_id, run.run_id, origin));
      yield { payload: { $case: "task", value: toTask({ ...first, state: "working" }) } };
      await waitBriefly(context, owner, run, STREAM_WAIT_MS);
      const last = await typed(() => describeRun(context, principal, run.thread_id, run.run_id, origin));
      const task = toTask(last);
      yield {
        payload: {
          $case: "statusUpdate",
          value: { taskId: task.id, contextId: task.contextId, status: task.status, metadata: task.metadata },
        },
      };
    },
    getTask: (params) => typed(async () => toTask(await view(params.id))),
    cancelTask: (params) =>
      typed(async () => {
        const current = await view(params.id);
        if (current.state !== "working")
          throw new TaskNotCancelableError({ message: "the task is not running", metadata: { code: current.state } });
        await context.manager.cancel(owner, current.thread_id, current.run_id);
        const run = await context.store.getRun(owner, current.thread_id, current.run_id);
        if (run) await waitBriefly(context, owner, run, waitMs);
        return toTask(await view(params.id));
      }),
    listTasks: () => Promise.reject(unsupported("listing tasks is not supported; keep the task ids you were given")),
    resubscribe: async function* () {
      yield* [];
      throw unsupported("resubscribing is not supported; poll the task (GetTask)");
    },
    createTaskPushNotificationConfig: () => Promise.reject(new PushNotificationNotSupportedError()),
    getTaskPushNotificationConfig: () => Promise.reject(new PushNotificationNotSupportedError()),
    listTaskPushNotificationConfigs: () => Promise.reject(new PushNotificationNotSupportedError()),
    deleteTaskPushNotificationConfig: () => Promise.reject(new PushNotificationNotSupportedError()),
  };
}

/** Why a message to an existing task is refused: its review is the inbox's, and a finished task takes no more. */
function refusalFor(task: RunView): A2AError {
  if (task.state === "input_required" || task.state === "auth_required")
    return unsupported(
      "the task waits for a decision in Warrant's review inbox (or the owner's authorization); a message cannot give it",
      "review_pending",
    );
  if (task.state === "working") return unsupported("the task is still running", "thread_busy");
  return unsupported(
    "the task has ended; send a new message (with its contextId to continue the thread)",
    "task_ended",
  );
}

const unsupported = (message: string, code = "unsupported") =>
  new UnsupportedOperationError({ message, metadata: { code } });

/** The message's text: its text parts joined; undefined when it has none. */
function textOf(message: Message): string | undefined {
  const texts = message.parts.flatMap((part) => (part.content?.$case === "text" ? [part.content.value] : []));
  return texts.length === 0 ? undefined : texts.join("\n");
}

/** Runs `work`; the API's refusals become A2A errors with their typed code, anything else an internal error without detail. */
async function typed<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isA2AError(error)) throw error;
    if (isApiError(error)) {
      const options = { message: error.message, metadata: { code: error.code } };
      if (error.code === "not_found") throw new TaskNotFoundError(options);
      if (error.code === "invalid_request" || error.code === "invalid_json" || error.code === "body_too_large")
        throw new RequestMalformedError(options);
      throw new UnsupportedOperationError(options);
    }
    if (isDatabaseBusy(error) || isDatabaseUnavailable(error))
      throw new UnsupportedOperationError({ message: error.message, metadata: { code: error.code } });
    console.error(logLine(`warrant-server: A2A request failed: ${String(error)}`));
    throw new UnsupportedOperationError({
      message: "the server failed to handle the request",
      metadata: { code: "internal_error" },
    });
  }
}

function isA2AError(error: unknown): error is A2AError {
  return (
    typeof error === "object" &&
    error !== null &&
    typeof (error as { toErrorInfo?: unknown }).toErrorInfo === "function"
  );
}

const textPart = (text: string): Part => ({
  content: { $case: "text", value: text },
  metadata: undefined,
  filename: "",
  mediaType: "text/plain",
});
const dataPart = (value: Record<string, unknown>): Part => ({
  content: { $case: "data", value },
  metadata: undefined,
  filename: "",
  mediaType: "application/json",
});

/** A run's view as an A2A task: its state, a status message saying what waits, the answer as an artifact. */
export function toTask(view: RunView): Task {
  const id = taskIdOf(view);
  const agentMessage = (parts: Part[]): Message => ({
    messageId: `${id}:${view.state}`,
    contextId: view.thread_id,
    taskId: id,
    role: Role.ROLE_AGENT,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  });
  const status = statusText(view);
  const artifacts: Artifact[] =
    view.state === "completed" && view.answer !== null
      ? [
          {
            artifactId: "answer",
            name: "answer",
            description: "The answer with its citations",
            parts: [
              textPart(view.answer),
              dataPart({ answer: view.answer, citations: view.citations, abstained: view.abstained }),
            ],
            metadata: undefined,
            extensions: [],
          },
        ]
      : [];
  return {
    id,
    contextId: view.thread_id,
    status: {
      state: STATES[view.state],
      message: status === undefined ? undefined : agentMessage([textPart(status), dataPart(pauseOf(view))]),
      timestamp: new Date().toISOString(),
    },
    artifacts,
    history: [],
    metadata: {
      thread_id: view.thread_id,
      run_id: view.run_id,
      status: view.status,
      termination_reason: view.termination_reason ?? null,
      error: view.error,
    },
  };
}

function statusText(view: RunView): string | undefined {
  if (view.state === "input_required")
    return `Waiting for review: the owner or a reviewer decides it in Warrant's inbox (${view.review?.url ?? ""}).`;
  if (view.state === "auth_required")
    return `Waiting for the owner to authorize Warrant at ${view.authorization?.map((ask) => ask.server).join(", ")}.`;
  if (view.state === "failed") return view.error?.message ?? `The run stopped: ${view.status ?? "failed"}.`;
  return undefined;
}

function pauseOf(view: RunView): Record<string, unknown> {
  return { state: view.state, review: view.review, authorization: view.authorization, error: view.error };
}
