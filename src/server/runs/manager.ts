/**
 * The run manager: starts runs for the API server, finds their events, waits
 * for them, cancels them and recovers the runs of processes that died. A run
 * starts the moment it is created, whether or not anybody listens
 * (`execution.ts` executes it); its events go into an in-memory log for
 * this process's readers and into Postgres for every other instance
 * (`emission.ts`). The thread's run lease (in Postgres, see
 * `thread-store.ts`) is held for the whole run.
 *
 * A lease that expired (its process died, or lost the database for a whole
 * lease) is taken over by the first request that needs the thread or waits
 * for its run: the dead run is marked `server_restarted` then and there, not
 * at the next sweep.
 */
import type { TaskWaitStore } from "../../stores/task-wait-store.js";
import { countRunStarted } from "../../metrics.js";
import { randomUUID } from "node:crypto";
import type { BaseStore } from "@langchain/langgraph";
import type { Budgets } from "../../env.js";
import type { RunEventListener } from "../../stores/run-events-listener.js";
import type { LedgerStore } from "../../ports.js";
import type { RunQueueStore } from "../../stores/run-queue-store.js";
import type { RunEventStore } from "../../stores/run-events-store.js";
import type { ThreadStore } from "../../stores/thread-store.js";
import type { Owner, RunEndHook, RunRow, ThreadStatus } from "../../stores/thread-rows.js";
import type { SecretScanner } from "../../secrets/scanner.js";
import { abortPromise, abortReason, delay } from "./abort.js";
import { EventLog } from "../events.js";
import { admitRun } from "./checks.js";
import { readStoredEvents, type SentEvent } from "./event-reader.js";
import { RunEventWriter } from "./event-writer.js";
import { RunEmitter } from "./emission.js";
import { executeRun, safePointCancel } from "./execution.js";
import { inspectThread } from "./outcome.js";
import { recoverOrphans } from "./recovery.js";
import { runConfigRecord, type RunRequest, type ServedGraph } from "./types.js";
import { ApiError } from "../../errors.js";
export interface ActiveRun {
  run: RunRow;
  log: EventLog;
  /** Resolves when the run has ended, its events are stored and its lease is released. */
  settled: Promise<void>;
}

export interface RunManagerOptions {
  graphs: Map<string, ServedGraph>;
  store: ThreadStore;
  /** Where runs' events are stored for the other instances. */
  events: RunEventStore;
  budgets: Budgets;
  /** How long a run's lease on its thread lives without a heartbeat. */
  leaseMs?: number;
  /** How long a finished run's events stay joinable (in memory here, in Postgres everywhere). */
  retainMs?: number;
  /** Wakes readers of runs executing elsewhere when their events are stored (server mode; absent, they poll). */
  notifications?: RunEventListener | undefined;
  /** How often a reader of a run executing elsewhere looks for new events (default 100 ms, 1 s with notifications). */
  eventPollMs?: number;
  /** Runs one principal may have going at once, across threads and processes (admitted atomically when a run starts). */
  maxActiveRuns?: number;
  /** Called once each run's end is recorded, with the Warrant run it worked on (the OpenTelemetry export). */
  onRunEnded?: ((run: RunRow, warrantRunId: string | undefined) => void) | undefined;
  /** Work committed with each run's final status (also a recovered run's), in that transaction: the webhook outbox. */
  onRunEnd?: RunEndHook | undefined;
  /** The run-bound values a request fixes (from the contracts' `run_bound` rules). */
  runBound?: (request: string) => Record<string, string>;
  /**
   * Test-only (`WARRANT_TEST_CRASH_AT`): called at each named point of a run's start (the crash-point test kills
   * the process there). When set, a run's graph waits until its first event is stored (`after_first_event`).
   */
  atPoint?: ((point: StartPoint) => void) | undefined;
  /** The tool host's secret scanner: resume values are redacted with it before they are checkpointed. */
  secrets?: SecretScanner | undefined;
  /** The store each run's nodes see (`config.store`), scoped to the thread's owner. */
  storeFor?: ((owner: Owner) => BaseStore) | undefined;
  /** The thread's ledger: a cancel waits for a write in flight (execution.ts). */
  ledger?: LedgerStore | undefined;
  /** Pending runs (delayed or queued): a queued run's row is activated instead of inserted when it starts. */
  queue?: RunQueueStore | undefined;
  /** Tasks paused threads wait for: cancelling the run that paused cancels them (crons/task-waits.ts). */
  taskWaits?: TaskWaitStore | undefined;
  log?: (line: string) => void;
}

/**
 * The points a test crash may fall on: between a run request and its first
 * checkpoint, and after its graph ended (`after_final_checkpoint`: its last
 * checkpoint saved, its end not recorded; `after_run_end`: its status recorded,
 * its lease not released).
 */
export type StartPoint =
  | "after_lease"
  | "after_run_row"
  | "after_first_event"
  | "after_final_checkpoint"
  | "after_run_end";

/** How often a remote reader with nothing new to read asks whether the run has ended. */
const ENDED_CHECK_MS = 500;

/** The options a manager may go without. */
type OptionalOption =
  | "notifications"
  | "onRunEnded"
  | "onRunEnd"
  | "atPoint"
  | "secrets"
  | "storeFor"
  | "queue"
  | "ledger"
  | "taskWaits";

const unfinished = (run: RunRow | undefined) => run?.status === "running" || run?.status === "pending";

export class RunManager {
  readonly #options: Required<Omit<RunManagerOptions, OptionalOption | "log">> &
    Pick<RunManagerOptions, OptionalOption> & {
      log: (line: string) => void;
    };
  readonly #active = new Map<string, ActiveRun & { controller: AbortController; cancel: () => void }>();
  readonly #finished = new Map<string, { log: EventLog; timer: NodeJS.Timeout }>();
  #accepting = true;

  constructor(options: RunManagerOptions) {
    const eventPollMs = options.notifications ? 1_000 : 100;
    this.#options = {
      leaseMs: 30_000,
      retainMs: 10 * 60_000,
      eventPollMs,
      maxActiveRuns: 4,
      log: () => undefined,
      runBound: () => ({}),
      ...options,
    };
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
   * A run's events after `afterId`, until it ends: from memory when this
   * process executes (or executed) it, else from Postgres, with the same ids.
   * `unstored` answers for a run that ended with no event stored.
   */
  events(
    owner: Owner,
    run: RunRow,
    afterId: number | undefined,
    signal: AbortSignal,
    unstored: (run: RunRow) => Promise<SentEvent[]>,
  ): AsyncIterable<SentEvent> {
    const local = this.log(run.run_id);
    // The table has what the memory of a long run has dropped.
    if (local?.holds(afterId)) return local.read(afterId, signal);
    let checkedAt = 0;
    const { notifications } = this.#options;
    return readStoredEvents({
      ...(notifications ? { wake: (stop: AbortSignal) => notifications.next(run.run_id, stop) } : {}),
      store: this.#options.events,
      runId: run.run_id,
      afterId,
      signal,
      pollMs: this.#options.eventPollMs,
      unstored,
      ended: async () => {
        if (Date.now() - checkedAt < ENDED_CHECK_MS) return undefined;
        checkedAt = Date.now();
        return this.#endedRun(owner, run.thread_id, run.run_id);
      },
    });
  }

  /**
   * Takes the thread's lease, records the run and starts it. Throws
   * `thread_busy` when another run holds the thread (in any process),
   * `too_many_runs` when the owner is at the run limit.
   */
  async start(request: RunRequest): Promise<ActiveRun> {
    if (!this.#accepting) throw new ApiError("shutting_down", "the server is shutting down; retry on another instance");
    const graph = this.graph(request.assistantId);
    // The thread's owner, also when a reviewer answers the owner's review from the inbox.
    const owner: Owner = { tenant: request.thread.tenant, user_id: request.thread.owner };
    // A run whose process died no longer counts, and no longer holds the thread.
    if (request.thread.active_run !== null) await this.recoverOrphans(request.thread.thread_id);
    // Admission: the one place a new run is let in (the run limit and the thread's lease, in one atomic step).
    const runId = request.runId ?? randomUUID();
    await admitRun(this.#options.store, owner, request.thread.thread_id, runId, {
      leaseMs: this.#options.leaseMs,
      limit: this.#options.maxActiveRuns,
      fields: { graph_id: request.assistantId, ...(request.runBound ? { run_bound: request.runBound } : {}) },
    });
    this.#options.atPoint?.("after_lease");
    let run: RunRow;
    try {
      await request.verify?.();
      run = request.queued
        ? await this.#activate(runId)
        : await this.#options.store.createRun(owner, {
            run_id: runId,
            thread_id: request.thread.thread_id,
            assistant_id: request.assistantId,
            status: "running",
            metadata: request.metadata,
            kwargs: {
              ...runConfigRecord(request),
              stream_mode: request.streamModes,
              kind: request.resume ? "resume" : request.input ? "input" : "continue",
              ...(request.multitaskStrategy ? { multitask_strategy: request.multitaskStrategy } : {}),
            },
          });
    } catch (error) {
      const status = await this.threadStatus(request.assistantId, request.thread.thread_id).catch(
        (): ThreadStatus => "idle",
      );
      await this.#options.store.release(request.thread.thread_id, runId, status);
      throw error;
    }
    this.#options.atPoint?.("after_run_row");
    countRunStarted();
    const log = new EventLog();
    const emitter = new RunEmitter(
      log,
      new RunEventWriter(this.#options.events, runId, this.#options.log),
      request.streamModes,
      Object.keys(request.metadata),
    );
    const controller = new AbortController();
    const { graphs, store, budgets, leaseMs } = this.#options;
    const execution = {
      graphs,
      store,
      budgets,
      leaseMs,
      log: this.#options.log,
      onEnded: this.#options.onRunEnded,
      endHook: this.#options.onRunEnd,
      atPoint: this.#options.atPoint,
      secrets: this.#options.secrets,
      ledger: this.#options.ledger,
      storeFor: this.#options.storeFor,
    };
    const cancel = safePointCancel(execution, run, controller);
    const runBound = request.runBound ?? request.thread.run_bound;
    // The run's first event (its metadata) is pushed before the graph starts; the point fires once it is stored,
    // and the graph waits for it (a crash there is before the run's first checkpoint, as the point promises).
    const { atPoint } = this.#options;
    const beforeGraph = atPoint
      ? async () => {
          await emitter.stored();
          atPoint("after_first_event");
        }
      : undefined;
    const settled = executeRun(execution, {
      graph,
      run,
      request,
      runBound,
      emitter,
      controller,
      cancel,
      beforeGraph,
    }).finally(() => this.#retire(runId, log));
    const active = { run, log, settled, controller, cancel };
    this.#active.set(runId, active);
    return active;
  }

  /**
   * Asks a run to stop, wherever it executes, at its next safe point (never
   * while one of its writes is in flight). Undefined when the run is not the owner's.
   */
  async cancel(owner: Owner, threadId: string, runId: string): Promise<RunRow | undefined> {
    const run = await this.#options.store.requestCancel(owner, threadId, runId);
    if (run) this.#active.get(runId)?.cancel();
    // A run that paused on a task wait holds nothing to stop: the poller cancels the task and settles its row.
    if (run && run.status !== "running" && run.status !== "pending")
      await this.#options.taskWaits?.requestCancel(threadId);
    return run;
  }

  /** Waits for a run to end: in this process by its log, elsewhere by polling its row (taking over an expired lease). */
  async wait(owner: Owner, threadId: string, runId: string, signal?: AbortSignal): Promise<RunRow | undefined> {
    const local = this.#active.get(runId);
    if (local) await Promise.race([local.settled, abortPromise(signal)]);
    for (;;) {
      const run = await this.#options.store.getRun(owner, threadId, runId);
      if (!unfinished(run) || signal?.aborted) return run;
      if ((await this.recoverOrphans(threadId)) > 0) continue;
      await delay(250, signal);
    }
  }

  /**
   * Marks runs left behind by a process that died (their lease expired) as
   * failed and frees their threads (recovery.ts): all of them (the periodic
   * sweep), or those of one thread (a request that needs it).
   */
  recoverOrphans(threadId?: string): Promise<number> {
    const { store, graphs, onRunEnd } = this.#options;
    return recoverOrphans({ store, graphs, onRunEnd, active: (runId) => this.#active.has(runId) }, threadId);
  }

  /** Deletes stored events of runs that ended longer than the retention window ago. */
  purgeEvents(): Promise<number> {
    return this.#options.events.purge(this.#options.retainMs);
  }

  /** A thread's status from its checkpoint: interrupted while a review is pending, idle otherwise. */
  async threadStatus(assistantId: string, threadId: string): Promise<ThreadStatus> {
    return (await inspectThread(this.#options.graphs, assistantId, threadId)).thread;
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

  /** The run's row once it has ended (taking over its thread if its lease expired), else undefined. */
  async #endedRun(owner: Owner, threadId: string, runId: string): Promise<RunRow | undefined> {
    const run = await this.#options.store.getRun(owner, threadId, runId);
    if (!unfinished(run)) return run;
    if ((await this.recoverOrphans(threadId)) === 0) return undefined;
    const recovered = await this.#options.store.getRun(owner, threadId, runId);
    return unfinished(recovered) ? undefined : recovered;
  }

  /** A pending run's row, now running; `not_found` when it left the queue meanwhile (cancelled). */
  async #activate(runId: string): Promise<RunRow> {
    const run = await this.#options.queue?.activate(runId);
    if (!run) throw new ApiError("not_found", "the pending run was cancelled before it started");
    return run;
  }

  /** The pending runs' store, when this manager serves them. */
  get queue(): RunQueueStore | undefined {
    return this.#options.queue;
  }

  /** Keeps a finished run's log for late joins on this process, for the retention window. */
  #retire(runId: string, log: EventLog): void {
    this.#active.delete(runId);
    const timer = setTimeout(() => this.#finished.delete(runId), this.#options.retainMs);
    timer.unref();
    this.#finished.set(runId, { log, timer });
  }
}
