import { describe, expect, it } from "vitest";
import type { Budgets } from "../../src/env.js";
import { firstStop, STOP_CONDITIONS, STOP_NAMES, type StopFacts } from "../../src/graph/stop-conditions.js";
import { ZERO_USAGE } from "../../src/policy/usage.js";

const budgets: Budgets = {
  model_turns: 10,
  tool_calls: 5,
  deadline_ms: 60_000,
  tokens: 100_000,
  cost_usd: 1,
  max_repeats: 2,
  no_progress_steps: 3,
};

const facts = (over: Partial<StopFacts> = {}): StopFacts => ({
  state: { proposals: [], call_results: [], usage: ZERO_USAGE },
  verdict: { type: "tool_calls" },
  decisions: [],
  results: [],
  evidence: [],
  stepsWithoutProgress: 0,
  run: null,
  budgets,
  now: () => 0,
  waitedMs: 0,
  ...over,
});

describe("stop conditions", () => {
  it("are one named list, tested in a fixed order", () => {
    expect(STOP_CONDITIONS.map((condition) => condition.name)).toEqual([...STOP_NAMES]);
  });

  it("let the run go on when none holds", () => {
    expect(firstStop(facts())).toBeUndefined();
  });

  it("name the condition that held, with the termination code the trace shows", () => {
    const unsupported = firstStop(
      facts({ verdict: { type: "final", answer: "a", citations: ["e1"], abstained: true } }),
    );
    expect(unsupported).toMatchObject({ condition: "unsupported_citation", status: "failed" });
    expect(unsupported?.reason.code).toBe("unsupported_citation");
    const answered = firstStop(facts({ verdict: { type: "final", answer: "a", citations: [], abstained: false } }));
    expect(answered).toMatchObject({ condition: "final_answer", reason: { code: "final_answer" } });
    expect(answered?.result).toEqual({ answer: "a", citations: [], abstained: false });
    const stalled = firstStop(facts({ stepsWithoutProgress: budgets.no_progress_steps }));
    expect(stalled).toMatchObject({ condition: "no_progress", status: "stopped", reason: { code: "no_progress" } });
  });

  it("read the clock only when the run budget is asked", () => {
    let reads = 0;
    firstStop(facts({ verdict: { type: "needs_human", reason: "ask" }, now: () => ++reads }));
    expect(reads).toBe(0);
  });
});
