/**
 * `npm start`: the API server on `HOST:PORT` (default 127.0.0.1:2024).
 * Prints `warrant listening on <url>` once it accepts requests. SIGTERM or
 * SIGINT drains and exits 0; a configuration or infrastructure error at
 * start-up prints one `warrant: <code>: <message>` line and exits 1.
 */
import { loadSettings } from "../env.js";
import { describeError, isConfigError } from "../errors.js";
import { logLine } from "../secrets/process-scanner.js";
import { databaseIdentity, removeRuntimeFile, writeRuntimeFile } from "./runtime-file.js";
import { startServer } from "./server.js";

async function main(): Promise<void> {
  const settings = loadSettings();
  const server = await startServer({ settings });
  // The CLI of this checkout finds the server here and becomes its client (runtime-file.ts); one file per database.
  const database = databaseIdentity(settings);
  await writeRuntimeFile(settings.dataDir, {
    url: server.url,
    pid: process.pid,
    database,
    started_at: new Date().toISOString(),
  });
  console.log(`warrant listening on ${server.url}`);
  const served = settings.databaseUrl ? "Postgres server" : `embedded Postgres in ${settings.dataDir}`;
  console.error(`warrant-server: ${served}; mint a token with: npm run -s token -- --user alice`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.error(`warrant-server: ${signal}: draining`);
    server
      .close()
      .then(() => removeRuntimeFile(settings.dataDir, database))
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
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

main().catch((error: unknown) => {
  console.error(
    logLine(`warrant: ${isConfigError(error) ? describeError(error) : `startup_failed: ${describeError(error)}`}`),
  );
  process.exit(1);
});
