/**
 * Run budgets (deadline, tokens, model turns, tool calls) and the retry
 * matrix with its backoff (DESIGN §6).
 */
import { describe, expect, it } from "vitest";
import type { Budgets } from "../../src/env.js";
import { TOOL_ERROR_CODES } from "../../src/errors.js";
import { exhaustedBudget, remainingToolCalls } from "../../src/policy/budgets.js";
import { MAX_WRITE_SENDS, RISKS } from "../../src/policy/contracts.js";
import { backoffMs, isRetryable, RETRY_POLICIES } from "../../src/execution/retry-policies.js";
import { done, failed, withRetries } from "../../src/retry.js";
import type { Usage } from "../../src/policy/usage.js";

const BUDGETS: Budgets = {
  model_turns: 4,
  tool_calls: 6,
  deadline_ms: 10_000,
  tokens: 1_000,
  cost_usd: 0.5,
  max_repeats: 2,
  no_progress_steps: 3,
};
const STARTED_AT = "2030-01-01T00:00:00.000Z";
const START = Date.parse(STARTED_AT);

function usage(overrides: Partial<Usage> = {}): Usage {
  return { model_calls: 0, tool_calls: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0, elapsed_ms: 0, ...overrides };
}

describe("exhaustedBudget", () => {
  it("is undefined while every budget has room", () => {
    expect(
      exhaustedBudget(
        usage({ model_calls: 3, input_tokens: 600, output_tokens: 399 }),
        BUDGETS,
        STARTED_AT,
        START + 9_999,
      ),
    ).toBeUndefined();
  });

  it("reports the deadline once elapsed time reaches deadline_ms", () => {
    expect(exhaustedBudget(usage(), BUDGETS, STARTED_AT, START + 9_999)).toBeUndefined();
    expect(exhaustedBudget(usage(), BUDGETS, STARTED_AT, START + 10_000)).toBe("deadline");
  });

  it("reports tokens once input plus output reach the limit", () => {
    expect(exhaustedBudget(usage({ input_tokens: 999 }), BUDGETS, STARTED_AT, START)).toBeUndefined();
    expect(exhaustedBudget(usage({ input_tokens: 600, output_tokens: 400 }), BUDGETS, STARTED_AT, START)).toBe(
      "tokens",
    );
  });

  it("reports model_turns once model calls reach the limit", () => {
    expect(exhaustedBudget(usage({ model_calls: 3 }), BUDGETS, STARTED_AT, START)).toBeUndefined();
    expect(exhaustedBudget(usage({ model_calls: 4 }), BUDGETS, STARTED_AT, START)).toBe("model_turns");
  });

  it("reports cost once the run's cost in USD reaches the limit", () => {
    expect(exhaustedBudget(usage({ cost_usd: 0.4999 }), BUDGETS, STARTED_AT, START)).toBeUndefined();
    expect(exhaustedBudget(usage({ cost_usd: 0.5 }), BUDGETS, STARTED_AT, START)).toBe("cost");
  });

  it("checks in the order deadline, tokens, cost, model_turns", () => {
    const everything = usage({ model_calls: 4, input_tokens: 1_000, cost_usd: 1 });
    expect(exhaustedBudget(everything, BUDGETS, STARTED_AT, START + 10_000)).toBe("deadline");
    expect(exhaustedBudget(everything, BUDGETS, STARTED_AT, START)).toBe("tokens");
    expect(exhaustedBudget(usage({ model_calls: 4, input_tokens: 999, cost_usd: 1 }), BUDGETS, STARTED_AT, START)).toBe(
      "cost",
    );
    expect(exhaustedBudget(usage({ model_calls: 4, input_tokens: 999 }), BUDGETS, STARTED_AT, START)).toBe(
      "model_turns",
    );
  });

  it("does not stop the run for tool calls (checked per call in authorize)", () => {
    expect(exhaustedBudget(usage({ tool_calls: 100 }), BUDGETS, STARTED_AT, START)).toBeUndefined();
  });
});

describe("remainingToolCalls", () => {
  it("is the limit minus the calls made, never negative", () => {
    expect(remainingToolCalls(usage(), BUDGETS)).toBe(6);
    expect(remainingToolCalls(usage({ tool_calls: 5 }), BUDGETS)).toBe(1);
    expect(remainingToolCalls(usage({ tool_calls: 6 }), BUDGETS)).toBe(0);
    expect(remainingToolCalls(usage({ tool_calls: 9 }), BUDGETS)).toBe(0);
  });
});

describe("isRetryable", () => {
  it("retries exactly the transient codes of read tools", () => {
    const retryable = TOOL_ERROR_CODES.filter((code) => isRetryable(code, "read"));
    expect(retryable.sort()).toEqual(["tool_timeout", "transient_error"]);
  });

  it.each(RISKS.filter((risk) => risk !== "read"))("never retries a %s tool, not even a transient error", (risk) => {
    for (const code of TOOL_ERROR_CODES) expect(isRetryable(code, risk)).toBe(false);
  });

  it.each([
    "invalid_arguments",
    "access_denied",
    "not_found",
    "protocol_error",
    "outcome_unknown",
    "budget_exhausted",
  ] as const)("never retries %s, even for a read tool", (code) => {
    expect(isRetryable(code, "read")).toBe(false);
  });
});

describe("backoffMs", () => {
  it("scales the ceiling 100 ms · 2^(attempt-1) by the random draw", () => {
    const almostOne = () => 0.999_999;
    expect(backoffMs(1, almostOne)).toBe(99);
    expect(backoffMs(2, almostOne)).toBe(199);
    expect(backoffMs(3, almostOne)).toBe(399);
    expect(backoffMs(4, () => 0.5)).toBe(400);
  });

  it("is zero for a zero draw (full jitter)", () => {
    for (const attempt of [1, 2, 5, 10]) expect(backoffMs(attempt, () => 0)).toBe(0);
  });

  it("caps the ceiling at 2 s", () => {
    expect(backoffMs(5, () => 0.5)).toBe(800);
    expect(backoffMs(6, () => 0.5)).toBe(1_000); // 3 200 capped to 2 000
    expect(backoffMs(30, () => 0.999_999)).toBe(1_999);
  });

  it("stays within [0, ceiling) for every draw in [0, 1)", () => {
    for (let attempt = 1; attempt <= 8; attempt += 1) {
      const ceiling = Math.min(2_000, 100 * 2 ** (attempt - 1));
      for (const draw of [0, 0.1, 0.25, 0.5, 0.75, 0.999_999]) {
        const delay = backoffMs(attempt, () => draw);
        expect(Number.isInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThan(ceiling);
      }
    }
  });

  it("calls the injected random exactly once", () => {
    let calls = 0;
    backoffMs(3, () => {
      calls += 1;
      return 0.3;
    });
    expect(calls).toBe(1);
  });
});

describe("withRetries: one loop, policies as data", () => {
  const noWait = { wait: async () => undefined };

  it("stops at the first done attempt, and retries a failure only while the policy allows", async () => {
    const seen: number[] = [];
    const value = await withRetries(
      RETRY_POLICIES.read(3),
      async (attempt) => {
        seen.push(attempt);
        return attempt < 2 ? failed("tool_timeout", `timeout ${attempt}`) : done(`ok ${attempt}`);
      },
      noWait,
    );
    expect({ value, seen }).toEqual({ value: "ok 2", seen: [1, 2] });
  });

  it("returns the last failure once maxAttempts are used, and never retries what retryOn refuses", async () => {
    let tries = 0;
    const exhausted = await withRetries(
      RETRY_POLICIES.read(3),
      async (attempt) => {
        tries += 1;
        return failed("transient_error", attempt);
      },
      noWait,
    );
    expect({ exhausted, tries }).toEqual({ exhausted: 3, tries: 3 });
    tries = 0;
    const business = await withRetries(
      RETRY_POLICIES.read(3),
      async (attempt) => {
        tries += 1;
        return failed("not_found", attempt);
      },
      noWait,
    );
    expect({ business, tries }).toEqual({ business: 1, tries: 1 });
  });

  it("a write is sent again only after not_applied, and a recovered write counts the sends already made", async () => {
    const write = RETRY_POLICIES.write();
    expect(write.maxAttempts).toBe(MAX_WRITE_SENDS);
    expect(["tool_timeout", "outcome_unknown", "transient_error"].some((code) => write.retryOn(code as never))).toBe(
      false,
    );
    const fresh: number[] = [];
    await withRetries(
      write,
      async (attempt) => {
        fresh.push(attempt);
        return failed("not_applied", attempt);
      },
      noWait,
    );
    expect(fresh).toEqual([1, 2]);
    const recovered: number[] = [];
    await withRetries(
      write,
      async (attempt) => {
        recovered.push(attempt);
        return failed("not_applied", attempt);
      },
      { ...noWait, firstAttempt: 2 },
    );
    expect(recovered).toEqual([2]);
  });

  it("a status check is asked again while its server is unavailable, with the policy's backoff between tries", async () => {
    const waits: number[] = [];
    const status = { ...RETRY_POLICIES.status(3), backoffMs: (attempt: number) => attempt * 10 };
    await withRetries(status, async (attempt) => failed("server_unavailable", attempt), {
      wait: async (ms) => waits.push(ms),
    });
    expect(waits).toEqual([10, 20]);
    expect(status.retryOn("protocol_error")).toBe(false);
  });
});
