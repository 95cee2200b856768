/**
 * Executes runs for the API server. A run starts the moment it is created,
 * whether or not anybody listens; its events go into an `EventLog` that
 * streams, joins and reconnects read from. The thread's run lease (in
 * Postgres, see `thread-store.ts`) is held for the whole run and renewed by
 * a heartbeat, which also carries cancel requests from any server process.
 *
 * The run's config is built here, from the verified principal and the
 * thread row; nothing a client sent reaches `configurable`.
 */
import { randomUUID } from "node:crypto";
import { Command, type CompiledStateGraph, type StateSnapshot } from "@langchain/langgraph";
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { Principal } from "../auth/principal.js";
import type { Budgets } from "../env.js";
import type { Owner, RunOutcome, RunRow, ThreadRow, ThreadStore, ThreadStatus } from "../persistence/thread-store.js";
import { runConfigFor, threadConfig } from "../runtime/run-config.js";
import { runOptions } from "../runtime/routes.js";
import { NODES } from "../state.js";
import { ApiError } from "./api-error.js";
import { EventLog } from "./events.js";
import { withoutSecretShapes } from "../runtime/process-scanner.js";

/** Stream modes a client may ask for (the SDK's names). */
export const STREAM_MODES = ["values", "updates", "messages", "messages-tuple", "custom", "tasks", "checkpoints", "tools", "debug"] as const;
export type ClientStreamMode = (typeof STREAM_MODES)[number];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ServedGraph = CompiledStateGraph<any, any, any, any, any, any>;

export interface RunRequest {
  principal: Principal;
  thread: ThreadRow;
  assistantId: string;
  /** New input (already reduced to what the graph accepts), or null to continue from the last checkpoint. */
  input: { messages: BaseMessage[] } | null;
  resume?: { value: unknown } | undefined;
  streamModes: ClientStreamMode[];
  checkpointId?: string | undefined;
  metadata: Record<string, unknown>;
  /** The run's id when the caller chose it beforehand (an idempotency key was claimed for it); else a new one. */
  runId?: string | undefined;
  /**
   * The thread's last run stopped part-way (cancelled, or its server died) and
   * this new request closes it first: the stopped run is recorded `cancelled`
   * and never resumed; the new one starts from the beginning.
   */
  closeStopped?: boolean | undefined;
  /** Stop the run when the client that started it goes away (`on_disconnect: "cancel"`). */
  cancelOn?: AbortSignal | undefined;
  /** Run-bound arguments fixed for a new request (kept on the thread for its resumes). */
  runBound?: Record<string, string> | undefined;
  /**
   * Re-checks, under the lease, what the caller checked before taking it
   * (e.g. that an interrupt is still pending): a run that finished in
   * between must not be followed by a second one acting on stale state.
   */
  verify?: () => Promise<void>;
}

export interface ActiveRun {
  run: RunRow;
  log: EventLog;
  /** Resolves when the run has ended and its lease is released. */
  settled: Promise<void>;
}

export interface RunManagerOptions {
  graphs: Map<string, ServedGraph>;
  store: ThreadStore;
  budgets: Budgets;
  /** How long a run's lease on its thread lives without a heartbeat. */
  leaseMs?: number;
  /** How long a finished run's events stay joinable. */
  retainMs?: number;
  /** Runs one principal may have going at once, across threads and processes (checked when a run starts). */
  maxActiveRuns?: number;
  /** The run-bound values a request fixes (from the contracts' `run_bound` rules). */
  runBound?: (request: string) => Record<string, string>;
  log?: (line: string) => void;
}

export const ownerOf = (principal: Principal): Owner => ({ tenant: principal.tenant, user_id: principal.user_id });

/** The pending interrupts of a snapshot, as the API shows them. */
export function pendingInterrupts(snapshot: StateSnapshot): { id: string | undefined; value: unknown }[] {
  return snapshot.tasks.flatMap((task) => task.interrupts.map((item) => ({ id: item.id, value: item.value })));
}

export class RunManager {
  readonly #options: Required<Omit<RunManagerOptions, "log">> & { log: (line: string) => void };
  readonly #active = new Map<string, ActiveRun & { controller: AbortController }>();
  readonly #finished = new Map<string, { log: EventLog; timer: NodeJS.Timeout }>();
  #accepting = true;

  constructor(options: RunManagerOptions) {
    this.#options = { leaseMs: 30_000, retainMs: 10 * 60_000, maxActiveRuns: 4, log: () => undefined, runBound: () => ({}), ...options };
  }

  /** The run-bound values a new request fixes. */
  runBoundFor(request: string): Record<string, string> {
    return this.#options.runBound(request);
  }

  get accepting(): boolean {
    return this.#accepting;
  }

  get activeCount(): number {
    return this.#active.size;
  }

  graph(assistantId: string): ServedGraph {
    const graph = this.#options.graphs.get(assistantId);
    if (!graph) throw new ApiError("not_found", `assistant ${JSON.stringify(assistantId.slice(0, 64))} not found`);
    return graph;
  }

  /** The event log of a run this process executes or recently executed. */
  log(runId: string): EventLog | undefined {
    return this.#active.get(runId)?.log ?? this.#finished.get(runId)?.log;
  }

  /**
   * Takes the thread's lease, records the run and starts it. Throws
   * `thread_busy` when another run holds the thread (in any process).
   */
  async start(request: RunRequest): Promise<ActiveRun> {
    if (!this.#accepting) throw new ApiError("shutting_down", "the server is shutting down; retry on another instance");
    const graph = this.graph(request.assistantId);
    // The thread's owner, also when a reviewer answers the owner's review from the inbox.
    const owner: Owner = { tenant: request.thread.tenant, user_id: request.thread.owner };
    if ((await this.#options.store.activeRuns(owner)) >= this.#options.maxActiveRuns) {
      throw new ApiError("too_many_runs", `at most ${this.#options.maxActiveRuns} runs may be in progress at once; wait for one to finish`);
    }
    const runId = request.runId ?? randomUUID();
    const acquired = await this.#options.store.acquire(owner, request.thread.thread_id, runId, this.#options.leaseMs, {
      graph_id: request.assistantId,
      ...(request.runBound ? { run_bound: request.runBound } : {}),
    });
    if (!acquired) throw new ApiError("thread_busy", "the thread already has a run in progress");
    let run: RunRow;
    try {
      await request.verify?.();
      run = await this.#options.store.createRun(owner, {
        run_id: runId,
        thread_id: request.thread.thread_id,
        assistant_id: request.assistantId,
        status: "running",
        metadata: request.metadata,
        kwargs: { stream_mode: request.streamModes, kind: request.resume ? "resume" : request.input ? "input" : "continue" },
      });
    } catch (error) {
      const status = await this.threadStatus(request.assistantId, request.thread.thread_id).catch((): ThreadStatus => "idle");
      await this.#options.store.release(request.thread.thread_id, runId, status);
      throw error;
    }
    const log = new EventLog();
    const controller = new AbortController();
    const runBound = request.runBound ?? request.thread.run_bound;
    const settled = this.#execute(graph, run, request, runBound, log, controller);
    const active = { run, log, settled, controller };
    this.#active.set(runId, active);
    return active;
  }

  /** Asks a run to stop, wherever it executes. Undefined when the run is not the owner's. */
  async cancel(owner: Owner, threadId: string, runId: string): Promise<RunRow | undefined> {
    const run = await this.#options.store.requestCancel(owner, threadId, runId);
    if (run) this.#active.get(runId)?.controller.abort(abortReason("cancelled"));
    return run;
  }

  /** Waits for a run to end: in this process by its log, elsewhere by polling its row. */
  async wait(owner: Owner, threadId: string, runId: string, signal?: AbortSignal, onPoll?: () => Promise<void>): Promise<RunRow | undefined> {
    const local = this.#active.get(runId);
    if (local) await Promise.race([local.settled, abortPromise(signal)]);
    for (;;) {
      const run = await this.#options.store.getRun(owner, threadId, runId);
      if (!run || (run.status !== "running" && run.status !== "pending") || signal?.aborted) return run;
      await onPoll?.();
      await delay(250, signal);
    }
  }

  /**
   * Marks runs left behind by a process that died (their lease expired) as
   * failed and frees their threads, so the threads can be continued.
   */
  async recoverOrphans(): Promise<number> {
    const orphans = await this.#options.store.orphanedRuns();
    for (const run of orphans) {
      if (this.#active.has(run.run_id)) continue;
      await this.#options.store.setRunStatus(run.run_id, "error", { error: "server_restarted", message: "the server running this run stopped; send a new message or continue the thread with input null" });
      const inspected = await this.#inspect(run.assistant_id, run.thread_id).catch(() => ({ thread: "error" as ThreadStatus, values: undefined }));
      await this.#options.store.release(run.thread_id, run.run_id, inspected.thread, inspected.values);
    }
    return orphans.length;
  }

  /** A thread's status from its checkpoint: interrupted while a review is pending, idle otherwise. */
  async threadStatus(assistantId: string, threadId: string): Promise<ThreadStatus> {
    return (await this.#inspect(assistantId, threadId)).thread;
  }

  /**
   * The thread's status from its checkpoint, the run outcome recorded on the
   * run row, and the values kept on the thread row for `values` filters.
   */
  async #inspect(assistantId: string, threadId: string): Promise<{ thread: ThreadStatus; outcome: RunOutcome | undefined; values?: Record<string, unknown> }> {
    const graph = this.#options.graphs.get(assistantId) ?? [...this.#options.graphs.values()][0];
    if (!graph) return { thread: "idle", outcome: undefined };
    const snapshot = await graph.getState(threadConfig(threadId));
    const pending = pendingInterrupts(snapshot).length > 0;
    const values = (snapshot.values ?? {}) as { status?: unknown; termination_reason?: unknown; result?: unknown; run?: { run_id?: unknown } | null };
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
    };
  }

  /**
   * Stops accepting runs and waits up to `timeoutMs` for active ones; runs
   * still going then are aborted (their last checkpoint stays, so a restarted
   * server can continue them).
   */
  async drain(timeoutMs: number): Promise<void> {
    this.#accepting = false;
    const all = () => Promise.allSettled([...this.#active.values()].map((run) => run.settled));
    const timedOut = await Promise.race([all().then(() => false), delay(timeoutMs).then(() => true)]);
    if (timedOut) {
      for (const run of this.#active.values()) run.controller.abort(abortReason("server shutting down"));
      await all();
    }
    for (const { timer } of this.#finished.values()) clearTimeout(timer);
    this.#finished.clear();
  }

  async #execute(graph: ServedGraph, run: RunRow, request: RunRequest, runBound: Record<string, string>, log: EventLog, controller: AbortController): Promise<void> {
    const { store, leaseMs, budgets } = this.#options;
    const threadId = run.thread_id;
    log.push("metadata", { run_id: run.run_id, attempt: 1 });
    // The lease was taken just now; each renewal extends it by leaseMs from the database's clock.
    let renewedAt = Date.now();
    const heartbeat = setInterval(() => {
      store.heartbeat(threadId, run.run_id, leaseMs).then(
        ({ held, cancel }) => {
          if (held) renewedAt = Date.now();
          if (cancel) controller.abort(abortReason("cancelled"));
          else if (!held) controller.abort(abortReason("lease lost"));
        },
        (error: unknown) => {
          this.#options.log(`heartbeat for run ${run.run_id} failed: ${String(error)}`);
          // Unrenewed past its lease, another process may take the thread: stop rather than run twice.
          if (Date.now() - renewedAt >= leaseMs) controller.abort(abortReason("lease lost"));
        },
      );
    }, Math.max(50, Math.floor(leaseMs / 3)));
    heartbeat.unref();

    let runStatus: RunRow["status"] = "success";
    let threadStatus: ThreadStatus = "idle";
    let failure: { error: string; message: string } | undefined;
    let outcome: RunOutcome | undefined;
    let kept: Record<string, unknown> | undefined;
    // The client that started the run asked for it to stop when it goes away.
    const onClientGone = () => controller.abort(abortReason("cancelled: the client disconnected"));
    request.cancelOn?.addEventListener("abort", onClientGone, { once: true });
    try {
      const libModes = new Set<string>(["values"]);
      for (const mode of request.streamModes) libModes.add(mode === "messages-tuple" ? "messages" : mode);
      const config = {
        ...runConfigFor({ threadId, runId: run.run_id, principal: request.principal, runBound, checkpointId: request.checkpointId }),
        // Also written on every checkpoint of the run (checkpoint-metadata.ts): history filters by it.
        metadata: { ...request.metadata, run_id: run.run_id, assistant_id: run.assistant_id, graph_id: run.assistant_id },
        ...runOptions(budgets),
        signal: controller.signal,
        streamMode: [...libModes] as ("values" | "updates" | "messages" | "custom" | "tasks" | "checkpoints" | "tools" | "debug")[],
      };
      // The closing checkpoint must not carry this run's run_id: LangGraph would take the new
      // input for a resume of the same run (and drop it).
      if (request.closeStopped) await closeStoppedRun(graph, threadId, { closed_by_run: run.run_id, assistant_id: run.assistant_id, graph_id: run.assistant_id });
      // A resume value is checkpointed as sent: a secret in a reviewer's edit is redacted first.
      const input = request.resume ? new Command({ resume: withoutSecretShapes(request.resume.value) }) : request.input;
      const stream = await graph.stream(input, config);
      const messages = new MessageAccumulator();
      for await (const chunk of stream as AsyncIterable<[string, unknown]>) {
        const [mode, data] = chunk;
        if (mode === "messages") {
          if (request.streamModes.includes("messages-tuple")) log.push("messages", data);
          if (request.streamModes.includes("messages")) for (const [event, payload] of messages.partial(data)) log.push(event, payload);
          continue;
        }
        if (mode === "values" && request.streamModes.includes("messages")) {
          const complete = messages.complete(data);
          if (complete.length > 0) log.push("messages/complete", complete);
        }
        if ((request.streamModes as string[]).includes(mode)) log.push(mode, data);
      }
      ({ thread: threadStatus, outcome, values: kept } = await this.#inspect(run.assistant_id, threadId));
    } catch (error) {
      if (controller.signal.aborted) {
        runStatus = "interrupted";
        ({ thread: threadStatus, outcome, values: kept } = await this.#inspect(run.assistant_id, threadId).catch(() => ({ thread: "idle" as ThreadStatus, outcome: undefined, values: undefined })));
        const reason = controller.signal.reason instanceof Error ? controller.signal.reason.message : "cancelled";
        log.push("error", { error: "run_cancelled", message: `the run was stopped: ${reason}` });
      } else {
        runStatus = "error";
        threadStatus = "error";
        failure = { error: errorName(error), message: errorMessage(error) };
        this.#options.log(`run ${run.run_id} failed: ${failure.error}: ${failure.message}`);
        log.push("error", failure);
      }
    } finally {
      clearInterval(heartbeat);
      request.cancelOn?.removeEventListener("abort", onClientGone);
      try {
        await store.setRunStatus(run.run_id, runStatus, failure, outcome);
        await store.release(threadId, run.run_id, threadStatus, kept);
      } catch (error) {
        this.#options.log(`could not record the end of run ${run.run_id}: ${String(error)}`);
      }
      log.close();
      this.#active.delete(run.run_id);
      const timer = setTimeout(() => this.#finished.delete(run.run_id), this.#options.retainMs);
      timer.unref();
      this.#finished.set(run.run_id, { log, timer });
    }
  }
}

/** The public values kept beside the thread row when a run ends (what `values` filters match). */
function keptValues(values: { status?: unknown; termination_reason?: unknown; result?: unknown }): Record<string, unknown> {
  return JSON.parse(JSON.stringify({ status: values.status ?? null, termination_reason: values.termination_reason ?? null, result: values.result ?? null })) as Record<string, unknown>;
}

/**
 * Closes a run that stopped part-way, as observe would end it: status
 * `cancelled`, a termination reason, and a tool message for every tool call
 * left without a result (the transcript stays well-formed for any model, and
 * the pending steps are dropped, never resumed). The ledger is untouched.
 */
export async function closeStoppedRun(graph: ServedGraph, threadId: string, metadata: Record<string, unknown>): Promise<void> {
  const config = { ...threadConfig(threadId), metadata };
  const snapshot = await graph.getState(config);
  const values = (snapshot.values ?? {}) as { messages?: BaseMessage[]; run?: { turn?: number } | null };
  const unanswered = unansweredToolCalls(values.messages ?? []);
  await graph.updateState(
    config,
    {
      status: "cancelled",
      termination_reason: { code: "cancelled", detail: "the run was stopped before it finished; a new request closed it", turn: values.run?.turn ?? 0 },
      messages: unanswered.map((call) => new ToolMessage({ tool_call_id: call.id, name: call.name, status: "error", content: "cancelled: the run stopped before this call finished" })),
    },
    NODES.observe,
  );
}

/** Tool calls of the transcript that have no tool message answering them. */
export function unansweredToolCalls(messages: readonly BaseMessage[]): { id: string; name: string }[] {
  const answered = new Set(messages.flatMap((message) => (ToolMessage.isInstance(message) ? [message.tool_call_id] : [])));
  return messages.flatMap((message) =>
    AIMessage.isInstance(message) ? (message.tool_calls ?? []).flatMap((call) => (call.id && !answered.has(call.id) ? [{ id: call.id, name: call.name }] : [])) : [],
  );
}

/** Builds the SDK's `messages/*` events from `messages`-mode tuples. */
class MessageAccumulator {
  readonly #partial = new Map<string, { concat?(other: unknown): unknown }>();
  readonly #completed = new Set<string>();

  partial(data: unknown): [string, unknown][] {
    if (!Array.isArray(data)) return [];
    const [chunk, metadata] = data as [{ id?: string; concat?(other: unknown): unknown }, unknown];
    if (!chunk || typeof chunk.id !== "string") return [];
    const events: [string, unknown][] = [];
    const existing = this.#partial.get(chunk.id);
    if (!existing) {
      this.#partial.set(chunk.id, chunk);
      events.push(["messages/metadata", { [chunk.id]: { metadata } }]);
    } else if (typeof existing.concat === "function") {
      this.#partial.set(chunk.id, existing.concat(chunk) as typeof existing);
    }
    events.push(["messages/partial", [this.#partial.get(chunk.id)]]);
    return events;
  }

  complete(values: unknown): unknown[] {
    const list = (values as { messages?: unknown } | null)?.messages;
    if (!Array.isArray(list)) return [];
    const fresh = list.filter((message: { id?: unknown }) => typeof message?.id === "string" && !this.#completed.has(message.id as string));
    for (const message of fresh) this.#completed.add((message as { id: string }).id);
    return fresh;
  }
}

function errorName(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string") return code;
  return error instanceof Error ? error.name : "Error";
}

function errorMessage(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n", 1)[0]!.slice(0, 500);
}

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}

function abortPromise(signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (!signal) return;
    if (signal.aborted) resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

/** Abort reasons are AbortErrors, so tool calls cut short read as cancelled, not as a broken server. */
function abortReason(message: string): Error {
  const reason = new Error(message);
  reason.name = "AbortError";
  return reason;
}
