/**
 * Per-model settings in warrant.config.json (`models`, ModelPriceSchema):
 * the cache prices, caching style and tool-restriction style added for
 * issue 42, with wrong types, unknown styles and contradictions refused.
 */
import { describe, expect, it } from "vitest";
import { ModelPriceSchema } from "../../src/policy/config.js";
import { costOf } from "../../src/policy/pricing.js";

const BASE = { input_per_million_usd: 3, output_per_million_usd: 15 };

describe("per-model settings", () => {
  it("accepts cache prices, a caching style and a restriction style", () => {
    const parsed = ModelPriceSchema.parse({
      ...BASE,
      cached_input_per_million_usd: 0.3,
      cache_write_per_million_usd: 3.75,
      caching: "breakpoints",
      tool_restriction: "note",
      allowed_tools: false,
    });
    expect(parsed.caching).toBe("breakpoints");
  });

  it.each([
    ["an unknown caching style", { caching: "always" }],
    ["caching of the wrong type", { caching: true }],
    ["an unknown restriction style", { tool_restriction: "allowed_function_names" }],
    ["a contradiction of allowed_tools and tool_restriction", { allowed_tools: true, tool_restriction: "note" }],
    ["a negative cached price", { cached_input_per_million_usd: -1 }],
    ["a cache-write price as text", { cache_write_per_million_usd: "3.75" }],
    ["an absurd cache-write price", { cache_write_per_million_usd: 1e9 }],
    ["an unknown key", { cache_control: "ephemeral" }],
    ["a control character in a style", { caching: "breakpoints\u0000" }],
  ])("refuses %s", (_label, extra) => {
    expect(ModelPriceSchema.safeParse({ ...BASE, ...extra }).success).toBe(false);
  });

  it("prices cached and written input at their own rates, the rest at the input price", () => {
    const price = { ...BASE, cached_input_per_million_usd: 0.3, cache_write_per_million_usd: 3.75 };
    const usage = {
      input_tokens: 1_000_000,
      output_tokens: 0,
      cached_input_tokens: 500_000,
      cache_write_tokens: 250_000,
    };
    expect(costOf(usage, price)).toBeCloseTo(0.25 * 3 + 0.5 * 0.3 + 0.25 * 3.75, 10);
    // Without cache prices every input token costs the input price.
    expect(costOf(usage, BASE)).toBeCloseTo(3, 10);
    expect(costOf(usage, undefined)).toBe(0);
  });
});
