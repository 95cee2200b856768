/**
 * The served part of the bench's results (bench/workers.ts): per setting the
 * medians of runs/s, CPU ms a tool step (the server's processes, Postgres, the
 * load generator) and the machine's CPU use; Warrant's ratios against
 * createReactAgent served in one process (the median of the per-round
 * ratios); the targets of the throughput issue; and its table.
 */
import { decimals, times, verdict } from "./format.js";
import { pairedRatios, summarize } from "./stats.js";
import type { Target } from "./report.js";
import type { WorkerSetting } from "./workers.js";

export interface ServedSummary {
  label: string;
  workers: number;
  runs_per_second: number;
  runs_per_second_ratio: number | null;
  server_cpu_ms_per_step: number;
  server_cpu_ratio: number | null;
  postgres_cpu_ms_per_step: number;
  generator_cpu_ms_per_step: number;
  machine_cpu_use: number;
}

const medianOf = (values: number[]) => summarize(values.length > 0 ? values : [Number.NaN]).median;

/** The median of the per-round ratios (the rounds interleave the settings, bench/workers.ts); null when none pairs. */
function pairedRatio(values: number[], base: number[]): number | null {
  const ratios = pairedRatios(values, base);
  return ratios.length === 0 ? null : medianOf(ratios);
}

/** The settings in measured order; ratios against the reference setting (`reference: true`), paired by round. */
export function servedSummary(settings: WorkerSetting[]): ServedSummary[] {
  const reference = settings.find((setting) => setting.reference);
  return settings.map((setting) => {
    const runs = medianOf(setting.runsPerSecond);
    const cpu = medianOf(setting.cpuMsPerStep);
    return {
      label: setting.label,
      workers: setting.workers,
      runs_per_second: runs,
      runs_per_second_ratio: reference ? pairedRatio(setting.runsPerSecond, reference.runsPerSecond) : null,
      server_cpu_ms_per_step: cpu,
      server_cpu_ratio: reference ? pairedRatio(setting.cpuMsPerStep, reference.cpuMsPerStep) : null,
      postgres_cpu_ms_per_step: medianOf(setting.postgresCpuMsPerStep),
      generator_cpu_ms_per_step: medianOf(setting.generatorCpuMsPerStep),
      machine_cpu_use: medianOf(setting.machineCpuUse),
    };
  });
}

/** The served targets: one worker ≥ 1.0× runs/s and ≤ 1.0× CPU a step, the default ≥ 1.4× runs/s. */
export function servedTargets(summary: ServedSummary[]): Target[] {
  const warrant = summary.filter((setting) => setting.label.startsWith("warrant"));
  const one = warrant.find((setting) => setting.workers === 1);
  const most = warrant.reduce<ServedSummary | undefined>(
    (best, setting) => (best === undefined || setting.workers > best.workers ? setting : best),
    undefined,
  );
  const make = (figure: string, rule: string, value: number | null | undefined, holds: (value: number) => boolean) => ({
    figure,
    rule,
    value: value ?? null,
    met: value === null || value === undefined ? null : holds(value),
  });
  return [
    make(
      "served_runs_per_second_one_worker",
      "≥ 1.0× createReactAgent served",
      one?.runs_per_second_ratio,
      (v) => v >= 1.0,
    ),
    make("served_cpu_ms_per_step_one_worker", "≤ 1.0× createReactAgent served", one?.server_cpu_ratio, (v) => v <= 1.0),
    make(
      "served_runs_per_second_default_workers",
      `≥ 1.4× createReactAgent served (${most?.workers ?? "?"} workers)`,
      most && most.workers > 1 ? most.runs_per_second_ratio : null,
      (v) => v >= 1.4,
    ),
  ];
}

const COLUMNS = [
  "served, 50 concurrent 5-step threads",
  "runs/s",
  "× reference",
  "server CPU ms/step",
  "× reference",
  "Postgres CPU ms/step",
  "load generator CPU ms/step",
  "machine CPU",
  "targets",
];

/** The served rows as a markdown table. */
export function servedTable(summary: ServedSummary[], targets: Target[]): string {
  const goal = new Map(targets.map((entry) => [entry.figure, entry]));
  const verdicts = (setting: ServedSummary) => {
    if (!setting.label.startsWith("warrant")) return "reference";
    const figures =
      setting.workers === 1
        ? ["served_runs_per_second_one_worker", "served_cpu_ms_per_step_one_worker"]
        : ["served_runs_per_second_default_workers"];
    return figures
      .map((figure) => `${goal.get(figure)?.rule ?? figure}: ${verdict(goal.get(figure)?.met ?? null)}`)
      .join("; ");
  };
  return [
    `| ${COLUMNS.join(" | ")} |`,
    "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ...summary.map(
      (setting) =>
        `| ${setting.label} | ${decimals(setting.runs_per_second, 2)} | ${times(setting.runs_per_second_ratio)} | ` +
        `${decimals(setting.server_cpu_ms_per_step, 2)} | ${times(setting.server_cpu_ratio)} | ` +
        `${decimals(setting.postgres_cpu_ms_per_step, 2)} | ${decimals(setting.generator_cpu_ms_per_step, 2)} | ` +
        `${decimals(setting.machine_cpu_use * 100, 0)}% | ${verdicts(setting)} |`,
    ),
  ].join("\n");
}
