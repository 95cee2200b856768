/**
 * `npm start` with `WARRANT_WORKERS` > 1: the primary forks the workers
 * (node:cluster, so they share the port), starts the embedded database once
 * when there is no `DATABASE_URL` (embedded.ts), prefixes every line a
 * worker (or one of its MCP servers) writes with `[worker N]`, restarts a
 * worker that dies (with backoff; the runs it had are taken over through
 * their leases, as a killed instance's are), and on SIGTERM or SIGINT drains
 * every worker, then exits 0. It serves no request itself. Workers start one
 * after another at first (each spawns its MCP servers), and the port is
 * announced once all of them listen; a first worker that cannot start ends
 * the primary with its reason, a later one is retried like a death.
 */
import cluster, { type Worker } from "node:cluster";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import type { Settings } from "../env.js";
import { startSharedEmbedded, type SharedEmbedded } from "./embedded.js";
import { isWorkerMessage, type PrimaryMessage } from "./messages.js";
import { restartDelayMs } from "./pool-share.js";
import { WorkerStartFailure } from "../errors.js";
import { gatherFor } from "./metrics.js";
import { withServerFlags } from "./node-flags.js";

export interface PrimaryHooks {
  /** Every worker listens on `url` (the first start only). */
  listening(url: string): Promise<void>;
  /** Every worker has exited after a drain; the database is closed. */
  stopped(): Promise<void>;
  log(line: string): void;
}

/** A worker that stays up this long counts as healthy: its next death restarts it after the shortest delay. */
const HEALTHY_MS = 60_000;

interface Slot {
  number: number;
  restarts: number;
  worker?: Worker;
  startedAt: number;
  failures: number;
  timer?: NodeJS.Timeout;
}

function prefixLines(stream: Readable | null, prefix: string, write: (line: string) => void): void {
  if (stream) createInterface({ input: stream }).on("line", (line) => write(`${prefix}${line}\n`));
}

/** Runs the primary until it is stopped; rejects when a worker fails its first start. */
export async function runPrimary(settings: Settings, hooks: PrimaryHooks): Promise<void> {
  const count = settings.workers ?? 1;
  const embedded: SharedEmbedded | undefined =
    settings.databaseUrl === undefined
      ? await startSharedEmbedded(settings.dataDir, count, settings.pool.waitMs)
      : undefined;
  // Piped, so each line gets its worker's number; the MCP servers inherit the worker's stderr, so theirs do too.
  cluster.setupPrimary({ silent: true, execArgv: withServerFlags(process.execArgv) });
  const slots: Slot[] = Array.from({ length: count }, (_, index) => ({
    number: index + 1,
    restarts: 0,
    startedAt: 0,
    failures: 0,
  }));
  let stopping = false;
  let started = false;
  let failStart: (error: Error) => void = () => undefined;
  let failureLine: string | undefined;
  let listeningCount = 0;
  let allListening: (url: string) => void = () => undefined;
  const firstStart = new Promise<string>((resolve, reject) => {
    allListening = resolve;
    failStart = reject;
  });

  const fork = (slot: Slot) => {
    slot.timer = undefined;
    // The worker's number, for its logs and its `/metrics` label (cluster's own ids grow with every restart).
    const worker = cluster.fork({ WARRANT_WORKER_NUMBER: String(slot.number) });
    slot.worker = worker;
    slot.startedAt = Date.now();
    hooks.log(`worker ${slot.number} (pid ${worker.process.pid}) started`);
    const prefix = `[worker ${slot.number}] `;
    prefixLines(worker.process.stdout, prefix, (line) => process.stdout.write(line));
    prefixLines(worker.process.stderr, prefix, (line) => process.stderr.write(line));
    worker.on("message", (message: unknown) => {
      if (!isWorkerMessage(message)) return;
      if (message.type === "warrant:database?") {
        const answer: PrimaryMessage = { type: "warrant:database", ...(embedded ? { url: embedded.url } : {}) };
        worker.send(answer);
      } else if (message.type === "warrant:metrics?") {
        const restarts = Object.fromEntries(
          slots.map((each) => [`warrant_worker_restarts_total{worker="${each.number}"}`, each.restarts]),
        );
        const total = slots.reduce((sum, each) => sum + each.restarts, 0);
        gatherFor(worker, message.id, liveSlots(), { ...restarts, warrant_worker_restarts_total: total });
      } else if (message.type === "warrant:failed") {
        failureLine ??= message.line;
      } else if (message.type === "warrant:listening") {
        hooks.log(`worker ${slot.number} (pid ${worker.process.pid}) listening`);
        if (!started) {
          listeningCount += 1;
          const next = slots[listeningCount];
          if (next) fork(next);
          else allListening(message.url);
        }
      }
    });
    worker.on("exit", (code, signal) => {
      if (slot.worker === worker) slot.worker = undefined;
      if (stopping) return;
      const how = signal ?? `code ${code}`;
      // The first worker's failure is the configuration's or the database's: every worker would fail the same way.
      // A later one's (an MCP server slow to start on a loaded machine) is retried like any death.
      if (!started && listeningCount === 0) {
        failStart(new WorkerStartFailure(`worker ${slot.number} exited (${how}) before it listened`, failureLine));
        return;
      }
      slot.failures = Date.now() - slot.startedAt >= HEALTHY_MS ? 1 : slot.failures + 1;
      const delay = restartDelayMs(slot.failures);
      hooks.log(`worker ${slot.number} (pid ${worker.process.pid}) exited (${how}); restarting in ${delay} ms`);
      slot.restarts += 1;
      slot.timer = setTimeout(() => fork(slot), delay);
    });
  };

  const live = () => slots.flatMap((slot) => (slot.worker ? [slot.worker] : []));
  function liveSlots() {
    return slots.flatMap((slot) => (slot.worker ? [{ number: slot.number, worker: slot.worker }] : []));
  }
  const stopWorkers = async (signal: NodeJS.Signals) => {
    stopping = true;
    for (const slot of slots) if (slot.timer) clearTimeout(slot.timer);
    const exits = live().map(
      (worker) => new Promise<number | null>((resolve) => worker.once("exit", (code) => resolve(code))),
    );
    for (const worker of live()) worker.process.kill(signal);
    const codes = await Promise.all(exits);
    await embedded?.close();
    return codes.every((code) => code === 0);
  };

  // One after another: each start spawns its own MCP servers, and all of them at once can miss their start timeout.
  const [first] = slots;
  if (first) fork(first);
  let url: string;
  try {
    url = await firstStart;
  } catch (error) {
    await stopWorkers("SIGKILL");
    throw error;
  }
  started = true;

  let draining = false;
  let announced: Promise<void> = Promise.resolve();
  const stop = (signal: NodeJS.Signals) => {
    if (draining) return;
    draining = true;
    void (async () => {
      // The runtime file is written before it is removed.
      await announced.catch(() => undefined);
      hooks.log(`${signal}: draining ${live().length} worker(s)`);
      const clean = await stopWorkers("SIGTERM");
      await hooks.stopped();
      process.exit(clean ? 0 : 1);
    })();
  };
  // Before the URL is announced: a client that sends SIGTERM as soon as it reads the URL gets a drain, never the
  // default action (the process killed by the signal).
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  announced = hooks.listening(url);
  await announced;
}
