/** The bench's arithmetic: quantiles, per-step slopes, ratios and the rotation that interleaves variants. */
import { describe, expect, it } from "vitest";
import { cacheFigures, growthFor } from "../../bench/prompt-cache.js";
import { median, pairedRatios, perStepSlopes, quantile, ratio, rotate, summarize } from "../../bench/stats.js";

describe("quantile and median", () => {
  it("takes the middle sample of an odd count and the mean of the two middle ones of an even count, whatever the order", () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
  });

  it("interpolates between order statistics and clamps q to [0, 1]", () => {
    const samples = [10, 20, 30, 40, 50];
    expect(quantile(samples, 0)).toBe(10);
    expect(quantile(samples, 1)).toBe(50);
    expect(quantile(samples, 0.1)).toBeCloseTo(14);
    expect(quantile(samples, 0.9)).toBeCloseTo(46);
    expect(quantile(samples, -1)).toBe(10);
    expect(quantile(samples, 2)).toBe(50);
  });

  it("does not reorder the caller's samples", () => {
    const samples = [3, 1, 2];
    median(samples);
    expect(samples).toEqual([3, 1, 2]);
  });

  it("refuses to summarize no samples", () => {
    expect(() => median([])).toThrow(/no samples/);
  });

  it("summarizes as median, p10, p90 and count", () => {
    expect(summarize([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])).toEqual({ median: 6, p10: 2, p90: 10, n: 11 });
  });
});

describe("perStepSlopes", () => {
  it("gives each pair's marginal cost per step, so a fixed cost per run cancels out", () => {
    // 30 ms fixed + 5 ms per step, then 30 ms fixed + 8 ms per step.
    expect(perStepSlopes([40, 46], [90, 126], 2, 12)).toEqual([5, 8]);
  });

  it("can come out negative when a long run was faster than its short partner (noise is reported, not hidden)", () => {
    expect(perStepSlopes([100], [90], 2, 12)).toEqual([-1]);
  });

  it("refuses unpaired samples and a long thread that is not longer", () => {
    expect(() => perStepSlopes([1, 2], [3], 2, 12)).toThrow(/unpaired/);
    expect(() => perStepSlopes([1], [3], 12, 12)).toThrow(/longer/);
  });
});

describe("ratio", () => {
  it("divides, and gives null without a base to compare against", () => {
    expect(ratio(3, 12)).toBe(0.25);
    expect(ratio(3, 0)).toBeNull();
    expect(ratio(null, 2)).toBeNull();
    expect(ratio(2, undefined)).toBeNull();
  });
});

describe("rotate", () => {
  it("starts each round with the next item, wrapping around", () => {
    const items = ["a", "b", "c"];
    expect(rotate(items, 0)).toEqual(["a", "b", "c"]);
    expect(rotate(items, 1)).toEqual(["b", "c", "a"]);
    expect(rotate(items, 5)).toEqual(["c", "a", "b"]);
    expect(rotate(items, -1)).toEqual(["c", "a", "b"]);
    expect(rotate([], 3)).toEqual([]);
  });
});

describe("pairedRatios", () => {
  it("divides within each round, skips a round without a reference, and refuses unpaired samples", () => {
    expect(pairedRatios([2, 6, 3], [4, 2, 0])).toEqual([0.5, 3]);
    expect(median(pairedRatios([10, 1, 4], [5, 1, 4]))).toBe(1);
    expect(() => pairedRatios([1], [1, 2])).toThrow(/unpaired/);
  });
});

describe("cacheFigures: the append-only ceiling", () => {
  const system = { role: "system", content: "rules" };
  const user = { role: "user", content: "question" };
  const step = (index: number) => ({ role: "tool", content: `result number ${index}`, tool_call_id: `c${index}` });
  it("counts requests that start with the whole previous one, and what such requests could reuse at most", () => {
    const growing = [
      { messages: [system, user] },
      { messages: [system, user, step(1)] },
      { messages: [system, user, step(1), step(2)] },
    ];
    const grown = cacheFigures(growing);
    expect(grown.requests_extending_previous).toBe(2);
    expect(grown.append_only_ceiling_tokens).toBe(
      (grown.per_request_input_tokens[0] ?? 0) + (grown.per_request_input_tokens[1] ?? 0),
    );
    // Each reuses all of the previous request but the token where the join merges.
    expect(grown.append_only_ceiling_tokens - grown.prefix_reused_tokens).toBeLessThanOrEqual(2);
    // A request whose first message changed extends nothing and reuses little of its ceiling.
    const rewritten = cacheFigures([
      { messages: [system, user] },
      { messages: [{ role: "system", content: "other" }, user, step(1)] },
    ]);
    expect(rewritten.requests_extending_previous).toBe(0);
    expect(rewritten.prefix_reused_tokens).toBeLessThan(rewritten.append_only_ceiling_tokens);
  });

  it("gives the ceiling as a share of the input: all of it but the last request, for requests that only grow", () => {
    const grown = cacheFigures([
      { messages: [system, user] },
      { messages: [system, user, step(1)] },
      { messages: [system, user, step(1), step(2)] },
    ]);
    const lengths = grown.per_request_input_tokens;
    const last = lengths.at(-1) ?? 0;
    expect(grown.append_only_ceiling_ratio).toBeCloseTo(1 - last / grown.input_tokens, 12);
    expect(grown.growth_tokens_per_request).toBe((last - (lengths[0] ?? 0)) / 2);
  });
});

describe("growthFor: the growth per request at which an append-only thread reaches a reuse share", () => {
  it("is 0.0815× the first request for 31 requests at 95%, and exactly meets the share there", () => {
    const growth = growthFor(0.95, 534, 31) ?? Number.NaN;
    expect(growth / 534).toBeCloseTo(0.55 / 6.75, 10);
    expect(growth).toBeCloseTo(43.5, 1);
    const lengths = Array.from({ length: 31 }, (_, index) => 534 + index * growth);
    const total = lengths.reduce((sum, length) => sum + length, 0);
    expect(1 - (lengths.at(-1) ?? 0) / total).toBeCloseTo(0.95, 10);
    // A little more growth and the share falls below the target.
    const faster = Array.from({ length: 31 }, (_, index) => 534 + index * (growth + 1));
    expect(1 - (faster.at(-1) ?? 0) / faster.reduce((sum, length) => sum + length, 0)).toBeLessThan(0.95);
  });

  it("is null where no growth reaches the share (under 20 requests at 95%) and where any growth does (40 or more)", () => {
    // 20 requests that never grow reuse exactly 19/20.
    expect(growthFor(0.95, 534, 20)).toBeCloseTo(0, 9);
    expect(growthFor(0.95, 534, 19)).toBeNull();
    expect(growthFor(0.95, 534, 10)).toBeNull();
    expect(growthFor(0.95, 534, 40)).toBeNull();
    expect(growthFor(0.95, 534, 21)).toBeGreaterThan(0);
  });
});

describe("Anthropic pricing of a thread (bench/prompt-cache.ts)", () => {
  const body = (messages: number) => ({
    tools: [{ type: "function", function: { name: "t", description: "x ".repeat(1200), parameters: {} } }],
    messages: Array.from({ length: messages }, (_, index) => ({ role: "user", content: `message ${index}` })),
  });
  it("bills a thread without breakpoints in full and reads a growing stable prefix at 10% with them", () => {
    const bodies = [body(1), body(2), body(3)];
    const plain = cacheFigures(bodies, false);
    expect(plain.anthropic_effective_input_tokens).toBe(plain.input_tokens);
    const marked = cacheFigures(bodies, true);
    expect(marked.anthropic_effective_input_tokens).toBeLessThan(0.6 * plain.input_tokens);
    expect(marked.anthropic_effective_input_tokens).toBeGreaterThan(0);
  });
});
