/** The CLI's run summary says which planner spent what: a rules run asked no model. */
import { describe, expect, it } from "vitest";
import { formatRun } from "../../src/cli/format.js";
import { ZERO_USAGE } from "../../src/policy/usage.js";

const usageLine = (usage: typeof ZERO_USAGE) =>
  formatRun("t1", { status: "completed", usage }, undefined, undefined)
    .split("\n")
    .find((line) => line.startsWith("usage: "));

describe("formatRun usage", () => {
  it("a run without tokens or cost was planned by the rules planner, not a model", () => {
    expect(usageLine({ ...ZERO_USAGE, model_calls: 2, tool_calls: 3 })).toBe(
      "usage: 2 planner turn(s) (rules planner, no model), 3 tool call(s)",
    );
  });
  it("a model's turns are model calls with their tokens", () => {
    expect(usageLine({ ...ZERO_USAGE, model_calls: 2, tool_calls: 1, input_tokens: 100, output_tokens: 20 })).toBe(
      "usage: 2 model call(s), 120 tokens, 1 tool call(s)",
    );
  });
});
