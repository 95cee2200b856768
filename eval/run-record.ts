/**
 * From a run's observation to its line in `runs.json` (scored, priced, its
 * tool sequence redacted), and the order runs are made in. Pure.
 */
import type { Configuration } from "./configurations.js";
import type { RunObservation, RunRecord } from "./record.js";
import { resourcesOf, scoreRun } from "./score.js";
import type { Task } from "./task.js";

/** The order of the runs: grouped by task, then configuration, then repeat, so a task's runs are adjacent. */
export function* runPlan<T, C>(tasks: readonly T[], configurations: readonly C[], repeats: number): Generator<{ task: T; configuration: C; repeat: number }> {
  for (const task of tasks) for (const configuration of configurations) for (let repeat = 0; repeat < repeats; repeat += 1) yield { task, configuration, repeat };
}

/** The redacted tool sequence: resource ids and outcomes, never free text or user ids. */
export function toolSequence(run: Pick<RunObservation, "boundary" | "denied">): string[] {
  const calls = run.boundary.map((call) => {
    const resources = resourcesOf(call.args).filter((resource) => !resource.startsWith("case:"));
    return `${call.tool}${resources.length > 0 ? `(${resources.join(",")})` : ""}: ${call.ok ? "ok" : (call.code ?? "error")}`;
  });
  return [...calls, ...run.denied.map((denial) => `${denial.tool ?? "?"}: denied ${denial.code}`)];
}

/** The record of one run: its score, usage, cost and redacted tool sequence. */
export function toRecord(task: Task, configuration: Pick<Configuration, "id">, repeat: number, observation: RunObservation, costUsd: number): RunRecord {
  return {
    task_id: task.id,
    category: task.category,
    configuration: configuration.id,
    repeat,
    ...scoreRun(task, observation),
    outcome: observation.outcome,
    termination_reason: observation.termination_reason,
    tool_calls: observation.ledger.length,
    model_calls: observation.usage.model_calls,
    input_tokens: observation.usage.input_tokens,
    output_tokens: observation.usage.output_tokens,
    cost_usd: costUsd,
    elapsed_ms: observation.elapsed_ms,
    tool_sequence: toolSequence(observation),
  };
}
