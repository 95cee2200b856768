/**
 * The printed prompt-cache table of `npm run bench` (markdown, for the
 * README): one row per scenario and figure, then what the research run's
 * reuse target asks of an append-only request, in this run's numbers.
 */
import { costOf } from "../src/policy/pricing.js";
import { ANTHROPIC_VARIANTS, type AnthropicThreadFigures, type AnthropicWire } from "./anthropic-wire.js";
import { decimals, percent, times, verdict } from "./format.js";
import { BENCH_PRICES } from "./prices.js";
import { REUSE_TARGET } from "./prompt-cache.js";
import type { ScenarioFigures } from "./prompt-cache-scenarios.js";
import type { Results } from "./report.js";
import { ratio, summarize } from "./stats.js";

const REFERENCE = "create_react_agent";
const count = (value: number) => decimals(value, 0);
const usd = (value: number) => `$${decimals(value, 4)}`;
/** OpenAI wire: the thread's input priced from the table, what OpenAI's prefix cache serves at the cached price. */
export const openAIInputUsd = (f: ScenarioFigures) =>
  costOf(
    { input_tokens: f.input_tokens, cached_input_tokens: f.openai_cacheable_tokens, output_tokens: 0 },
    BENCH_PRICES.openai,
  );

/** The prompt-cache table: one row per scenario and figure. */

/** The prompt-cache table's columns (the last one says whether the target is met). */
const SCENARIO_COLUMNS = [
  "scenario, figure (o200k tokens over the thread)",
  "Warrant",
  "createReactAgent",
  "createAgent",
  "Warrant ÷ createReactAgent",
  "target",
  "",
];

export function promptCacheTable(results: Pick<Results, "prompt_cache" | "targets">): string {
  // The OpenAI wire: every variant through ChatOpenAI (Warrant as WARRANT_MODEL=openai:…).
  const cache = results.prompt_cache;
  const byFigure = new Map(results.targets.map((entry) => [entry.figure, entry]));
  const lines = [`| ${SCENARIO_COLUMNS.join(" | ")}|`, "|---|---|---|---|---|---|---|"];
  const openAIPrice = BENCH_PRICES.openai;
  /** The OpenAI prices the dollar row applies, per million tokens. */
  const priceTable = `price table: $${openAIPrice.input_per_million_usd}/M, cached $${openAIPrice.cached_input_per_million_usd}/M`;
  for (const key of ["research_30", "all_tools_10"] as const) {
    const figures = cache[key];
    const row = (
      name: string,
      cell: (value: ScenarioFigures) => string,
      value: (value: ScenarioFigures) => number,
      figure?: string,
    ) => {
      const goal = figure ? byFigure.get(figure) : undefined;
      const warrantRatio = ratio(value(figures.warrant), value(figures[REFERENCE]));
      const cells = `${cell(figures.warrant)} | ${cell(figures.create_react_agent)} | ${cell(figures.create_agent)}`;
      lines.push(
        `| ${key}: ${name} | ${cells} | ${times(warrantRatio)} | ${goal?.rule ?? ""} | ${verdict(goal?.met ?? null)} |`,
      );
    };
    row(
      "model requests",
      (f) => count(f.requests),
      (f) => f.requests,
    );
    row(
      "input tokens",
      (f) => count(f.input_tokens),
      (f) => f.input_tokens,
    );
    row(
      "tokens a request adds (mean)",
      (f) => decimals(f.growth_tokens_per_request, 0),
      (f) => f.growth_tokens_per_request,
    );
    row(
      "prefix reused",
      (f) => `${count(f.prefix_reused_tokens)} (${percent(f.prefix_reused_tokens, f.input_tokens, 1)})`,
      (f) => f.prefix_reused_tokens,
      key === "research_30" ? "research_30_prefix_reused" : undefined,
    );
    row(
      "most any request can reuse (each starts with the whole previous one)",
      (f) => `${count(f.append_only_ceiling_tokens)} (${percent(f.append_only_ceiling_tokens, f.input_tokens, 1)})`,
      (f) => f.append_only_ceiling_tokens,
    );
    row(
      "requests that start with the whole previous request",
      (f) => `${count(f.requests_extending_previous)} of ${count(Math.max(0, f.requests - 1))}`,
      (f) => f.requests_extending_previous,
    );
    row(
      "OpenAI-cacheable",
      (f) => `${count(f.openai_cacheable_tokens)} (${percent(f.openai_cacheable_tokens, f.input_tokens)})`,
      (f) => f.openai_cacheable_tokens,
    );
    row(
      "OpenAI pricing: effective input (cached at 10%)",
      (f) => count(f.effective_input_tokens),
      (f) => f.effective_input_tokens,
      `${key}_effective_input_tokens`,
    );
    row(`OpenAI wire: input $ per run (${priceTable})`, (f) => usd(openAIInputUsd(f)), openAIInputUsd);
  }
  const seen = byFigure.get("research_30_request_seen_at_every_step");
  const research = cache.research_30.warrant;
  lines.push(
    "",
    `research_30: Warrant made ${research.requests} model requests and the request was in every one: ${seen?.met ? "yes" : "**no**"}.`,
    "",
    ceilingNote(cache.research_30),
  );
  return lines.join("\n");
}

/**
 * Why a reuse share is bounded: a request that starts with the whole
 * previous one reuses all of it, so over a thread whose requests only grow
 * everything is reused but the last request. The share is then
 * 1 − last / input, a property of the workload (first request, growth,
 * length), not of how well an agent keeps its prefix.
 */
export function ceilingNote(research: Results["prompt_cache"]["research_30"]): string {
  const warrant = research.warrant;
  const last = warrant.per_request_input_tokens.at(-1) ?? 0;
  const first = warrant.per_request_input_tokens[0] ?? 0;
  const allowed = Math.floor((1 - REUSE_TARGET) * warrant.input_tokens);
  const target = `${decimals(100 * REUSE_TARGET, 0)}%`;
  const peer = (name: "create_react_agent" | "create_agent", label: string) => {
    const figures = research[name];
    const share = percent(figures.append_only_ceiling_tokens, figures.input_tokens, 1);
    return `${label} ${share} (requests growing by ${count(figures.growth_tokens_per_request)})`;
  };
  const growth = warrant.growth_for_95_percent_tokens;
  const needs =
    growth === null
      ? `no growth per request reaches ${target} over ${warrant.requests} requests`
      : `${target} needs requests growing by at most ${count(growth)} tokens each from a first request of ${count(first)} ` +
        `(${decimals(growth / Math.max(first, 1), 3)}× it)`;
  const gap = decimals(100 * (REUSE_TARGET - warrant.append_only_ceiling_ratio), 1);
  return [
    `research_30, the reuse target against its ceiling: a request that starts with the whole previous one reuses all of it,`,
    `so an append-only thread reuses everything but its last request. For Warrant that is ${count(warrant.append_only_ceiling_tokens)}`,
    `of ${count(warrant.input_tokens)} input tokens (${percent(warrant.append_only_ceiling_tokens, warrant.input_tokens, 1)});`,
    `it reused ${count(warrant.prefix_reused_tokens)} (${percent(warrant.prefix_reused_tokens, warrant.input_tokens, 1)}).`,
    `${target} would need the last request to be at most ${count(allowed)} tokens; it is ${count(last)}, the request,`,
    `tools and ${warrant.requests - 1} tool steps. Equivalently ${needs};`,
    `Warrant's grow by ${count(warrant.growth_tokens_per_request)}. The target is ${gap} points above the ceiling of any`,
    `append-only request for this workload (the peers' ceilings: ${peer("create_react_agent", "createReactAgent")},`,
    `${peer("create_agent", "createAgent")}); only a longer stable prefix (padding) or shorter tool results would raise it.`,
  ].join(" ");
}

/** The Anthropic wire's table: Warrant and createReactAgent (ChatAnthropic), from the usage the endpoint reported. */
export function anthropicWireTable(results: {
  anthropic_wire: Pick<AnthropicWire, "prompt_cache" | "per_step_ms" | "runs_per_second_50_concurrent">;
  targets: readonly { figure: string; rule: string; met: boolean | null }[];
}): string {
  const wire = results.anthropic_wire;
  const byFigure = new Map(results.targets.map((entry) => [entry.figure, entry]));
  const price = BENCH_PRICES.anthropic;
  /** The Anthropic prices the dollar rows apply, per million tokens. */
  const priceTable =
    `price table: $${price.input_per_million_usd}/M, reads $${price.cached_input_per_million_usd}/M, ` +
    `writes $${price.cache_write_per_million_usd}/M`;
  const lines = [
    "| Anthropic wire (Messages over HTTP), figure | Warrant | createReactAgent (ChatAnthropic) | Warrant ÷ createReactAgent | target | |",
    "|---|---|---|---|---|---|",
  ];
  const row = (label: string, values: [number, number], cell: (value: number) => string, figure?: string) => {
    const goal = figure ? byFigure.get(figure) : undefined;
    const cells = `${cell(values[0])} | ${cell(values[1])}`;
    lines.push(
      `| ${label} | ${cells} | ${times(ratio(values[0], values[1]))} | ${goal?.rule ?? ""} | ${verdict(goal?.met ?? null)} |`,
    );
  };
  const pair = (value: (f: AnthropicThreadFigures) => number, key: "research_30" | "all_tools_10") =>
    ANTHROPIC_VARIANTS.map((name) => value(wire.prompt_cache[key][name])) as [number, number];
  for (const key of ["research_30", "all_tools_10"] as const) {
    row(
      `${key}: model requests`,
      pair((f) => f.requests, key),
      count,
    );
    row(
      `${key}: requests with cache_control marks`,
      pair((f) => f.requests_with_cache_control, key),
      count,
    );
    row(
      `${key}: input tokens (reported usage, all input)`,
      pair((f) => f.input_tokens, key),
      count,
    );
    row(
      `${key}: cache reads (cache_read_input_tokens)`,
      pair((f) => f.cache_read_input_tokens, key),
      count,
    );
    row(
      `${key}: cache writes (cache_creation_input_tokens)`,
      pair((f) => f.cache_creation_input_tokens, key),
      count,
    );
    row(
      `${key}: input $ per run (${priceTable})`,
      pair((f) => f.input_usd, key),
      usd,
      `anthropic_wire_${key}_input_usd`,
    );
  }
  const medianOf = (values: readonly number[]) => (values.length > 0 ? summarize(values).median : Number.NaN);
  if (wire.per_step_ms.warrant.length > 0) {
    row(
      `wall time per tool step, ms (median of ${wire.per_step_ms.warrant.length} rounds)`,
      [medianOf(wire.per_step_ms.warrant), medianOf(wire.per_step_ms.create_react_agent)],
      (value) => decimals(value, 1),
    );
    row(
      `runs/s, 50 concurrent 5-step threads (median of ${wire.runs_per_second_50_concurrent.warrant.length} rounds)`,
      [
        medianOf(wire.runs_per_second_50_concurrent.warrant),
        medianOf(wire.runs_per_second_50_concurrent.create_react_agent),
      ],
      (value) => decimals(value, 1),
    );
  }
  return lines.join("\n");
}
