import os from "node:os";
import { describe, expect, it } from "vitest";
import { poolShare, restartDelayMs } from "../../src/cluster/pool-share.js";
import { DEFAULT_WORKERS_CAP, loadSettings } from "../../src/env.js";
import { isConfigError } from "../../src/errors.js";

const refusal = (source: Record<string, string>) => {
  try {
    loadSettings(source);
  } catch (error) {
    return isConfigError(error) ? { code: error.code, message: error.message } : error;
  }
  return undefined;
};

describe("WARRANT_WORKERS", () => {
  it("defaults to the available parallelism, at most the cap and at most the pool", () => {
    expect(loadSettings({}).workers).toBe(Math.min(os.availableParallelism(), DEFAULT_WORKERS_CAP, 10));
    expect(loadSettings({ WARRANT_PG_POOL_MAX: "1" }).workers).toBe(1);
    expect(loadSettings({ WARRANT_WORKERS: "1" }).workers).toBe(1);
    expect(loadSettings({ WARRANT_WORKERS: "3" }).workers).toBe(3);
  });

  it("refuses what is not a count of workers, or more workers than connections, with a typed config error", () => {
    for (const value of ["0", "-1", "two", "1.5", "65", "1000"])
      expect(refusal({ WARRANT_WORKERS: value }), value).toEqual({
        code: "config_invalid",
        message: expect.stringMatching(/^WARRANT_WORKERS /),
      });
    expect(refusal({ WARRANT_WORKERS: "4", WARRANT_PG_POOL_MAX: "3" })).toEqual({
      code: "config_invalid",
      message: expect.stringMatching(/WARRANT_WORKERS \(4\) must not exceed WARRANT_PG_POOL_MAX \(3\)/),
    });
  });
});

describe("poolShare", () => {
  it("splits the connection limits so the workers together stay within them", () => {
    const pool = { max: 10, backgroundMax: 2, waitMs: 5_000 };
    expect(poolShare(pool, 1)).toBe(pool);
    expect(poolShare(pool, 2)).toEqual({ max: 5, backgroundMax: 1, waitMs: 5_000 });
    expect(poolShare(pool, 3)).toEqual({ max: 3, backgroundMax: 0, waitMs: 5_000 });
    for (const workers of [2, 3, 4, 8, 10]) {
      const share = poolShare(pool, workers);
      expect(share.max * workers).toBeLessThanOrEqual(pool.max);
      expect(share.backgroundMax * workers).toBeLessThanOrEqual(pool.backgroundMax);
      expect(share.max).toBeGreaterThanOrEqual(1);
    }
  });

  it("restarts after 0.5 s, doubling to at most 30 s", () => {
    expect([1, 2, 3, 4, 7, 8, 20].map(restartDelayMs)).toEqual([500, 1_000, 2_000, 4_000, 30_000, 30_000, 30_000]);
  });
});
