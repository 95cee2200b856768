/**
 * Starts pending runs (delayed with `after_seconds`, or queued behind a
 * thread's run with `multitask_strategy: "enqueue"`/`"interrupt"`) on
 * whichever instance claims them first: every instance polls the queue
 * (run-queue-store.ts), claims the due runs whose thread is free, and starts
 * each with `startRunAs`, as the principal that asked for it, through every
 * check a run started at once goes through (the thread's state, the
 * per-principal limit, the lease). A run that cannot start yet (the thread
 * or the owner's limit is busy) stays queued; one that never can (its
 * request no longer fits the thread) is recorded `error` with the refusal.
 */
import type { RunQueueStore } from "../../stores/run-queue-store.js";
import type { RouteContext } from "../context.js";
import { ownerOf } from "./types.js";
import { startRunAs } from "./start.js";
import { isApiError, type ApiErrorCode } from "../../errors.js";

/** Refusals that pass: the run stays queued and is tried again. */
const PASSING: readonly ApiErrorCode[] = [
  "thread_busy",
  "too_many_runs",
  "shutting_down",
  "database_busy",
  "database_unavailable",
];

export interface QueueWorkerOptions {
  /** How often the queue is read (default 500 ms). */
  pollMs?: number;
  /** How long a claimed run is hidden from other instances while this one starts it. */
  claimMs?: number;
  log?: (line: string) => void;
}

/** Polls the queue until the manager stops accepting runs (or `stop` is called). */
export function startQueueWorker(
  context: RouteContext,
  queue: RunQueueStore,
  options: QueueWorkerOptions = {},
): () => void {
  const pollMs = options.pollMs ?? 500;
  const log = options.log ?? (() => undefined);
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      for (const queued of await queue.claimDue(4, options.claimMs ?? 30_000)) {
        if (!context.manager.accepting) return;
        await startQueued(context, queue, queued, pollMs).catch((error: unknown) =>
          log(`queued run ${queued.run_id} could not be started: ${String(error)}`),
        );
      }
    } catch (error) {
      log(`the run queue could not be read: ${String(error)}`);
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => {
    if (!context.manager.accepting) clearInterval(timer);
    else void tick();
  }, pollMs);
  timer.unref();
  return () => clearInterval(timer);
}

async function startQueued(
  context: RouteContext,
  queue: RunQueueStore,
  queued: Awaited<ReturnType<RunQueueStore["claimDue"]>>[number],
  retryMs: number,
): Promise<void> {
  const thread = await context.store.get(ownerOf(queued.principal), queued.thread_id);
  if (!thread) return queue.remove(queued.run_id);
  try {
    await startRunAs(context, queued.principal, thread, queued.body, {
      delivery: "background",
      queued: queued.run_id,
    });
    await queue.remove(queued.run_id);
  } catch (error) {
    if (isApiError(error) && PASSING.includes(error.code)) return queue.retryLater(queued.run_id, retryMs);
    const refusal = isApiError(error)
      ? { error: error.code, message: error.message }
      : { error: "internal_error", message: "the queued run could not be started" };
    await queue.fail(queued.run_id, refusal);
  }
}
