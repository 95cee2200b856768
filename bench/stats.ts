/**
 * The arithmetic of the bench: medians, spreads, marginal cost per step and
 * ratios. Pure, so it is unit-tested on its own.
 */

/** The q-quantile (0 ≤ q ≤ 1) by linear interpolation between order statistics. */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) throw new Error("quantile of no samples");
  const sorted = [...samples].sort((a, b) => a - b);
  const position = Math.min(1, Math.max(0, q)) * (sorted.length - 1);
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  return sorted[lower]! + (sorted[upper]! - sorted[lower]!) * (position - lower);
}

export function median(samples: readonly number[]): number {
  return quantile(samples, 0.5);
}

/** A median with the spread around it: the 10th and 90th percentiles. */
export interface Summary {
  median: number;
  p10: number;
  p90: number;
  n: number;
}

export function summarize(samples: readonly number[]): Summary {
  return { median: median(samples), p10: quantile(samples, 0.1), p90: quantile(samples, 0.9), n: samples.length };
}

/**
 * Marginal cost per step from paired runs of a short and a long thread
 * (one pair per round): each pair's `(long - short) / (longSteps - shortSteps)`.
 * Fixed costs (the run's start, its final answer) cancel out.
 */
export function perStepSlopes(
  short: readonly number[],
  long: readonly number[],
  shortSteps: number,
  longSteps: number,
): number[] {
  if (short.length !== long.length) throw new Error(`unpaired samples: ${short.length} short, ${long.length} long`);
  if (longSteps <= shortSteps)
    throw new Error(`long thread (${longSteps} steps) must be longer than short (${shortSteps})`);
  return short.map((value, index) => (long[index]! - value) / (longSteps - shortSteps));
}

/** `value / base`, or null when there is nothing to compare against. */
export function ratio(value: number | null | undefined, base: number | null | undefined): number | null {
  if (value === null || value === undefined || base === null || base === undefined || base === 0) return null;
  return value / base;
}

/**
 * Per-round ratios `value[i] / base[i]` of paired samples (both measured in
 * round i, one after the other): on a shared machine the load moves between
 * rounds, so the median of these is steadier than the ratio of two medians.
 */
export function pairedRatios(values: readonly number[], base: readonly number[]): number[] {
  if (values.length !== base.length) throw new Error(`unpaired samples: ${values.length} and ${base.length}`);
  return values.flatMap((value, index) => {
    const reference = base[index]!;
    return reference > 0 ? [value / reference] : [];
  });
}

/** Rotates `items` left by `round` places: each round starts with a different variant, so none is always first. */
export function rotate<T>(items: readonly T[], round: number): T[] {
  if (items.length === 0) return [];
  const shift = ((round % items.length) + items.length) % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}
