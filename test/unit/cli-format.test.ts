/** The CLI's run summary says which planner spent what: a rules run asked no model. */
import { describe, expect, it } from "vitest";
import { formatRun } from "../../src/cli/format.js";
import { ZERO_USAGE } from "../../src/policy/usage.js";

const usageLine = (usage: typeof ZERO_USAGE) =>
  formatRun({ status: "completed", usage })
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

describe("formatRun endings", () => {
  const pending = {
    provider: "study.follow_up",
    run_id: "r1",
    request: "schedule 2 hours of attention tomorrow evening",
    missing: ["start_time"],
    question: 'missing_start: at what time tomorrow evening should the study start (Europe/Berlin)? e.g. "at 18:00"',
  };
  const asked = {
    status: "needs_human" as const,
    pending,
    termination_reason: { code: "needs_human" as const, detail: pending.question },
  };

  it("puts the question last, after the command that answers it, and names it once", () => {
    const lines = formatRun(asked as never, {
      reply: 'npm run chat -- --user alice --thread t1 "<your answer>"',
    }).split("\n");
    expect(lines.at(-1)).toBe('At what time tomorrow evening should the study start (Europe/Berlin)? e.g. "at 18:00"');
    expect(lines.at(-2)).toBe('answer with: npm run chat -- --user alice --thread t1 "<your answer>"');
    expect(lines.at(-3)).toBe("termination: needs_human: a question for you (missing_start)");
    expect(lines.filter((line) => line.includes("at what time")).length).toBe(0);
  });

  it("does not print the thread (stderr did) and says a paused run waits for review", () => {
    const text = formatRun({ status: "waiting_approval" }, {
      review: { action_requests: [], review_configs: [] },
    } as never);
    expect(text).not.toMatch(/^thread:/m);
    expect(text).not.toContain("(run not finished)");
    expect(text.split("\n").at(-1)).toBe("termination: none yet, waiting for review");
  });

  it("a run that ended without a question keeps its reason as the last line", () => {
    const text = formatRun({
      status: "needs_human",
      pending: null,
      termination_reason: { code: "needs_human", detail: "outside_repertoire: …" },
    } as never);
    expect(text.split("\n").at(-1)).toBe("termination: needs_human: outside_repertoire: …");
  });
});
