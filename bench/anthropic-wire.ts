/**
 * `npm run bench` on the Anthropic Messages wire: Warrant
 * (`WARRANT_MODEL=anthropic:bench-scripted`, its `cache_control` breakpoints)
 * and `createReactAgent` bound with `ChatAnthropic` and the MCP adapters'
 * tools, no cache settings, both against the scripted endpoint's
 * `/v1/messages` over HTTP (bench/scripted-endpoint.ts). The endpoint plays
 * Anthropic's prompt cache from the marks each request carries
 * (bench/anthropic-cache.ts) and reports usage as Anthropic does; each
 * thread's input is priced from that usage with the bench's price table
 * (`costOf`: cache reads at $0.30/M, writes at $3.75/M, the rest at $3/M).
 *
 *   prompt cache   research_30 and all_tools_10, as on the OpenAI wire
 *   per step       wall time per tool step, the slope between a 2- and a
 *                  10-step thread, rounds interleaved (BENCH_ANTHROPIC_RUNS, default 30)
 *   throughput     runs/s of 50 concurrent 5-step threads
 *                  (BENCH_ANTHROPIC_THROUGHPUT_ROUNDS, default 3)
 */
import { randomUUID } from "node:crypto";
import type { Settings } from "../src/env.js";
import type { Database } from "../src/stores/open-database.js";
import { costOf } from "../src/policy/pricing.js";
import type { AnthropicUsage } from "./anthropic-cache.js";
import { ALL_TOOLS_STEPS, RESEARCH_STEPS, listedStandIns } from "./prompt-cache-scenarios.js";
import { BENCH_PRICES } from "./prices.js";
import type { ScriptedEndpoint } from "./scripted-endpoint.js";
import { benchRequest } from "./script.js";
import { perStepSlopes, ratio, rotate, summarize } from "./stats.js";
import { everyServerConfig, retryingStart } from "./tool-tokens.js";
import { buildAnthropicVariants, type Variant } from "./variants.js";

export const ANTHROPIC_VARIANTS = ["warrant", "create_react_agent"] as const;
export type AnthropicVariantName = (typeof ANTHROPIC_VARIANTS)[number];
export type PerAnthropicVariant<T> = Record<AnthropicVariantName, T>;

/** One thread's input on the Anthropic wire, from the usage the endpoint reported. */
export interface AnthropicThreadFigures {
  requests: number;
  /** All input: uncached + cache reads + cache writes. */
  input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  /** `costOf` of the input at the bench's Anthropic price (output not counted). */
  input_usd: number;
  /** Requests that carried at least one `cache_control` mark. */
  requests_with_cache_control: number;
  /** Every request carried the user's request text. */
  request_always_seen: boolean;
}

export interface AnthropicWire {
  prompt_cache: {
    research_30: PerAnthropicVariant<AnthropicThreadFigures>;
    all_tools_10: PerAnthropicVariant<AnthropicThreadFigures>;
  };
  per_step_ms: PerAnthropicVariant<number[]>;
  runs_per_second_50_concurrent: PerAnthropicVariant<number[]>;
}

function positiveInteger(name: string, fallback: number): number {
  const text = process.env[name]?.trim();
  if (text === undefined || text === "") return fallback;
  if (!/^[1-9][0-9]*$/.test(text)) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(text)}`);
  return Number(text);
}

const RUNS = positiveInteger("BENCH_ANTHROPIC_RUNS", 30);
const WARMUP_ROUNDS = 3;
const SHORT_STEPS = 2;
const LONG_STEPS = 10;
const THROUGHPUT_ROUNDS = positiveInteger("BENCH_ANTHROPIC_THROUGHPUT_ROUNDS", 3);
const CONCURRENT = 50;
const THROUGHPUT_STEPS = 5;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((part) => (isRecord(part) && typeof part["text"] === "string" ? part["text"] : "")).join("")
      : "";

/** The figures of one thread from its request bodies and the usage reported for each. */
export function threadFigures(
  bodies: readonly Record<string, unknown>[],
  usages: readonly AnthropicUsage[],
  request: string,
): AnthropicThreadFigures {
  const figures: AnthropicThreadFigures = {
    requests: bodies.length,
    input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
    input_usd: 0,
    requests_with_cache_control: bodies.filter((body) => JSON.stringify(body).includes('"cache_control"')).length,
    request_always_seen: bodies.every((body) =>
      (Array.isArray(body["messages"]) ? body["messages"] : []).some(
        (message) => isRecord(message) && message["role"] === "user" && textOf(message["content"]) === request,
      ),
    ),
  };
  for (const usage of usages) {
    const input = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
    figures.input_tokens += input;
    figures.cache_read_input_tokens += usage.cache_read_input_tokens;
    figures.cache_creation_input_tokens += usage.cache_creation_input_tokens;
    figures.input_usd += costOf(
      {
        input_tokens: input,
        output_tokens: 0,
        cached_input_tokens: usage.cache_read_input_tokens,
        cache_write_tokens: usage.cache_creation_input_tokens,
      },
      BENCH_PRICES.anthropic,
    );
  }
  return figures;
}

async function cacheScenario(
  variants: readonly Variant[],
  endpoint: ScriptedEndpoint,
  steps: number,
  research: boolean,
): Promise<PerAnthropicVariant<AnthropicThreadFigures>> {
  const figures: Partial<PerAnthropicVariant<AnthropicThreadFigures>> = {};
  for (const variant of variants) {
    endpoint.record();
    await variant.run(steps, randomUUID(), research);
    const bodies = endpoint.recorded();
    const usages = endpoint.recordedAnthropicUsage();
    if (usages.length !== bodies.length) throw new Error(`${variant.name}: a request missed the Anthropic wire`);
    figures[variant.name as AnthropicVariantName] = threadFigures(bodies, usages, benchRequest(steps, research));
  }
  return figures as PerAnthropicVariant<AnthropicThreadFigures>;
}

async function timedRun(variant: Variant, steps: number): Promise<number> {
  const started = performance.now();
  await variant.run(steps, randomUUID());
  return performance.now() - started;
}

/**
 * The Anthropic wire's figures. `part`: everything, or the prompt-cache
 * scenarios alone (`--only prompt-cache`).
 */
export async function measureAnthropicWire(
  settings: Settings,
  database: Database,
  endpoint: ScriptedEndpoint,
  progress: (line: string) => void,
  part: "all" | "prompt-cache" = "all",
): Promise<AnthropicWire> {
  const empty = (): PerAnthropicVariant<number[]> => ({ warrant: [], create_react_agent: [] });
  const built: Variant[] = [];
  try {
    built.push(...(await retryingStart(() => buildAnthropicVariants(settings, database, endpoint))));
    const research_30 = await cacheScenario(built, endpoint, RESEARCH_STEPS, true);
    const config = await everyServerConfig();
    const standIns = await retryingStart(() => listedStandIns(new Set(["search_notes", "read_note"])));
    const everyTool = await retryingStart(() => buildAnthropicVariants(settings, database, endpoint, config, standIns));
    built.push(...everyTool);
    const all_tools_10 = await cacheScenario(everyTool, endpoint, ALL_TOOLS_STEPS, false);
    progress("anthropic wire: prompt cache measured");
    const result: AnthropicWire = {
      prompt_cache: { research_30, all_tools_10 },
      per_step_ms: empty(),
      runs_per_second_50_concurrent: empty(),
    };
    if (part === "prompt-cache") return result;
    const variants = built.slice(0, 2);
    for (let round = 0; round < WARMUP_ROUNDS + RUNS; round += 1) {
      for (const variant of rotate(variants, round)) {
        const short = await timedRun(variant, SHORT_STEPS);
        const long = await timedRun(variant, LONG_STEPS);
        if (round >= WARMUP_ROUNDS)
          result.per_step_ms[variant.name as AnthropicVariantName].push(
            ...perStepSlopes([short], [long], SHORT_STEPS, LONG_STEPS),
          );
      }
    }
    progress(`anthropic wire: per-step ${RUNS} rounds`);
    for (let round = 0; round < THROUGHPUT_ROUNDS; round += 1) {
      for (const variant of rotate(variants, round)) {
        const started = performance.now();
        await Promise.all(Array.from({ length: CONCURRENT }, () => variant.run(THROUGHPUT_STEPS, randomUUID())));
        result.runs_per_second_50_concurrent[variant.name as AnthropicVariantName].push(
          CONCURRENT / ((performance.now() - started) / 1000),
        );
      }
      progress(`anthropic wire: throughput round ${round + 1}/${THROUGHPUT_ROUNDS}`);
    }
    return result;
  } finally {
    for (const variant of built) await variant.close();
  }
}

/** Medians and spreads of the timed figures. */
export function anthropicWireSpread(wire: AnthropicWire) {
  const each = (values: PerAnthropicVariant<number[]>) => ({
    warrant: values.warrant.length > 0 ? summarize(values.warrant) : null,
    create_react_agent: values.create_react_agent.length > 0 ? summarize(values.create_react_agent) : null,
  });
  return {
    per_step_ms: each(wire.per_step_ms),
    runs_per_second_50_concurrent: each(wire.runs_per_second_50_concurrent),
  };
}

/** The Anthropic targets, on the dollars each thread's reported usage costs. */
export function anthropicWireTargets(
  wire: Pick<AnthropicWire, "prompt_cache">,
): { figure: string; rule: string; value: number | null; met: boolean | null }[] {
  const goal = (key: "research_30" | "all_tools_10", limit: number) => {
    const figures = wire.prompt_cache[key];
    const value = ratio(figures.warrant.input_usd, figures.create_react_agent.input_usd);
    return {
      figure: `anthropic_wire_${key}_input_usd`,
      rule: `warrant ≤ ${limit}× create_react_agent`,
      value,
      met: value === null ? null : value <= limit,
    };
  };
  return [goal("research_30", 0.4), goal("all_tools_10", 0.3)];
}
