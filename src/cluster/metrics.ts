/**
 * `/metrics` across the workers: the worker that gets the request asks the
 * primary, the primary asks every live worker for its snapshot (src/metrics.ts)
 * and answers with those that came back within a short timeout, beside its
 * own series (worker restarts). One process (`WARRANT_WORKERS=1`, no
 * primary) answers with its own snapshot as worker 1.
 */
import cluster, { type Worker } from "node:cluster";
import { isSnapshot, takeSnapshot, type MetricsSnapshot } from "../metrics.js";
import { isPrimaryMessage, isWorkerMessage, type PrimaryMessage, type WorkerMessage } from "./messages.js";

/** How long the primary waits for the workers' snapshots; a worker that has not answered by then is left out. */
export const COLLECT_TIMEOUT_MS = 1_000;

export interface CollectedMetrics {
  /** Snapshots by worker number ("1", "2", ...). */
  workers: Map<string, MetricsSnapshot>;
  /** The primary's own series (no worker label); empty for one process. */
  primary: MetricsSnapshot;
}

let nextId = 1;
const waiting = new Map<number, (answer: CollectedMetrics) => void>();

/** In a worker: answers the primary's collections, and routes its answers to `collectMetrics`. Once at start. */
export function answerMetricsRequests(): void {
  process.on("message", (message: unknown) => {
    if (!isPrimaryMessage(message)) return;
    if (message.type === "warrant:metrics-collect") {
      const reply: WorkerMessage = { type: "warrant:metrics-snapshot", id: message.id, snapshot: takeSnapshot() };
      process.send?.(reply);
    } else if (message.type === "warrant:metrics") {
      const resolve = waiting.get(message.id);
      waiting.delete(message.id);
      resolve?.({ workers: new Map(Object.entries(message.workers)), primary: message.primary });
    }
  });
}

/** Every worker's snapshot (this process's alone when it is no worker). */
export function collectMetrics(): Promise<CollectedMetrics> {
  if (!cluster.isWorker || process.send === undefined)
    return Promise.resolve({ workers: new Map([["1", takeSnapshot()]]), primary: {} });
  const id = nextId++;
  return new Promise((resolve) => {
    // The primary always answers (with what it has after its timeout); this is for a primary that is gone.
    const timer = setTimeout(() => {
      waiting.delete(id);
      resolve({ workers: new Map([[process.env["WARRANT_WORKER_NUMBER"] ?? "1", takeSnapshot()]]), primary: {} });
    }, COLLECT_TIMEOUT_MS * 3);
    timer.unref();
    waiting.set(id, (answer) => {
      clearTimeout(timer);
      resolve(answer);
    });
    const ask: WorkerMessage = { type: "warrant:metrics?", id };
    process.send?.(ask);
  });
}

/** The primary's side: collects from `live` (worker number → worker), answers `asker`. */
export function gatherFor(
  asker: Worker,
  askId: number,
  live: ReadonlyArray<{ number: number; worker: Worker }>,
  primary: MetricsSnapshot,
): void {
  const id = nextId++;
  const workers: Record<string, MetricsSnapshot> = {};
  let missing = live.length;
  let answered = false;
  const listeners: Array<() => void> = [];
  const answer = () => {
    if (answered) return;
    answered = true;
    clearTimeout(timer);
    for (const remove of listeners) remove();
    const reply: PrimaryMessage = { type: "warrant:metrics", id: askId, workers, primary };
    if (asker.isConnected()) asker.send(reply);
  };
  const timer = setTimeout(answer, COLLECT_TIMEOUT_MS);
  for (const { number, worker } of live) {
    const onMessage = (message: unknown) => {
      if (!isWorkerMessage(message) || message.type !== "warrant:metrics-snapshot" || message.id !== id) return;
      if (!isSnapshot(message.snapshot)) return;
      worker.off("message", onMessage);
      workers[String(number)] = message.snapshot;
      missing -= 1;
      if (missing === 0) answer();
    };
    worker.on("message", onMessage);
    listeners.push(() => worker.off("message", onMessage));
    const collect: PrimaryMessage = { type: "warrant:metrics-collect", id };
    if (worker.isConnected()) worker.send(collect);
    else missing -= 1;
  }
  if (missing <= 0) answer();
}
