/**
 * Model prices: `costOf` from recorded token counts, the lookup by model
 * name, and the `models` table of warrant.config.json.
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/policy/config.js";
import { costOf, priceOf } from "../../src/policy/pricing.js";

const MINI = { input_per_million_usd: 0.15, output_per_million_usd: 0.6 };

describe("costOf", () => {
  it("prices input and output tokens per million", () => {
    expect(costOf({ input_tokens: 1_000_000, output_tokens: 0 }, MINI)).toBeCloseTo(0.15, 10);
    expect(costOf({ input_tokens: 0, output_tokens: 1_000_000 }, MINI)).toBeCloseTo(0.6, 10);
    expect(costOf({ input_tokens: 2_000, output_tokens: 500 }, MINI)).toBeCloseTo((2_000 * 0.15 + 500 * 0.6) / 1e6, 12);
  });

  it("is 0 for no tokens and for a model without a price", () => {
    expect(costOf({ input_tokens: 0, output_tokens: 0 }, MINI)).toBe(0);
    expect(costOf({ input_tokens: 5_000, output_tokens: 5_000 }, undefined)).toBe(0);
  });
});

describe("priceOf", () => {
  it("finds a listed model by own property only", () => {
    const prices = { "gpt-4o-mini": MINI };
    expect(priceOf(prices, "gpt-4o-mini")).toEqual(MINI);
    expect(priceOf(prices, "llama3")).toBeUndefined();
    expect(priceOf(prices, "constructor")).toBeUndefined();
    expect(priceOf(prices, "__proto__")).toBeUndefined();
  });
});

describe("the models table in the config", () => {
  const base = { servers: {}, tools: {} };

  it("accepts the planner settings of a model (issue 23): allowed_tools, window, compaction budget", () => {
    const model = { ...MINI, allowed_tools: true, context_window_tokens: 32_768, compact_at_tokens: 16_000 };
    expect(parseConfig(JSON.stringify({ ...base, models: { local: model } })).models).toEqual({ local: model });
  });

  it("defaults to no prices", () => {
    expect(parseConfig(JSON.stringify(base)).models).toEqual({});
  });

  it("accepts prices per million tokens", () => {
    expect(parseConfig(JSON.stringify({ ...base, models: { "gpt-4o-mini": MINI } })).models).toEqual({
      "gpt-4o-mini": MINI,
    });
  });

  it.each([
    ["a negative price", { input_per_million_usd: -1, output_per_million_usd: 0.6 }],
    ["a missing output price", { input_per_million_usd: 0.15 }],
    ["an absurd price", { input_per_million_usd: 0.15, output_per_million_usd: 1e9 }],
    ["a price as text", { input_per_million_usd: "0.15", output_per_million_usd: 0.6 }],
    ["an unknown field", { ...MINI, per_request_usd: 1 }],
    ["allowed_tools as text", { ...MINI, allowed_tools: "yes" }],
    ["a window below 1,024 tokens", { ...MINI, context_window_tokens: 100 }],
    ["a compaction budget over the window", { ...MINI, context_window_tokens: 8_192, compact_at_tokens: 9_000 }],
    ["a compaction budget over the default window", { ...MINI, compact_at_tokens: 200_000 }],
  ])("refuses %s", (_label, price) => {
    expect(() => parseConfig(JSON.stringify({ ...base, models: { "gpt-4o-mini": price } }))).toThrow(/models/);
  });
});
