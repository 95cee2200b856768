/**
 * The process's metrics for `/metrics` (src/server/routes/metrics.ts): counters
 * kept in memory (an increment of a cell found in nested maps on the hot
 * path, no string built per request), gauges read when a snapshot is taken,
 * and the Prometheus text format (version 0.0.4) of one or several
 * processes' snapshots: each series summed (or, for lag, the maximum) over
 * the workers, then once per worker with a `worker="N"` label.
 * Imports nothing of the project, so any module may count.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from "node:perf_hooks";

interface Cell {
  value: number;
}

/** One process's series: `name` or `name{label="value",...}` → value. */
export type MetricsSnapshot = Record<string, number>;

/** A family: its help, type, and how the workers' values combine. */
interface Family {
  help: string;
  type: "counter" | "gauge";
  combine: "sum" | "max";
}

const FAMILIES: Record<string, Family> = {
  warrant_http_requests_total: {
    help: "HTTP requests answered, by method, route template and status",
    type: "counter",
    combine: "sum",
  },
  warrant_runs_started_total: { help: "Runs started", type: "counter", combine: "sum" },
  warrant_runs_ended_total: { help: "Runs whose end was recorded, by status", type: "counter", combine: "sum" },
  warrant_tool_steps_total: { help: "Tool call attempts that ended (every outcome)", type: "counter", combine: "sum" },
  warrant_tool_calls_total: {
    help: "Tool call attempts by outcome (executed, denied, outcome_unknown, abandoned)",
    type: "counter",
    combine: "sum",
  },
  warrant_reviews_pending: {
    help: "Reviews waiting for an answer (the whole database)",
    type: "gauge",
    combine: "max",
  },
  warrant_pg_pool_connections: {
    help: "Connections of the pg pools, by pool and state",
    type: "gauge",
    combine: "sum",
  },
  process_cpu_seconds_total: { help: "User and system CPU time of the process", type: "counter", combine: "sum" },
  process_resident_memory_bytes: { help: "Resident memory of the process", type: "gauge", combine: "sum" },
  nodejs_eventloop_lag_seconds: {
    help: "Mean event-loop delay since the previous scrape (across workers: the largest)",
    type: "gauge",
    combine: "max",
  },
  warrant_worker_restarts_total: {
    help: "Workers the primary restarted after they died",
    type: "counter",
    combine: "sum",
  },
  warrant_workers_reporting: { help: "Workers whose snapshot reached this scrape", type: "gauge", combine: "sum" },
};

const cell = (): Cell => ({ value: 0 });
function cellIn<K>(map: Map<K, Cell>, key: K): Cell {
  let found = map.get(key);
  if (found === undefined) {
    found = cell();
    map.set(key, found);
  }
  return found;
}

const requests = new Map<string, Map<string, Map<number, Cell>>>();
const runsStarted = cell();
const runsEnded = new Map<string, Cell>();
const toolCalls = new Map<string, Cell>();
const gauges = new Map<string, () => number>();
let loopDelay: IntervalHistogram | undefined;

/** One answered request; `route` is the matched template (`/threads/:thread_id`), never the path. */
export function countRequest(method: string, route: string, status: number): void {
  let byRoute = requests.get(method);
  if (byRoute === undefined) {
    byRoute = new Map();
    requests.set(method, byRoute);
  }
  let byStatus = byRoute.get(route);
  if (byStatus === undefined) {
    byStatus = new Map();
    byRoute.set(route, byStatus);
  }
  cellIn(byStatus, status).value += 1;
}

export function countRunStarted(): void {
  runsStarted.value += 1;
}

export function countRunEnded(status: string): void {
  cellIn(runsEnded, status).value += 1;
}

/** A tool call attempt's end, by its ledger status (`succeeded` and `failed` were executed). */
export function countToolCall(ledgerStatus: string): void {
  const outcome = ledgerStatus === "succeeded" || ledgerStatus === "failed" ? "executed" : ledgerStatus;
  if (outcome === "running") return;
  cellIn(toolCalls, outcome).value += 1;
}

/** A gauge read at each snapshot: `series` is `name` or `name{label="value"}` of a family above. */
export function registerGauge(series: string, read: () => number): void {
  gauges.set(series, read);
}

export function unregisterGauge(series: string): void {
  gauges.delete(series);
}

/** Starts measuring event-loop delay (once per process; servers call it when they start). */
export function watchEventLoop(): void {
  if (loopDelay !== undefined) return;
  loopDelay = monitorEventLoopDelay({ resolution: 20 });
  loopDelay.enable();
}

const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

/** This process's series now. */
export function takeSnapshot(): MetricsSnapshot {
  const out: MetricsSnapshot = {};
  for (const [method, byRoute] of requests)
    for (const [route, byStatus] of byRoute)
      for (const [status, counted] of byStatus) {
        const labels = `method="${escapeLabel(method)}",route="${escapeLabel(route)}",status="${status}"`;
        out[`warrant_http_requests_total{${labels}}`] = counted.value;
      }
  out["warrant_runs_started_total"] = runsStarted.value;
  for (const [status, counted] of runsEnded)
    out[`warrant_runs_ended_total{status="${escapeLabel(status)}"}`] = counted.value;
  let steps = 0;
  for (const [outcome, counted] of toolCalls) {
    out[`warrant_tool_calls_total{outcome="${escapeLabel(outcome)}"}`] = counted.value;
    steps += counted.value;
  }
  out["warrant_tool_steps_total"] = steps;
  for (const [series, read] of gauges) {
    const value = read();
    if (Number.isFinite(value)) out[series] = value;
  }
  const cpu = process.cpuUsage();
  out["process_cpu_seconds_total"] = (cpu.user + cpu.system) / 1e6;
  out["process_resident_memory_bytes"] = process.memoryUsage.rss();
  if (loopDelay !== undefined) {
    out["nodejs_eventloop_lag_seconds"] = Number.isFinite(loopDelay.mean) ? loopDelay.mean / 1e9 : 0;
    loopDelay.reset();
  }
  return out;
}

const familyOf = (series: string) => {
  const brace = series.indexOf("{");
  return brace === -1 ? series : series.slice(0, brace);
};

const withWorker = (series: string, worker: string) =>
  series.endsWith("}") ? `${series.slice(0, -1)},worker="${worker}"}` : `${series}{worker="${worker}"}`;

const formatValue = (value: number) =>
  Number.isInteger(value) ? String(value) : value.toPrecision(9).replace(/\.?0+$/, "");

/** Prometheus text: every family's combined series, then each worker's; `shared` series have no worker label. */
export function renderMetrics(workers: ReadonlyMap<string, MetricsSnapshot>, shared: MetricsSnapshot = {}): string {
  const lines: string[] = [];
  for (const [family, { help, type, combine }] of Object.entries(FAMILIES)) {
    const combined = new Map<string, number>();
    const perWorker: string[] = [];
    for (const [worker, snapshot] of workers)
      for (const [series, value] of Object.entries(snapshot)) {
        if (familyOf(series) !== family) continue;
        const before = combined.get(series);
        combined.set(
          series,
          before === undefined ? value : combine === "sum" ? before + value : Math.max(before, value),
        );
        perWorker.push(`${withWorker(series, worker)} ${formatValue(value)}`);
      }
    for (const [series, value] of Object.entries(shared)) if (familyOf(series) === family) combined.set(series, value);
    if (family === "warrant_workers_reporting") combined.set(family, workers.size);
    if (combined.size === 0) continue;
    lines.push(`# HELP ${family} ${help}`, `# TYPE ${family} ${type}`);
    for (const [series, value] of combined) lines.push(`${series} ${formatValue(value)}`);
    lines.push(...perWorker);
  }
  return `${lines.join("\n")}\n`;
}

/** Whether `value` looks like a snapshot (what a worker sent over IPC). */
export function isSnapshot(value: unknown): value is MetricsSnapshot {
  return (
    typeof value === "object" &&
    value !== null &&
    Object.values(value).every((entry) => typeof entry === "number" && Number.isFinite(entry))
  );
}
