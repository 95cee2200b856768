/**
 * The bench's price table, in `warrant.config.json`'s `models` shape: list
 * prices of the models each wire stands for (gpt-5 on the OpenAI wire,
 * claude-sonnet-4-5 on the Anthropic wire, 5-minute cache writes). Warrant's
 * planner is given it as the config gives it (by full `provider:model` name),
 * and the bench prices every variant's reported usage with `costOf`.
 */
import type { ModelPrice } from "../src/policy/pricing.js";

export const BENCH_PRICES: Readonly<Record<"openai" | "anthropic", ModelPrice>> = {
  openai: { input_per_million_usd: 1.25, cached_input_per_million_usd: 0.125, output_per_million_usd: 10 },
  anthropic: {
    input_per_million_usd: 3,
    cached_input_per_million_usd: 0.3,
    cache_write_per_million_usd: 3.75,
    output_per_million_usd: 15,
  },
};
