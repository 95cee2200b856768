/** The load's figures and the lines `npm run load` prints. */
import type { Leak } from "./visibility.js";
import type { ThreadOutcome } from "./workload.js";

export interface ConnectionSamples {
  /** Backends on the load's database, sampled from `pg_stat_activity` (the sampler itself excluded). */
  peak: number;
  mean: number;
  /** Of those, the most that were running a statement at one moment. */
  peakActive: number;
  samples: number;
}

export interface LoadFigures {
  label: string;
  wallMs: number;
  outcomes: ThreadOutcome[];
  errors: Map<string, number>;
  serverErrors: number;
  leaks: Leak[];
  /** Undefined in embedded mode: its one connection is internal to the process. */
  connections: ConnectionSamples | undefined;
  /** Lines of server stderr showing a 500 or an unhandled rejection, and unexpected exits. */
  serverTrouble: string[];
  unhandledRejections: number;
}

/** The q-quantile (nearest rank) of `samples`; 0 for none. */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return 0;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** Why the load failed; empty when it passed. */
export function problemsOf(figures: LoadFigures): string[] {
  const problems: string[] = [];
  const unended = figures.outcomes.filter((outcome) => !outcome.ended);
  if (unended.length > 0) {
    const reasons = new Set(unended.map((outcome) => outcome.failure ?? outcome.runStatus ?? "unknown"));
    problems.push(`${unended.length} run(s) did not end: ${[...reasons].slice(0, 3).join("; ")}`);
  }
  if (figures.leaks.length > 0) problems.push(`${figures.leaks.length} cross-principal datum/data in responses`);
  if (figures.serverErrors > 0) problems.push(`${figures.serverErrors} response(s) with a 5xx status`);
  if (figures.serverTrouble.length > 0)
    problems.push(`server trouble: ${figures.serverTrouble.slice(0, 3).join(" | ")}`);
  if (figures.unhandledRejections > 0)
    problems.push(`${figures.unhandledRejections} unhandled rejection(s) in the load client`);
  return problems;
}

const ms = (value: number) => `${Math.round(value)} ms`;

export function formatReport(figures: LoadFigures): string[] {
  const { outcomes } = figures;
  const ended = outcomes.filter((outcome) => outcome.ended);
  const runMs = outcomes.flatMap((outcome) => (outcome.runMs === undefined ? [] : [outcome.runMs]));
  const threadMs = outcomes.map((outcome) => outcome.threadMs);
  const count = (values: (string | undefined)[]) => {
    const counts = new Map<string, number>();
    for (const value of values) counts.set(value ?? "none", (counts.get(value ?? "none") ?? 0) + 1);
    return [...counts].map(([key, n]) => `${key} ${n}`).join(", ");
  };
  /** The 50th, 95th and 99th percentiles of `samples`, in milliseconds. */
  const percentiles = (samples: readonly number[]) =>
    `p50 ${ms(quantile(samples, 0.5))}, p95 ${ms(quantile(samples, 0.95))}, p99 ${ms(quantile(samples, 0.99))}`;
  const backoffs = outcomes.reduce((sum, outcome) => sum + outcome.backoffs, 0);
  const runsPerSecond = ((ended.length * 1000) / figures.wallMs).toFixed(2);
  const runStatus = count(outcomes.map((outcome) => outcome.runStatus));
  const agentStatus = count(outcomes.map((outcome) => outcome.agentStatus));
  const connections = figures.connections;
  const lines = [
    `warrant load: ${figures.label}`,
    `runs: ${ended.length}/${outcomes.length} ended in ${(figures.wallMs / 1000).toFixed(1)} s, ${runsPerSecond} runs/s; ` +
      `run status: ${runStatus}; agent status: ${agentStatus}`,
    `latency per admitted run (stream open → end): ${percentiles(runMs)}`,
    `latency per thread (create → run end, backoffs included): ${percentiles(threadMs)}`,
    `per-principal limit: ${backoffs} answer(s) 429 too_many_runs, each backed off for its Retry-After`,
    connections
      ? `Postgres connections to the load database (pg_stat_activity, ${connections.samples} samples): ` +
        `peak ${connections.peak}, mean ${connections.mean.toFixed(1)}, peak running a statement ${connections.peakActive}`
      : "Postgres connections: embedded PGlite, one connection inside the process by construction (not sampled)",
    `errors by code: ${
      figures.errors.size === 0
        ? "none"
        : [...figures.errors]
            .sort()
            .map(([key, n]) => `${key} ×${n}`)
            .join(", ")
    }`,
    `cross-principal data: ${figures.leaks.length}${
      figures.leaks.length > 0
        ? ` (first: ${figures.leaks
            .slice(0, 3)
            .map((leak) => `${leak.user} got ${leak.what} from ${leak.where}`)
            .join("; ")})`
        : ""
    }`,
    `5xx responses: ${figures.serverErrors}; unhandled rejections: ${figures.unhandledRejections}; ` +
      `server trouble lines: ${figures.serverTrouble.length}`,
  ];
  return lines;
}
