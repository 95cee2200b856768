/**
 * From a run's observation to its line in `runs.json` (scored, priced, its
 * tool sequence redacted), and the order runs are made in. Pure.
 */
import type { Configuration } from "./configurations.js";
import type { RunObservation, RunRecord } from "./record.js";
import { resourcesOf, scoreRun } from "./score.js";
import type { Task } from "./task.js";

/** The order of the runs: grouped by task, then configuration, then repeat, so a task's runs are adjacent. */
export function* runPlan<T, C>(
  tasks: readonly T[],
  configurations: readonly C[],
  repeats: number,
): Generator<{ task: T; configuration: C; repeat: number }> {
  for (const task of tasks)
    for (const configuration of configurations)
      for (let repeat = 0; repeat < repeats; repeat += 1) yield { task, configuration, repeat };
}

/** The redacted tool sequence: resource ids and outcomes, never free text or user ids. */
export function toolSequence(run: Pick<RunObservation, "boundary" | "denied">): string[] {
  const calls = run.boundary.map((call) => {
    const resources = resourcesOf(call.args).filter((resource) => !resource.startsWith("case:"));
    return `${call.tool}${resources.length > 0 ? `(${resources.join(",")})` : ""}: ${call.ok ? "ok" : (call.code ?? "error")}`;
  });
  return [...calls, ...run.denied.map((denial) => `${denial.tool ?? "?"}: denied ${denial.code}`)];
}

/** What the harness knows about a run's planner. */
export interface PlannerFacts {
  /** The run's model cost in USD (the price table applied to its tokens). */
  cost_usd: number;
  /** False for the rules planner: its turns are planner turns, not model calls. */
  model_backed: boolean;
  /** The planner's own count of attempted violations (simulated profiles). */
  attempts: Record<string, number>;
}

/** The record of one run: its score, usage, cost and redacted tool sequence. */
export function toRecord(
  task: Task,
  configuration: Pick<Configuration, "id">,
  repeat: number,
  observation: RunObservation,
  planner: PlannerFacts,
): RunRecord {
  return {
    task_id: task.id,
    category: task.category,
    configuration: configuration.id,
    repeat,
    ...scoreRun(task, observation),
    outcome: observation.outcome,
    termination_reason: observation.termination_reason,
    tool_calls: observation.ledger.length,
    model_calls: planner.model_backed ? observation.usage.model_calls : 0,
    input_tokens: observation.usage.input_tokens,
    output_tokens: observation.usage.output_tokens,
    cost_usd: planner.cost_usd,
    elapsed_ms: observation.elapsed_ms,
    planner_attempts: planner.attempts,
    tool_sequence: toolSequence(observation),
  };
}
