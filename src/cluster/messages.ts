/**
 * What the primary and its workers say to each other over node:cluster's
 * IPC channel, and the worker's side of it.
 */
import cluster from "node:cluster";
import type { MetricsSnapshot } from "../metrics.js";

/** Worker → primary. */
export type WorkerMessage =
  | { type: "warrant:database?" }
  | { type: "warrant:listening"; url: string }
  /** The worker could not start: the one `warrant: <code>: <message>` line a single process would print. */
  | { type: "warrant:failed"; line: string }
  /** `/metrics` was asked of this worker: every live worker's snapshot, please (`id` pairs the answer). */
  | { type: "warrant:metrics?"; id: number }
  /** This worker's snapshot, for the primary's collection `id`. */
  | { type: "warrant:metrics-snapshot"; id: number; snapshot: MetricsSnapshot };

/** Primary → worker. `url` is the embedded database's relay, absent with a Postgres server. */
export type PrimaryMessage =
  | { type: "warrant:database"; url?: string }
  /** Send your snapshot for collection `id`. */
  | { type: "warrant:metrics-collect"; id: number }
  /** The answer to this worker's `warrant:metrics?` `id`: snapshots by worker number, the primary's own series. */
  | { type: "warrant:metrics"; id: number; workers: Record<string, MetricsSnapshot>; primary: MetricsSnapshot };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

export function isWorkerMessage(value: unknown): value is WorkerMessage {
  return isRecord(value) && typeof value["type"] === "string" && value["type"].startsWith("warrant:");
}

export function isPrimaryMessage(value: unknown): value is PrimaryMessage {
  return isRecord(value) && typeof value["type"] === "string" && value["type"].startsWith("warrant:");
}

/** Whether this process is a worker of `npm start`'s primary. */
export const isWorker = (): boolean => cluster.isWorker;

function send(message: WorkerMessage): void {
  process.send?.(message);
}

/** Asks the primary where the database is: the embedded relay's URL, or undefined (use the settings' own). */
export function askForDatabase(): Promise<string | undefined> {
  return new Promise((resolve) => {
    const onMessage = (message: unknown) => {
      if (!isPrimaryMessage(message) || message.type !== "warrant:database") return;
      process.off("message", onMessage);
      resolve(message.url);
    };
    process.on("message", onMessage);
    send({ type: "warrant:database?" });
  });
}

/** Tells the primary why this worker could not start (before it exits 1). */
export function reportStartFailure(line: string): Promise<void> {
  const message: WorkerMessage = { type: "warrant:failed", line };
  return new Promise((resolve) => {
    if (!process.send?.(message, () => resolve())) resolve();
  });
}

/** Tells the primary this worker accepts requests. */
export function reportListening(url: string): void {
  send({ type: "warrant:listening", url });
}
