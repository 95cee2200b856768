/**
 * `npm run trace -- RUN_ID [--json] [--otlp]`: one run's timeline, read from
 * the database named by DATABASE_URL (else the embedded one) alone, or,
 * while `npm start` of this checkout runs on it, asked of that server
 * (`GET /operator/runs/{id}/trace`, src/cli/server-client.ts): the
 * request, each plan (model turn, tokens, offered and withheld tools), each
 * decision with its check, approvals, each execution attempt (latency,
 * status, error class), evidence, budget use and why the run ended. RUN_ID
 * is the Warrant run id (state, ledger, approvals, audit) or an API run id
 * (a start or a resume of it). `--otlp` also exports the run as
 * OpenTelemetry spans to OTEL_EXPORTER_OTLP_ENDPOINT.
 * Exit 0 when printed, 1 when the run is unknown or on a configuration or
 * database error, 2 on a usage error.
 */
import { loadSettings, type Settings } from "../env.js";
import { exportTraceSpans, otlpConfigured, otlpExporter } from "../trace/otel.js";
import { traceOf } from "./history-reader.js";
import { renderTrace } from "../trace/render.js";
import type { RunTrace } from "../trace/trace-entries.js";
import { commandLine, RUN_ID, usageError } from "./command-line.js";
import { exitOnConfigError } from "./config-errors.js";
import { TRACE_USAGE as USAGE } from "./usage.js";

interface Options {
  runId: string;
  json: boolean;
  otlp: boolean;
}

async function main(argv: string[]): Promise<number> {
  const parsed = commandLine(argv, { json: { type: "boolean" }, otlp: { type: "boolean" } }, USAGE);
  if (typeof parsed === "number") return parsed;
  const [runId, ...extra] = parsed.positionals;
  if (runId === undefined || extra.length > 0 || !RUN_ID.test(runId))
    return usageError("expected one RUN_ID (letters, digits, `_.:-`, at most 128)", USAGE);
  const options: Options = { runId, json: parsed.values["json"] === true, otlp: parsed.values["otlp"] === true };
  return exitOnConfigError(async () => {
    const settings = loadSettings();
    if (options.otlp && !otlpConfigured()) {
      process.stderr.write("warrant: config_invalid: --otlp needs OTEL_EXPORTER_OTLP_ENDPOINT\n");
      return 1;
    }
    return show(await traceOf(settings, options.runId), options, settings.budgets);
  });
}

/** Prints the trace (and exports it with --otlp); exit 1 when there is no such run. */
async function show(trace: RunTrace | undefined, options: Options, budgets: Settings["budgets"]): Promise<number> {
  if (!trace) {
    process.stderr.write(`warrant: not_found: no run ${options.runId} in this database\n`);
    return 1;
  }
  process.stdout.write(`${options.json ? JSON.stringify(trace, null, 2) : renderTrace(trace, budgets)}\n`);
  if (options.otlp) {
    await exportTraceSpans(trace, otlpExporter());
    process.stderr.write(`exported ${trace.nodes.length} node span(s) of run ${trace.run_id} over OTLP\n`);
  }
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
