/**
 * Exports every run the server finishes as OpenTelemetry spans, when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set: the run's trace is read back from
 * Postgres once its end is recorded (so the spans are what `npm run trace`
 * prints) and sent over OTLP/HTTP. Exports run one at a time, off the run's
 * path; a failed export is a log line, never a failed run.
 */
import type { Database } from "../stores/open-database.js";
import { exportTraceSpans, otlpExporter } from "./otel.js";
import { readRunTrace, type HistorySource } from "./read-trace.js";

export interface RunExports {
  /** Queues the export of one run (by its Warrant run id, else its API run id). */
  enqueue(runId: string): void;
  /** Resolves when every queued export has been sent or has failed, or after `timeoutMs`. */
  idle(timeoutMs: number): Promise<void>;
}

export function runExports(options: {
  database: Database;
  graphFor: (graphId: string | null) => Promise<HistorySource>;
  log: (line: string) => void;
}): RunExports {
  let queue: Promise<void> = Promise.resolve();
  return {
    enqueue(runId) {
      queue = queue.then(async () => {
        try {
          const trace = await readRunTrace(options.database, options.graphFor, runId);
          if (trace) await exportTraceSpans(trace, otlpExporter());
        } catch (error) {
          options.log(
            `could not export the trace of run ${runId}: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      });
    },
    idle: (timeoutMs) =>
      Promise.race([queue, new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, timeoutMs)).unref())]),
  };
}
