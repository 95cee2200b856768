/**
 * What a planner's model calls cost. Prices come from `warrant.config.json`
 * (`models`: USD per million input, cached input, cache-write and output
 * tokens); the cost of a reply is a pure function of its recorded token
 * counts and that price.
 */

/** USD per million tokens of a model, as providers publish them (validated by `ModelPriceSchema` in config). */
export interface ModelPrice {
  input_per_million_usd: number;
  output_per_million_usd: number;
  /** Input read from the prompt cache; absent: billed as input. */
  cached_input_per_million_usd?: number;
  /** Input written to the prompt cache (Anthropic's cache writes); absent: billed as input. */
  cache_write_per_million_usd?: number;
}

/** One reply's token counts: `input_tokens` is all input, cached reads and cache writes included. */
export interface TokenCounts {
  input_tokens: number;
  output_tokens: number;
  /** Part of `input_tokens` read from the prompt cache. */
  cached_input_tokens?: number;
  /** Part of `input_tokens` written to the prompt cache. */
  cache_write_tokens?: number;
}

/**
 * The cost in USD of one reply's tokens. No price (a local model, or one
 * the config does not list) costs 0: the cost budget then never stops a run,
 * and the token budget still does. Cached and written tokens are priced at
 * their own rates; the rest of the input at the input price (never below 0,
 * whatever the counts say: they were checked, but the price must not go negative).
 */
export function costOf(usage: TokenCounts, price: ModelPrice | undefined): number {
  if (!price) return 0;
  const cached = usage.cached_input_tokens ?? 0;
  const written = usage.cache_write_tokens ?? 0;
  const uncached = Math.max(0, usage.input_tokens - cached - written);
  return (
    (uncached * price.input_per_million_usd +
      cached * (price.cached_input_per_million_usd ?? price.input_per_million_usd) +
      written * (price.cache_write_per_million_usd ?? price.input_per_million_usd) +
      usage.output_tokens * price.output_per_million_usd) /
    1_000_000
  );
}

/** The configured price of a model, looked up by own property (the name is configuration, but never trust `in`). */
export function priceOf<T extends ModelPrice>(prices: Record<string, T>, model: string): T | undefined {
  return Object.hasOwn(prices, model) ? prices[model] : undefined;
}
