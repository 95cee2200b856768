/**
 * Starting a run: every check a request could be refused for, made before
 * anything is written, and repeated under the thread's lease. `startRunAs`
 * is the one way in, for the run routes and for any other code that starts
 * a run on a principal's behalf (a cron, a queued run).
 */
import { randomUUID } from "node:crypto";
import { END } from "@langchain/langgraph";
import type { Principal } from "../../auth/principal.js";
import type { RunRow, ThreadRow } from "../../stores/thread-rows.js";
import type { RouteContext } from "../context.js";
import { clientMetadata, parseBody } from "../request-fields.js";
import { assertRunnable, forkTarget, type RunAsk, type RunPlan } from "./checks.js";
import {
  type ClientRunConfig,
  clientRunConfig,
  refuseUnsupported,
  requestText,
  RunCreate,
  streamModes,
  toGraphInput,
  toolPlaceholders,
  type RunCreateBody,
} from "./requests.js";
import { ownerOf } from "./types.js";
import { runConfigRecord } from "./types.js";
import { admitWebhook } from "../webhooks/run-webhook.js";
import { ApiError } from "../../errors.js";

/** Where the run's answer goes: nowhere (background), an SSE stream, or the response once it ends. */
export type RunDelivery = "background" | "stream" | "wait";

export interface StartRunOptions {
  delivery: RunDelivery;
  /** Cancels the run when it aborts (the starting request's connection, with `on_disconnect: "cancel"`). */
  connection?: AbortSignal | undefined;
  /** Claims the run's id before anything is written (an idempotency key: run-replay.ts). */
  claim?: RunClaim | undefined;
  /** The id of a pending run that starts now (the run queue, queue.ts): it is never queued again. */
  queued?: string | undefined;
}

/** Most pending runs (delayed or queued) one thread may hold. */
export const MAX_PENDING_PER_THREAD = 16;

/** A claim on a run id taken once every check has passed and before anything is written. */
export interface RunClaim {
  /** Undefined to go on and start the run; or the run to answer with instead (a concurrent repeat won). */
  take(threadId: string, runId: string): Promise<StartedRun | undefined>;
  /** The run did not start after all: the claim is given back. */
  release(runId: string): Promise<void>;
}

/** A run that was started, and the request it was started with. */
export interface StartedRun {
  run: RunRow;
  request: RunCreateBody;
}

/**
 * Starts a run as `principal` on `thread` (a row the principal owns, or
 * `"stateless"` for a thread of its own), from a run request body as the
 * API takes it (`assistant_id`, `input` or `command`, options). Every check
 * of the API applies: the body's schema and refusals, the thread's state
 * (pending review, a run in progress, a fork that could replay a write), the
 * per-principal run limit and the thread's lease. Throws `ApiError` with the
 * API's codes; nothing is written when it throws.
 */
export async function startRunAs(
  context: RouteContext,
  principal: Principal,
  thread: ThreadRow | "stateless",
  body: unknown,
  options: StartRunOptions,
): Promise<StartedRun> {
  const { manager, store, snapshotOf, anyGraph } = context;
  const owner = ownerOf(principal);
  const threadId = thread === "stateless" ? randomUUID() : thread.thread_id;
  await refuseCommand(context, thread, body);
  const request = parseBody(RunCreate, body);
  checkOptions(context, thread, threadId, request, options.delivery);
  // Checked (allowlist, addresses) before the run starts: a refused destination starts nothing.
  const webhook = await admitWebhook(context, request.webhook);
  const config = clientRunConfig(request, threadId);
  const { recursionLimit } = config;
  const input = request.input ? toGraphInput(request.input) : null;
  const ask: RunAsk = request.command
    ? { kind: "resume", value: request.command.resume }
    : request.input
      ? { kind: "input", placeholders: toolPlaceholders(request.input) }
      : { kind: "continue" };

  // A fork runs from the checkpoint it names: that is the state every check below looks at.
  const checkpointId = request.checkpoint_id ?? request.checkpoint?.checkpoint_id ?? undefined;
  let plan: RunPlan = { closeStopped: false };
  const runnable = async () => {
    const head = await snapshotOf(threadId);
    const snapshot = checkpointId ? await forkTarget(anyGraph(), threadId, checkpointId, head) : head;
    const ledger = ask.kind === "input" && snapshot.next.length > 0 ? await context.ledger.list(threadId) : [];
    plan = assertRunnable(snapshot, ask, ledger, thread === "stateless" ? undefined : thread.owner);
  };
  // Checked before the lease (a cheap, clear refusal) and again under it (the state may have moved meanwhile).
  // A run whose lease expired (its server died) is marked and the thread freed here, not at the next sweep.
  // Nothing recovered here may mean the sweep (or another request) freed it meanwhile: busy only if still held.
  const busy =
    thread !== "stateless" &&
    thread.active_run !== null &&
    (await manager.recoverOrphans(thread.thread_id)) === 0 &&
    ((await store.getInTenant(thread.tenant, thread.thread_id))?.active_run ?? null) !== null;
  if (options.queued === undefined && (await waits(context, thread, request, busy))) {
    return enqueue(context, principal, thread, threadId, body, request, config, options.claim);
  }
  if (busy) throw new ApiError("thread_busy", "the thread already has a run in progress");
  await runnable();
  const runId = options.queued ?? randomUUID();
  const replayed = await options.claim?.take(threadId, runId);
  if (replayed) return replayed;
  try {
    // A stateless run gets a thread of its own once the request has passed every check.
    const row = thread === "stateless" ? await store.create(owner, { thread_id: threadId, metadata: {} }) : thread;
    if (!row) throw new ApiError("internal_error", "could not create a thread");
    if (webhook) await context.webhooks?.register(owner, row.thread_id, runId, webhook);
    const active = await manager.start({
      principal,
      thread: row,
      assistantId: request.assistant_id,
      input,
      resume: request.command ? { value: request.command.resume } : undefined,
      streamModes: streamModes(request.stream_mode),
      checkpointId,
      verify: runnable,
      get closeStopped() {
        return plan.closeStopped;
      },
      cancelOn:
        options.delivery !== "background" && request.on_disconnect === "cancel" ? options.connection : undefined,
      metadata: runMetadata(request, config),
      ...runLabels(config),
      runId,
      queued: options.queued !== undefined,
      multitaskStrategy: request.multitask_strategy,
      ...(recursionLimit === undefined ? {} : { recursionLimit }),
      ...(request.input ? { runBound: manager.runBoundFor(requestText(request.input)) } : {}),
    });
    return { run: active.run, request };
  } catch (error) {
    await options.claim?.release(runId).catch(() => undefined);
    throw error;
  }
}

/**
 * A run's metadata: `config.metadata` under the request's own `metadata`,
 * both after the one metadata rule (`clientMetadata`: the server's keys dropped).
 */
function runMetadata(request: RunCreateBody, config: ClientRunConfig): Record<string, unknown> {
  return { ...config.metadata, ...clientMetadata(request.metadata) };
}

/** The labels a run request sets (`config.tags`, `config.run_name`), as the run manager takes them. */
function runLabels(config: ClientRunConfig): { tags?: string[]; runName?: string } {
  return {
    ...(config.tags === undefined ? {} : { tags: config.tags }),
    ...(config.runName === undefined ? {} : { runName: config.runName }),
  };
}

/**
 * Whether the run waits in the queue instead of starting now: it is delayed
 * (`after_seconds`), or it asks to wait its turn (`enqueue`, `interrupt`)
 * and the thread is busy or already has runs waiting.
 */
async function waits(
  context: RouteContext,
  thread: ThreadRow | "stateless",
  request: RunCreateBody,
  busy: boolean,
): Promise<boolean> {
  if ((request.after_seconds ?? 0) > 0) return true;
  if (request.multitask_strategy !== "enqueue" && request.multitask_strategy !== "interrupt") return false;
  if (thread === "stateless" || !context.manager.queue) return false;
  return busy || (await context.manager.queue.pendingOn(thread.thread_id)) > 0;
}

/**
 * Records a pending run (status `pending`), started later by any instance
 * (queue.ts). With `interrupt`, the thread's run is asked to stop at its
 * next safe point first.
 */
async function enqueue(
  context: RouteContext,
  principal: Principal,
  thread: ThreadRow | "stateless",
  threadId: string,
  body: unknown,
  request: RunCreateBody,
  config: ClientRunConfig,
  claim: RunClaim | undefined,
): Promise<StartedRun> {
  const { manager, store } = context;
  const queue = manager.queue;
  if (!queue) throw new ApiError("unsupported", "this server keeps no run queue");
  const owner = ownerOf(principal);
  if (thread !== "stateless" && (await queue.pendingOn(threadId)) >= MAX_PENDING_PER_THREAD)
    throw new ApiError("too_many_runs", `the thread already has ${MAX_PENDING_PER_THREAD} pending runs`);
  const runId = randomUUID();
  const replayed = await claim?.take(threadId, runId);
  if (replayed) return replayed;
  try {
    const row = thread === "stateless" ? await store.create(owner, { thread_id: threadId, metadata: {} }) : thread;
    if (!row) throw new ApiError("internal_error", "could not create a thread");
    const strategy = request.multitask_strategy ?? "reject";
    const run = await queue.enqueue(owner, {
      run_id: runId,
      thread_id: threadId,
      assistant_id: request.assistant_id,
      metadata: runMetadata(request, config),
      kwargs: {
        ...runConfigRecord(runLabels(config)),
        stream_mode: streamModes(request.stream_mode),
        kind: request.command ? "resume" : request.input ? "input" : "continue",
        multitask_strategy: strategy,
        after_seconds: request.after_seconds ?? 0,
      },
      afterSeconds: request.after_seconds ?? 0,
      principal,
      // The queued run starts as a background run of this request (its own options are checked again then).
      body: { ...(body as Record<string, unknown>), after_seconds: 0, on_disconnect: "continue" },
    });
    if (strategy === "interrupt" && thread !== "stateless" && thread.active_run)
      await manager.cancel(owner, threadId, thread.active_run);
    return { run, request };
  } catch (error) {
    await claim?.release(runId).catch(() => undefined);
    throw error;
  }
}

/**
 * `command.update`/`goto` are refused before the schema, so the refusal
 * names the real reason; agent-chat-ui's "Mark as resolved" (`goto: END`)
 * gets the answer a resume with nothing to resolve would.
 */
async function refuseCommand(context: RouteContext, thread: ThreadRow | "stateless", body: unknown): Promise<void> {
  const command = (body as { command?: unknown } | null)?.command;
  if (!command || typeof command !== "object" || !("update" in command || "goto" in command)) return;
  if (!endsThread(command))
    throw new ApiError("command_not_allowed", "clients may only send command.resume (update and goto are refused)");
  // Refused while a review is pending (a review is never skipped). The rest of the body is
  // checked as a resume would be (an empty input beside the command is no input).
  const { command: _end, ...rest } = body as Record<string, unknown>;
  context.manager.graph(parseBody(RunCreate, { ...rest, command: { resume: true } }).assistant_id);
  if (thread !== "stateless") assertRunnable(await context.snapshotOf(thread.thread_id), { kind: "end" });
  throw new ApiError("no_pending_interrupt", "the thread has no pending review to resolve");
}

/** Options the server refuses, or that do not fit the thread. */
function checkOptions(
  context: RouteContext,
  thread: ThreadRow | "stateless",
  threadId: string,
  request: RunCreateBody,
  delivery: RunDelivery,
): void {
  context.manager.graph(request.assistant_id);
  if (request.interrupt_before !== undefined || request.interrupt_after !== undefined) {
    throw new ApiError(
      "unsupported",
      "interrupt_before/interrupt_after are not supported: reviews are decided by policy",
    );
  }
  if (request.multitask_strategy === "rollback") {
    throw new ApiError(
      "unsupported",
      'multitask_strategy "rollback" is not supported: runs are the audit trail (use "interrupt", "enqueue" or "reject")',
    );
  }
  const waiting = request.multitask_strategy === "enqueue" || request.multitask_strategy === "interrupt";
  if ((waiting || (request.after_seconds ?? 0) > 0) && !context.manager.queue)
    throw new ApiError("unsupported", "this server keeps no run queue: after_seconds and enqueue/interrupt need one");
  if (waiting && thread === "stateless")
    throw new ApiError("unsupported", `multitask_strategy "${request.multitask_strategy}" applies to a thread's runs`);
  refuseUnsupported(request, delivery);
  if (thread !== "stateless" && request.on_completion !== undefined) {
    throw new ApiError(
      "unsupported",
      "on_completion applies to stateless runs (POST /runs…) only; delete a thread with DELETE /threads/{id}",
    );
  }
  // The graphs have no subgraphs: a checkpoint namespace could only name one that does not exist.
  if (request.checkpoint?.checkpoint_ns)
    throw new ApiError("unsupported", "checkpoint.checkpoint_ns: the graphs have no subgraphs");
  if (request.checkpoint?.thread_id && request.checkpoint.thread_id.toLowerCase() !== threadId) {
    throw new ApiError("invalid_request", "checkpoint.thread_id: names another thread");
  }
  if (request.input && request.command) throw new ApiError("invalid_request", "send either input or command, not both");
}

/** `command.goto` naming only the graph's end, with nothing else: agent-chat-ui's "Mark as resolved". */
function endsThread(command: object): boolean {
  const { goto, ...rest } = command as { goto?: unknown };
  const target = Array.isArray(goto) && goto.length === 1 ? goto[0] : goto;
  return target === END && Object.keys(rest).every((key) => (rest as Record<string, unknown>)[key] === undefined);
}
