/**
 * Turns the bench's raw measurements into `bench/results/latest.json` and the
 * printed table: medians, spreads, ratios against `createReactAgent` (the
 * reference of the targets) and whether each target is met.
 */
import { anthropicWireSpread, anthropicWireTargets, type AnthropicWire } from "./anthropic-wire.js";
import { decimals, times, verdict } from "./format.js";
import type { PromptCache } from "./prompt-cache-scenarios.js";
import { anthropicWireTable, promptCacheTable } from "./report-prompt-cache.js";
import { median, pairedRatios, ratio, summarize, type Summary } from "./stats.js";
import { servedSummary, servedTable, servedTargets } from "./report-served.js";
import { VARIANTS, type VariantName } from "./variants.js";
import type { WorkerSetting } from "./workers.js";

export type PerVariant<T> = Record<VariantName, T>;

/** What main.ts measured, per variant where it applies. */
export interface Measurements {
  perStepMs: PerVariant<number[]>;
  /** The slope between a 10- and a 50-step thread. */
  perStepMsLonger: PerVariant<number[]>;
  transactionsPerStep: PerVariant<number[]>;
  statementsPerStep: PerVariant<number[]>;
  checkpointBytes50: PerVariant<number>;
  checkpointBytesAddedAt50: PerVariant<number>;
  runsPerSecond: PerVariant<number[]>;
  toolTokens: { warrant: number; all_bound: number; warrant_tools: string[]; all_bound_tool_count: number };
  floors: { mcpCallMs: number[]; bareCommitMs: number[] };
  toolResultChars: number;
  promptCache: PromptCache;
  /** Warrant and createReactAgent on the Anthropic Messages wire. */
  anthropicWire: AnthropicWire;
  /** Served throughput (bench/workers.ts): createReactAgent served in one process, Warrant with 1 and the default workers. */
  served: WorkerSetting[];
}

export interface RunInfo {
  command: string;
  database: string;
  runs: number;
  shortSteps: number;
  longSteps: number;
  concurrent: number;
  throughputRounds: number;
  loadAverage: { start: number[]; end: number[] };
  cpus: number;
  elapsedSeconds: number;
}

export interface Target {
  figure: string;
  rule: string;
  value: number | null;
  met: boolean | null;
}

export function each<T, U>(values: PerVariant<T>, map: (value: T) => U): PerVariant<U> {
  return Object.fromEntries(VARIANTS.map((name) => [name, map(values[name])])) as PerVariant<U>;
}

export const REFERENCE: VariantName = "create_react_agent";

export function buildResults(measured: Measurements, info: RunInfo) {
  const perStep = each(measured.perStepMs, summarize);
  const perStepLonger = each(measured.perStepMsLonger, summarize);
  const transactions = each(measured.transactionsPerStep, summarize);
  const statements = each(measured.statementsPerStep, summarize);
  const throughput = each(measured.runsPerSecond, summarize);
  // Each round runs the variants one after another: the ratio is taken within a round, then the median of rounds.
  const throughputRatios = pairedRatios(measured.runsPerSecond.warrant, measured.runsPerSecond[REFERENCE]);
  const medians = (summaries: PerVariant<Summary>) => each(summaries, (summary) => summary.median);
  const tokens = {
    warrant: measured.toolTokens.warrant,
    create_react_agent: measured.toolTokens.all_bound,
    create_agent: measured.toolTokens.all_bound,
  };
  const served = servedSummary(measured.served);
  const versusReference = <T extends number>(values: PerVariant<T>) =>
    each(values, (value) => ratio(value, values[REFERENCE]));

  const targets: Target[] = [
    target(
      "per_step_ms",
      "warrant ≤ 1.0× create_react_agent",
      ratio(perStep.warrant.median, perStep[REFERENCE].median),
      (value) => value <= 1.0,
    ),
    target("pg_transactions_per_step", "warrant ≤ 3", transactions.warrant.median, (value) => value <= 3),
    target("pg_statements_per_step", "warrant ≤ 12", statements.warrant.median, (value) => value <= 12),
    target(
      "checkpoint_bytes_50_steps",
      "warrant ≤ 1/3 of create_react_agent",
      ratio(measured.checkpointBytes50.warrant, measured.checkpointBytes50[REFERENCE]),
      (value) => value <= 1 / 3,
    ),
    target(
      "checkpoint_bytes_added_at_step_50",
      "warrant ≤ 10,000 bytes (linear growth)",
      measured.checkpointBytesAddedAt50.warrant,
      (value) => value <= 10_000,
    ),
    target(
      "tool_definition_tokens",
      "warrant ≤ 0.15× all tools bound",
      ratio(tokens.warrant, tokens[REFERENCE]),
      (value) => value <= 0.15,
    ),
    target(
      "runs_per_second_50_concurrent",
      "warrant ≥ 1.0× create_react_agent (median of per-round ratios)",
      throughputRatios.length > 0 ? median(throughputRatios) : null,
      (value) => value >= 1.0,
    ),
    ...promptCacheTargets(measured.promptCache),
    ...anthropicWireTargets(measured.anthropicWire),
    ...servedTargets(served),
  ];

  return {
    generated_at: new Date().toISOString(),
    ...describeRun(info),
    per_step_ms: medians(perStep),
    /** Not a target of the issue: the same figure once a thread has grown (10 → 50 steps). */
    per_step_ms_10_to_50_steps: medians(perStepLonger),
    pg_transactions_per_step: medians(transactions),
    pg_statements_per_step: medians(statements),
    checkpoint_bytes_50_steps: measured.checkpointBytes50,
    checkpoint_bytes_added_at_step_50: measured.checkpointBytesAddedAt50,
    tool_definition_tokens: tokens,
    runs_per_second_50_concurrent: medians(throughput),
    /** Warrant ÷ createReactAgent runs/s in each round (the throughput target is their median). */
    runs_per_second_ratio_per_round: throughputRatios,
    floors: {
      mcp_call_ms: summarize(measured.floors.mcpCallMs),
      bare_commit_ms: summarize(measured.floors.bareCommitMs),
    },
    spread: {
      per_step_ms: perStep,
      per_step_ms_10_to_50_steps: perStepLonger,
      pg_transactions_per_step: transactions,
      pg_statements_per_step: statements,
      runs_per_second_50_concurrent: throughput,
    },
    ratios_vs_create_react_agent: {
      per_step_ms: versusReference(medians(perStep)),
      per_step_ms_10_to_50_steps: versusReference(medians(perStepLonger)),
      pg_transactions_per_step: versusReference(medians(transactions)),
      pg_statements_per_step: versusReference(medians(statements)),
      checkpoint_bytes_50_steps: versusReference(measured.checkpointBytes50),
      checkpoint_bytes_added_at_step_50: versusReference(measured.checkpointBytesAddedAt50),
      tool_definition_tokens: versusReference(tokens),
      runs_per_second_50_concurrent: versusReference(medians(throughput)),
    },
    tool_definition_detail: measured.toolTokens,
    tool_result_chars: measured.toolResultChars,
    /** Every model call goes over HTTP to the scripted endpoint: Chat Completions here, Messages in anthropic_wire. */
    model_http: true,
    prompt_cache: measured.promptCache,
    anthropic_wire: { ...measured.anthropicWire, spread: anthropicWireSpread(measured.anthropicWire) },
    /** As `npm start` serves Warrant (1 and the default workers), beside createReactAgent served in one process. */
    served,
    targets,
  };
}

export function promptCacheTargets(cache: PromptCache): Target[] {
  const research = cache.research_30;
  const all = cache.all_tools_10;
  return [
    target(
      "research_30_prefix_reused",
      "warrant prefix_reused_tokens ≥ 95% of input_tokens",
      ratio(research.warrant.prefix_reused_tokens, research.warrant.input_tokens),
      (value) => value >= 0.95,
    ),
    target(
      "research_30_effective_input_tokens",
      "warrant ≤ 0.65× create_react_agent",
      ratio(research.warrant.effective_input_tokens, research[REFERENCE].effective_input_tokens),
      (value) => value <= 0.65,
    ),
    target(
      "all_tools_10_effective_input_tokens",
      "warrant ≤ 0.35× create_react_agent",
      ratio(all.warrant.effective_input_tokens, all[REFERENCE].effective_input_tokens),
      (value) => value <= 0.35,
    ),
    target(
      "research_30_request_seen_at_every_step",
      "warrant reaches step 30, the request in all 31 requests (1 = yes)",
      research.warrant.requests === 31 && research.warrant.request_always_seen ? 1 : 0,
      (value) => value === 1,
    ),
  ];
}

export type Results = ReturnType<typeof buildResults>;

export function target(figure: string, rule: string, value: number | null, holds: (value: number) => boolean): Target {
  return { figure, rule, value, met: value === null ? null : holds(value) };
}

function describeRun(info: RunInfo) {
  return {
    command: info.command,
    database: info.database,
    runs: info.runs,
    steps: { short: info.shortSteps, long: info.longSteps, bytes_thread: 50, throughput_thread: 5 },
    concurrent: info.concurrent,
    throughput_rounds: info.throughputRounds,
    machine: { cpus: info.cpus, load_average_start: info.loadAverage.start, load_average_end: info.loadAverage.end },
    elapsed_seconds: info.elapsedSeconds,
  };
}

// ---------------------------------------------------------------------------
// The printed table (markdown, so it can be pasted into the README)
// ---------------------------------------------------------------------------

const spreadOf = (summary: Summary, digits: number) =>
  `${decimals(summary.median, digits)} (${decimals(summary.p10, digits)}–${decimals(summary.p90, digits)})`;

export function renderTable(results: Results): string {
  const spread = results.spread;
  const ratios = results.ratios_vs_create_react_agent;
  const byFigure = new Map(results.targets.map((entry) => [entry.figure, entry]));
  const row = (figure: string, label: string, cells: PerVariant<string>, warrantRatio: number | null) => {
    const goal = byFigure.get(figure);
    const shown = `${cells.warrant} | ${cells.create_react_agent} | ${cells.create_agent}`;
    return `| ${label} | ${shown} | ${times(warrantRatio)} | ${goal?.rule ?? ""} | ${verdict(goal?.met ?? null)} |`;
  };
  const bytes = (value: number) => `${decimals(value / 1000, 1)} KB`;
  const lines = [
    "| figure | Warrant | createReactAgent | createAgent | Warrant ÷ createReactAgent | target | |",
    "|---|---|---|---|---|---|---|",
    row(
      "per_step_ms",
      "wall time per tool step, ms (median, p10–p90)",
      each(spread.per_step_ms, (summary) => spreadOf(summary, 1)),
      ratios.per_step_ms.warrant,
    ),
    row(
      "per_step_ms_10_to_50_steps",
      "the same, steps 10 → 50 of a thread (no target; median, p10–p90)",
      each(spread.per_step_ms_10_to_50_steps, (summary) => spreadOf(summary, 1)),
      ratios.per_step_ms_10_to_50_steps.warrant,
    ),
    row(
      "pg_transactions_per_step",
      "Postgres transactions per tool step",
      each(spread.pg_transactions_per_step, (summary) => decimals(summary.median, 1)),
      ratios.pg_transactions_per_step.warrant,
    ),
    row(
      "pg_statements_per_step",
      "Postgres statements per tool step",
      each(spread.pg_statements_per_step, (summary) => decimals(summary.median, 1)),
      ratios.pg_statements_per_step.warrant,
    ),
    row(
      "checkpoint_bytes_50_steps",
      "checkpoint bytes, one 50-step thread",
      each(results.checkpoint_bytes_50_steps, bytes),
      ratios.checkpoint_bytes_50_steps.warrant,
    ),
    row(
      "checkpoint_bytes_added_at_step_50",
      "checkpoint bytes added at step 50",
      each(results.checkpoint_bytes_added_at_step_50, bytes),
      ratios.checkpoint_bytes_added_at_step_50.warrant,
    ),
    row(
      "tool_definition_tokens",
      "tool-definition tokens per model call (o200k)",
      each(results.tool_definition_tokens, (value) => decimals(value, 0)),
      ratios.tool_definition_tokens.warrant,
    ),
    row(
      "runs_per_second_50_concurrent",
      `runs/s, ${results.concurrent} concurrent 5-step threads (median, p10–p90)`,
      each(spread.runs_per_second_50_concurrent, (summary) => spreadOf(summary, 1)),
      byFigure.get("runs_per_second_50_concurrent")?.value ?? null,
    ),
  ];
  const floors = results.floors;
  const detail = results.tool_definition_detail;
  return [
    ...lines,
    "",
    promptCacheTable(results),
    "",
    anthropicWireTable(results),
    "",
    servedTable(results.served, results.targets),
    "",
    `Floors: one raw MCP call (search_notes over stdio) ${spreadOf(floors.mcp_call_ms, 2)} ms; ` +
      `one bare commit (autocommit INSERT) ${spreadOf(floors.bare_commit_ms, 2)} ms.`,
    `Warrant offered ${detail.warrant_tools.join(", ")}; the peers bind all ${detail.all_bound_tool_count} listed tools. ` +
      `Tool results ≈${results.tool_result_chars} characters.`,
  ].join("\n");
}
