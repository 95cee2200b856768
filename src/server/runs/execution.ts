/**
 * Executes one run: holds the thread's lease with a heartbeat (which also
 * carries cancel requests from any server process), streams the graph into
 * the run's emitter, and records how it ended. The run's config is built
 * here, from the verified principal and the thread row; nothing a client
 * sent reaches `configurable`.
 *
 * The end is recorded in an order other instances rely on: every event is
 * stored, then the run row gets its status, then the lease is released, then
 * the end marker is stored. A reader elsewhere that sees the run ended has
 * every event; one that reads the end marker sees the run's final row.
 */
import { type BaseStore, Command } from "@langchain/langgraph";
import type { Budgets } from "../../env.js";
import type { ThreadStore } from "../../stores/thread-store.js";
import { databaseFailure } from "../../db/retry.js";
import { runConfigFor } from "../../run-config.js";
import type { Owner, RunEndHook, RunRow } from "../../stores/thread-rows.js";
import type { LedgerStore } from "../../ports.js";
import { withoutSecretShapes } from "../../secrets/process-scanner.js";
import { runOptions } from "../../graph/routes.js";
import type { SecretScanner } from "../../secrets/scanner.js";
import { abortReason } from "./abort.js";
import { settlingWrite } from "../../execution/writes-in-flight.js";
import { registerRunStream } from "../../elicitation/streams.js";
import type { RunEmitter, StreamEventV2 } from "./emission.js";
import { inspectEnding, inspectThread, type ThreadInspection } from "./outcome.js";
import type { RunRequest, ServedGraph } from "./types.js";
import { closeStoppedRun } from "./stopped.js";

export interface ExecutionContext {
  graphs: Map<string, ServedGraph>;
  store: ThreadStore;
  budgets: Budgets;
  leaseMs: number;
  log: (line: string) => void;
  /** Called once a run's end is recorded (e.g. to export its trace); never awaited by the run. */
  onEnded?: ((run: RunRow, warrantRunId: string | undefined) => void) | undefined;
  /** Work committed with the run's final status, in its transaction (the webhook outbox's `run.ended`). */
  endHook?: RunEndHook | undefined;
  /** The tool host's secret scanner (absent: the built-in patterns). */
  secrets?: SecretScanner | undefined;
  /** The store a run's nodes see as `config.store`: the thread owner's view (absent: no store). */
  storeFor?: ((owner: Owner) => BaseStore) | undefined;
  /** The thread's ledger: a cancel waits for a write in flight to end (absent: a cancel stops at once). */
  ledger?: LedgerStore | undefined;
  /** Test-only crash points after the run's graph ended (`WARRANT_TEST_CRASH_AT`; see RunManagerOptions.atPoint). */
  atPoint?: ((point: "after_final_checkpoint" | "after_run_end") => void) | undefined;
}

export interface Execution {
  graph: ServedGraph;
  run: RunRow;
  request: RunRequest;
  runBound: Record<string, string>;
  emitter: RunEmitter;
  controller: AbortController;
  /** Stops the run at its next safe point (`safePointCancel`); a cancel request seen by the heartbeat calls it. */
  cancel: () => void;
  /**
   * Awaited after the run's first event is pushed and before anything else
   * of the run (its graph, a closing checkpoint): the test crash point
   * `after_first_event`, so that it falls before the run's first checkpoint
   * however slowly the event is stored. Unset in a server without a crash point.
   */
  beforeGraph?: (() => Promise<void>) | undefined;
}

export async function executeRun(context: ExecutionContext, execution: Execution): Promise<void> {
  const { store, budgets } = context;
  const { graph, run, request, runBound, emitter, controller } = execution;
  const threadId = run.thread_id;
  const inspect = () => inspectThread(context.graphs, run.assistant_id, threadId);
  emitter.push("metadata", { run_id: run.run_id, attempt: 1 });
  // A server's question to the owner during a call of this run is an event of its stream (elicitation broker).
  const unregisterStream = registerRunStream(threadId, run.run_id, (event, data) => emitter.push(event, data));
  const heartbeat = startHeartbeat(context, run, controller, execution.cancel);

  let runStatus: RunRow["status"] = "success";
  let ended: ThreadInspection = { thread: "idle", outcome: undefined };
  let failure: { error: string; message: string } | undefined;
  // The client that started the run asked for it to stop when it goes away.
  const onClientGone = () => controller.abort(abortReason("cancelled: the client disconnected"));
  request.cancelOn?.addEventListener("abort", onClientGone, { once: true });
  try {
    await execution.beforeGraph?.();
    const config = {
      ...runConfigFor({
        threadId,
        runId: run.run_id,
        principal: request.principal,
        runBound,
        checkpointId: request.checkpointId,
      }),
      // Also written on every checkpoint of the run (checkpoint-metadata.ts): history filters by it.
      metadata: { ...request.metadata, run_id: run.run_id, assistant_id: run.assistant_id, graph_id: run.assistant_id },
      // The client's labels (`config.tags`, `config.run_name`): on the run's events, as LangGraph's server puts them.
      ...(request.tags ? { tags: request.tags } : {}),
      ...(request.runName ? { runName: request.runName } : {}),
      ...runOptions(budgets),
      ...cappedRecursion(request.recursionLimit, budgets),
      signal: controller.signal,
      streamMode: emitter.libraryModes(),
      // The owner's store, also when a reviewer resumes the run: nobody's view is wider than the owner's.
      ...(context.storeFor
        ? { store: context.storeFor({ tenant: request.thread.tenant, user_id: request.thread.owner }) }
        : {}),
    };
    // The closing checkpoint must not carry this run's run_id: LangGraph would take the new
    // input for a resume of the same run (and drop it).
    if (request.closeStopped)
      await closeStoppedRun(graph, threadId, {
        closed_by_run: run.run_id,
        assistant_id: run.assistant_id,
        graph_id: run.assistant_id,
      });
    // A resume value is checkpointed as sent: a secret in a reviewer's edit is redacted first.
    const input = request.resume
      ? new Command({ resume: withoutSecretShapes(request.resume.value, context.secrets) })
      : request.input;
    if (emitter.wantsEvents()) {
      // LangChain's streamEvents v2: the other modes ride on the root graph's on_chain_stream events.
      const events = graph.streamEvents(input, { ...config, version: "v2" }) as AsyncIterable<StreamEventV2>;
      for await (const event of events) emitter.streamEvent(event);
    } else {
      const stream = await graph.stream(input, config);
      for await (const [mode, data] of stream as AsyncIterable<[string, unknown]>) emitter.chunk(mode, data);
    }
    context.atPoint?.("after_final_checkpoint");
    // The stream already showed where the run left the thread; the checkpoint is read only when it did not.
    const ending = emitter.ending();
    ended = ending ? inspectEnding(ending.values, ending.interrupted, run.run_id) : await inspect();
  } catch (error) {
    if (controller.signal.aborted) {
      runStatus = "interrupted";
      ended = await inspect().catch((): ThreadInspection => ({ thread: "idle", outcome: undefined }));
      const reason = controller.signal.reason instanceof Error ? controller.signal.reason.message : "cancelled";
      emitter.push("error", { error: "run_cancelled", message: `the run was stopped: ${reason}` });
    } else {
      runStatus = "error";
      ended = { thread: "error", outcome: undefined };
      failure = databaseFailure(error) ?? { error: errorName(error), message: errorMessage(error) };
      context.log(`run ${run.run_id} failed: ${failure.error}: ${failure.message}`);
      emitter.push("error", failure);
    }
  } finally {
    clearInterval(heartbeat);
    unregisterStream();
    request.cancelOn?.removeEventListener("abort", onClientGone);
    try {
      await emitter.stored();
      await store.setRunStatus(run.run_id, runStatus, failure, ended.outcome, context.endHook);
      context.atPoint?.("after_run_end");
      await store.release(threadId, run.run_id, ended.thread, ended.values);
    } catch (error) {
      context.log(`could not record the end of run ${run.run_id}: ${String(error)}`);
    }
    await emitter.close();
    context.onEnded?.(run, ended.outcome?.warrant_run_id);
  }
}

/**
 * Renews the lease every third of its life. A lost lease or a cancel request
 * aborts the run; so does a database that cannot be reached for a whole
 * lease, since another process may take the thread by then: stop rather than
 * run twice.
 */
function startHeartbeat(
  context: ExecutionContext,
  run: RunRow,
  controller: AbortController,
  cancelAtSafePoint: () => void,
): NodeJS.Timeout {
  const { store, leaseMs } = context;
  // The lease was taken just now; each renewal extends it by leaseMs from the database's clock.
  let renewedAt = Date.now();
  const heartbeat = setInterval(
    () => {
      store.heartbeat(run.thread_id, run.run_id, leaseMs).then(
        ({ held, cancel }) => {
          if (held) renewedAt = Date.now();
          if (cancel) cancelAtSafePoint();
          else if (!held) controller.abort(abortReason("lease lost"));
        },
        (error: unknown) => {
          context.log(`heartbeat for run ${run.run_id} failed: ${String(error)}`);
          if (Date.now() - renewedAt >= leaseMs) controller.abort(abortReason("lease lost"));
        },
      );
    },
    Math.max(50, Math.floor(leaseMs / 3)),
  );
  heartbeat.unref();
  return heartbeat;
}

/** A client's recursion limit, never above the one the budgets set. */
function cappedRecursion(limit: number | undefined, budgets: Budgets): { recursionLimit?: number } {
  return limit === undefined ? {} : { recursionLimit: Math.min(limit, runOptions(budgets).recursionLimit) };
}

/** How often a cancel waiting for a write in flight looks at the ledger again. */
const SAFE_POINT_POLL_MS = 100;

/**
 * A cancel (the cancel route, or `multitask_strategy: "interrupt"`) takes
 * effect at the run's next safe point: never while one of its writes is in
 * flight (its ledger row still `running`, or its execute step still settling
 * it: reconciling an unknown outcome, its result not yet LangGraph's). The
 * write completes, or ends `outcome_unknown` at its timeout and is
 * reconciled, and the run stops after its step, so a cancel never leaves a
 * write between its ledger row and the checkpoint.
 */
export function safePointCancel(context: ExecutionContext, run: RunRow, controller: AbortController): () => void {
  const startedAt = Date.now();
  let requested = false;
  const writeInFlight = async () => {
    if (settlingWrite(run.thread_id)) return true;
    const rows = (await context.ledger?.list(run.thread_id)) ?? [];
    return rows.some(
      (row) => row.risk !== "read" && row.status === "running" && Date.parse(row.started_at) >= startedAt - 1_000,
    );
  };
  return () => {
    if (requested || controller.signal.aborted) return;
    requested = true;
    void (async () => {
      while (!controller.signal.aborted && (await writeInFlight().catch(() => false)))
        await new Promise((resolve) => setTimeout(resolve, SAFE_POINT_POLL_MS));
      controller.abort(abortReason("cancelled"));
    })();
  };
}

function errorName(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string") return code;
  return error instanceof Error ? error.name : "Error";
}

function errorMessage(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n", 1)[0]?.slice(0, 500) ?? "";
}
