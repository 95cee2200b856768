/**
 * `npm run load [-- --embedded] [--threads N] [--timeout-s S]`: several
 * server instances on one Postgres under concurrent threads from several
 * principals in several tenants (load/run.ts), bounded in count and time,
 * on loopback only.
 *
 * Server mode (the default when DATABASE_URL is set): two instances on a
 * scratch database created on that server and dropped afterwards. Embedded
 * mode (`--embedded`, or no DATABASE_URL): one instance on PGlite in a
 * temporary directory. Prints the figures; exits 1 when any response
 * carried another principal's data, any answer was a 5xx, a promise was
 * left unhandled, or a run did not end.
 *
 * `--fault cut|outage:<N>s|latency:<N>ms` runs the database-fault load
 * instead (load/faults.ts).
 */
import { loadSettings } from "../src/env.js";
import { formatFaultFigures, parseFault, runFaultLoad } from "./faults.js";
import { formatReport } from "./report.js";
import { LOAD_REQUESTS, runLoad, type LoadOptions } from "./run.js";

/** Bounds on what one invocation may ask for. */
const MAX_THREADS = 200;
const MAX_TIMEOUT_S = 900;

function numberFlag(args: string[], name: string, fallback: number, max: number): number {
  const index = args.indexOf(name);
  if (index === -1) return fallback;
  const value = Number(args[index + 1]);
  if (!Number.isSafeInteger(value) || value < 1 || value > max)
    throw new Error(`${name} takes an integer from 1 to ${max}`);
  return value;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const settings = loadSettings();
  const faultIndex = args.indexOf("--fault");
  if (faultIndex !== -1) {
    const faultText = args[faultIndex + 1] ?? "";
    const figures = await runFaultLoad({
      adminUrl: settings.databaseUrl,
      fault: parseFault(faultText),
      faultText,
      threads: numberFlag(args, "--threads", 20, MAX_THREADS),
      log: (line) => console.error(`load: ${line}`),
    });
    for (const line of formatFaultFigures(figures)) console.log(line);
    if (figures.postgresText > 0 || figures.untyped5xx > 0 || figures.finished < figures.threads) process.exitCode = 1;
    return;
  }
  const mode: LoadOptions["mode"] =
    args.includes("--embedded") || settings.databaseUrl === undefined ? "embedded" : "server";
  const result = await runLoad({
    mode,
    adminUrl: settings.databaseUrl,
    threads: numberFlag(args, "--threads", 50, MAX_THREADS),
    instances: numberFlag(args, "--instances", 2, 4),
    users: Object.keys(LOAD_REQUESTS),
    maxActiveRuns: settings.server.maxActiveRuns,
    poolMax: settings.pool.max,
    timeoutMs: numberFlag(args, "--timeout-s", 300, MAX_TIMEOUT_S) * 1000,
    log: (line) => console.error(`load: ${line}`),
  });
  for (const line of formatReport(result)) console.log(line);
  if (result.problems.length > 0) {
    for (const problem of result.problems) console.error(`load: FAILED: ${problem}`);
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  console.error(`load: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
