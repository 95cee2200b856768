/**
 * `npm start`: the API server on `HOST:PORT` (default 127.0.0.1:2024).
 * Prints `warrant listening on <url>` once it accepts requests. SIGTERM or
 * SIGINT drains and exits 0; a configuration or infrastructure error at
 * start-up prints one `warrant: <code>: <message>` line and exits 1.
 *
 * With `WARRANT_WORKERS` > 1 (the default on a machine with several cores)
 * this process is the primary of that many workers sharing the port
 * (src/cluster/README.md); each worker runs the server below with its share
 * of the connection pool.
 */
import cluster from "node:cluster";
import { loadSettings, type Settings } from "../env.js";
import { describeError, isConfigError, WorkerStartFailure } from "../errors.js";
import { logLine } from "../secrets/process-scanner.js";
import { askForDatabase, reportListening, reportStartFailure } from "../cluster/messages.js";
import { poolShare } from "../cluster/pool-share.js";
import { runPrimary } from "../cluster/primary.js";
import { answerMetricsRequests } from "../cluster/metrics.js";
import { openDatabase, type Database } from "../stores/open-database.js";
import { databaseIdentity, removeRuntimeFile, writeRuntimeFile } from "./runtime-file.js";
import { startServer } from "./server.js";

const served = (settings: Settings) =>
  settings.databaseUrl ? "Postgres server" : `embedded Postgres in ${settings.dataDir}`;

/** The CLI of this checkout finds the server here and becomes its client (runtime-file.ts); one file per database. */
async function announce(settings: Settings, url: string): Promise<void> {
  await writeRuntimeFile(settings.dataDir, {
    url,
    pid: process.pid,
    database: databaseIdentity(settings),
    started_at: new Date().toISOString(),
  });
  console.log(`warrant listening on ${url}`);
  console.error(`warrant-server: ${served(settings)}; mint a token with: npm run -s token -- --user alice`);
}

/** One process serving (WARRANT_WORKERS=1), or one worker of several (which leaves the runtime file to its primary). */
async function serve(settings: Settings): Promise<void> {
  const worker = cluster.isWorker;
  let database: Database | undefined;
  let options = { settings };
  if (worker) {
    answerMetricsRequests();
    options = { settings: { ...settings, pool: poolShare(settings.pool, settings.workers ?? 1) } };
    // The embedded database is the primary's: this worker reaches it through the relay, one connection at a time.
    const relay = await askForDatabase();
    if (relay !== undefined) {
      const pool = { ...settings.pool, max: 1, backgroundMax: 0 };
      database = await openDatabase({ databaseUrl: relay, dataDir: settings.dataDir, pool });
    }
  }
  const server = await startServer({ ...options, ...(database ? { overrides: { database } } : {}) });
  let announced: Promise<void> = Promise.resolve();
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.error(`warrant-server: ${signal}: draining`);
    // The runtime file is written before it is removed.
    announced
      .catch(() => undefined)
      .then(() => server.close())
      .then(() => database?.close())
      .then(() => (worker ? undefined : removeRuntimeFile(settings.dataDir, databaseIdentity(settings))))
      .then(
        () => {
          console.error("warrant-server: stopped");
          process.exit(0);
        },
        (error: unknown) => {
          console.error(logLine(`warrant-server: shutdown failed: ${describeError(error)}`));
          process.exit(1);
        },
      );
  };
  // Before the URL is announced: a client that sends SIGTERM as soon as it reads the URL gets a drain, never the
  // default action (the process killed by the signal).
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  if (worker) reportListening(server.url);
  else {
    announced = announce(settings, server.url);
    await announced;
  }
}

async function main(): Promise<void> {
  const settings = loadSettings();
  if (cluster.isWorker || (settings.workers ?? 1) <= 1) return serve(settings);
  await runPrimary(settings, {
    listening: (url) => announce(settings, url),
    stopped: async () => {
      await removeRuntimeFile(settings.dataDir, databaseIdentity(settings));
      console.error("warrant-server: stopped");
    },
    log: (line) => console.error(`warrant-primary: ${line}`),
  });
}

main().catch((error: unknown) => {
  // A worker's own reason is the line a single process would have printed; the primary repeats it as its own.
  const line =
    error instanceof WorkerStartFailure && error.line !== undefined
      ? error.line
      : logLine(`warrant: ${isConfigError(error) ? describeError(error) : `startup_failed: ${describeError(error)}`}`);
  console.error(line);
  // A worker's message must reach the primary before it exits.
  if (cluster.isWorker) void reportStartFailure(line).finally(() => process.exit(1));
  else process.exit(1);
});
