/**
 * Unit tests of the schedule logic: exact, even, larger-first allocation; the
 * capacity check; and the strict input schema (no coercion, integers only).
 */
import { describe, expect, it } from "vitest";
import {
  CalculateScheduleInputSchema,
  CalculateScheduleOutputSchema,
  allocateEvenly,
  calculateSchedule,
  type CalculateScheduleInput,
  type Schedule,
} from "../../tools/schedule/schedule.js";

function scheduleOf(input: CalculateScheduleInput): Schedule {
  const outcome = calculateSchedule(input);
  if (!outcome.ok) throw new Error(`unexpected error: ${outcome.error.message}`);
  return outcome.schedule;
}

const sum = (values: readonly number[]): number => values.reduce((total, value) => total + value, 0);

describe("allocateEvenly / calculateSchedule", () => {
  it("splits 121 over 3 days as [41, 40, 40]", () => {
    expect(scheduleOf({ total_minutes: 121, days: 3, daily_limit: 60 })).toEqual({
      allocation: [41, 40, 40],
      total_minutes: 121,
      days: 3,
      daily_limit: 60,
    });
  });

  it.each([
    [180, 3, [60, 60, 60]],
    [122, 3, [41, 41, 40]],
    [7, 7, [1, 1, 1, 1, 1, 1, 1]],
    [2, 4, [1, 1, 0, 0]],
    [1, 1, [1]],
    [100, 1, [100]],
  ])("splits %i over %i days as %j", (total, days, expected) => {
    expect(allocateEvenly(total, days)).toEqual(expected);
  });

  it("always sums exactly, differs by at most one, puts larger shares first and respects the limit", () => {
    let checked = 0;
    for (let days = 1; days <= 40; days += 1) {
      for (const total of [1, 2, 3, 59, 60, 61, 119, 121, 997, 1000, 1441, 9999, 100_000]) {
        const dailyLimit = Math.min(1440, Math.max(1, Math.ceil(total / days)));
        const outcome = calculateSchedule({ total_minutes: total, days, daily_limit: dailyLimit });
        if (total > days * dailyLimit) {
          expect(outcome.ok).toBe(false);
          continue;
        }
        if (!outcome.ok) throw new Error(outcome.error.message);
        const { allocation } = outcome.schedule;
        expect(allocation).toHaveLength(days);
        expect(sum(allocation)).toBe(total);
        expect(allocation.every((share) => Number.isInteger(share) && share >= 0 && share <= dailyLimit)).toBe(true);
        expect(Math.max(...allocation) - Math.min(...allocation)).toBeLessThanOrEqual(1);
        expect([...allocation].sort((a, b) => b - a)).toEqual(allocation);
        expect(CalculateScheduleOutputSchema.safeParse(outcome.schedule).success).toBe(true);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(300);
  });

  it("sums exactly over the extreme bounds", () => {
    expect(sum(allocateEvenly(100_000, 366))).toBe(100_000);
    expect(sum(allocateEvenly(100_000, 7))).toBe(100_000);
    expect(scheduleOf({ total_minutes: 100_000, days: 366, daily_limit: 274 }).allocation[0]).toBe(274);
  });

  it("accepts a total exactly at capacity", () => {
    expect(scheduleOf({ total_minutes: 180, days: 3, daily_limit: 60 }).allocation).toEqual([60, 60, 60]);
  });

  it("returns capacity_exceeded with the numbers in the message, without changing days or the limit", () => {
    const outcome = calculateSchedule({ total_minutes: 181, days: 3, daily_limit: 60 });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.error.code).toBe("capacity_exceeded");
    expect(Object.keys(outcome.error).sort()).toEqual(["code", "message"]);
    expect(outcome.error.message).toContain("181");
    expect(outcome.error.message).toContain("180");
    expect(outcome.error.message).toMatch(/daily_limit ≥ 61/);
    expect(outcome.error.message).toMatch(/days ≥ 4/);
  });

  it("flags suggestions beyond the schema maximum", () => {
    const outcome = calculateSchedule({ total_minutes: 100_000, days: 1, daily_limit: 1440 });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.error.message).toMatch(/above the maximum 1440/);
  });

  it("rejects impossible raw arguments to allocateEvenly", () => {
    expect(() => allocateEvenly(10, 0)).toThrow(RangeError);
    expect(() => allocateEvenly(1.5, 2)).toThrow(RangeError);
    expect(() => allocateEvenly(-1, 2)).toThrow(RangeError);
  });
});

describe("CalculateScheduleInputSchema", () => {
  const valid = { total_minutes: 121, days: 3, daily_limit: 60 };

  it("accepts valid integers and returns them unchanged", () => {
    expect(CalculateScheduleInputSchema.parse(valid)).toEqual(valid);
  });

  it.each([
    ["a boolean days", { ...valid, days: true }],
    ["a boolean total", { ...valid, total_minutes: false }],
    ["a float total", { ...valid, total_minutes: 120.5 }],
    ["a float limit", { ...valid, daily_limit: 59.9 }],
    ["a numeric string", { ...valid, days: "3" }],
    ["a negative total", { ...valid, total_minutes: -5 }],
    ["zero days", { ...valid, days: 0 }],
    ["too many days", { ...valid, days: 367 }],
    ["a total above the maximum", { ...valid, total_minutes: 100_001 }],
    ["a limit above a day", { ...valid, daily_limit: 1441 }],
    ["NaN", { ...valid, days: Number.NaN }],
    ["Infinity", { ...valid, total_minutes: Number.POSITIVE_INFINITY }],
    ["null", { ...valid, daily_limit: null }],
    ["an extra key", { ...valid, start_day: 1 }],
    ["a missing key", { total_minutes: 121, days: 3 }],
  ])("rejects %s", (_label, input) => {
    expect(CalculateScheduleInputSchema.safeParse(input).success).toBe(false);
  });
});
