/**
 * What a planner's model calls cost. Prices come from `warrant.config.json`
 * (`models`: USD per million input and output tokens); the cost of a reply
 * is a pure function of its recorded token counts and that price.
 */

/** USD per million tokens of a model, as providers publish them (validated by `ModelPriceSchema` in config). */
export interface ModelPrice {
  input_per_million_usd: number;
  output_per_million_usd: number;
}

/**
 * The cost in USD of one reply's tokens. No price (a local model, or one
 * the config does not list) costs 0: the cost budget then never stops a run,
 * and the token budget still does.
 */
export function costOf(usage: { input_tokens: number; output_tokens: number }, price: ModelPrice | undefined): number {
  if (!price) return 0;
  return (
    (usage.input_tokens * price.input_per_million_usd + usage.output_tokens * price.output_per_million_usd) / 1_000_000
  );
}

/** The configured price of a model, looked up by own property (the name is configuration, but never trust `in`). */
export function priceOf<T extends ModelPrice>(prices: Record<string, T>, model: string): T | undefined {
  return Object.hasOwn(prices, model) ? prices[model] : undefined;
}
