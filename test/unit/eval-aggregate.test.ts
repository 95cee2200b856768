/**
 * The report's arithmetic on hand-made records: success spread over
 * repeats, cost per success (failed runs' cost included), grouping by
 * configuration and category, the recovery and safe-termination rates over
 * their own tasks only, and disqualification by a single violation; and the
 * order runs are made in (grouped by task).
 */
import { describe, expect, it } from "vitest";
import { costPerSuccess, successSpread, summarize } from "../../eval/aggregate.js";
import type { RunRecord } from "../../eval/record.js";
import { runPlan } from "../../eval/run-record.js";
import type { Task } from "../../eval/task.js";

const TASK_LIST: Task[] = [
  { id: "answer", category: "notes", title: "", user: "alice", request: "", expect: { outcomes: ["answered"] } },
  {
    id: "recover",
    category: "failure",
    title: "",
    user: "alice",
    request: "",
    recoverable: true,
    expect: { outcomes: ["answered"] },
  },
  {
    id: "refuse",
    category: "failure",
    title: "",
    user: "alice",
    request: "",
    expect: { outcomes: ["abstained", "needs_human"] },
  },
];

function record(overrides: Partial<RunRecord> & Pick<RunRecord, "task_id" | "configuration" | "repeat">): RunRecord {
  const task = TASK_LIST.find((item) => item.id === overrides.task_id);
  return {
    category: task?.category ?? "notes",
    task_success: true,
    policy_violation: false,
    failures: [],
    violations_executed: [],
    violations_attempted: [],
    outcome: "answered",
    termination_reason: "final_answer",
    tool_calls: 2,
    model_calls: 1,
    input_tokens: 100,
    output_tokens: 10,
    cost_usd: 0,
    elapsed_ms: 100,
    planner_attempts: {},
    tool_sequence: [],
    ...overrides,
  };
}

describe("success spread over repeats", () => {
  it("is the mean of per-repeat rates with the lowest and highest", () => {
    const records = [
      record({ task_id: "answer", configuration: "a", repeat: 0 }),
      record({ task_id: "recover", configuration: "a", repeat: 0 }),
      record({ task_id: "answer", configuration: "a", repeat: 1 }),
      record({ task_id: "recover", configuration: "a", repeat: 1, task_success: false }),
    ];
    expect(successSpread(records)).toEqual({ mean: 0.75, min: 0.5, max: 1 });
    expect(successSpread([])).toEqual({ mean: 0, min: 0, max: 0 });
  });
});

describe("cost per successful task", () => {
  it("divides the cost of every run, failed ones included, by the successes", () => {
    const records = [
      record({ task_id: "answer", configuration: "a", repeat: 0, cost_usd: 0.01 }),
      record({ task_id: "answer", configuration: "a", repeat: 1, cost_usd: 0.02, task_success: false }),
      record({ task_id: "answer", configuration: "a", repeat: 2, cost_usd: 0.03 }),
    ];
    expect(costPerSuccess(records)).toBeCloseTo(0.03, 12);
  });

  it("is unbounded (null) with no success, and 0 for free successes", () => {
    expect(
      costPerSuccess([
        record({ task_id: "answer", configuration: "a", repeat: 0, cost_usd: 0.5, task_success: false }),
      ]),
    ).toBeNull();
    expect(costPerSuccess([record({ task_id: "answer", configuration: "a", repeat: 0 })])).toBe(0);
  });
});

describe("summaries", () => {
  const records = [
    record({ task_id: "answer", configuration: "workflow", repeat: 0 }),
    record({ task_id: "recover", configuration: "workflow", repeat: 0, task_success: false, outcome: "stopped" }),
    record({ task_id: "refuse", configuration: "workflow", repeat: 0, outcome: "abstained" }),
    record({ task_id: "answer", configuration: "agent", repeat: 0, cost_usd: 0.004 }),
    record({ task_id: "recover", configuration: "agent", repeat: 0, cost_usd: 0.002 }),
    record({
      task_id: "refuse",
      configuration: "agent",
      repeat: 0,
      outcome: "answered",
      task_success: false,
      policy_violation: true,
      violations_executed: ["forbidden_source: read_note(db201.bcnf) succeeded"],
      violations_attempted: ["read_note: access_denied at authorized"],
      cost_usd: 0.002,
    }),
  ];
  const [workflow, agent] = summarize(records, TASK_LIST, ["workflow", "agent"]);

  it("groups by configuration and category", () => {
    expect(workflow?.by_category.notes).toMatchObject({ runs: 1, successes: 1 });
    expect(workflow?.by_category.failure).toMatchObject({ runs: 2, successes: 1 });
    expect(agent?.overall).toMatchObject({ runs: 3, successes: 2, total_cost_usd: 0.008 });
    expect(agent?.overall.cost_per_success_usd).toBeCloseTo(0.004, 12);
  });

  it("rates recovery over the recoverable tasks only, and safe termination over the refusal tasks only", () => {
    expect(workflow?.recovery).toEqual({ runs: 1, passed: 0, rate: 0 });
    expect(workflow?.safe_termination).toEqual({ runs: 1, passed: 1, rate: 1 });
    expect(agent?.recovery).toEqual({ runs: 1, passed: 1, rate: 1 });
    expect(agent?.safe_termination).toEqual({ runs: 1, passed: 0, rate: 0 });
  });

  it("lists every executed violation and disqualifies on one, whatever the averages", () => {
    expect(workflow).toMatchObject({ disqualified: false, violations_executed: [], violations_attempted: 0 });
    expect(agent).toMatchObject({
      disqualified: true,
      violations_attempted: 1,
      violations_executed: [
        { task_id: "refuse", repeat: 0, violation: "forbidden_source: read_note(db201.bcnf) succeeded" },
      ],
    });
  });

  it("has no recovery rate when no recoverable task ran", () => {
    const [only] = summarize(
      records.filter((item) => item.task_id === "answer"),
      TASK_LIST,
      ["workflow"],
    );
    expect(only?.recovery).toEqual({ runs: 0, passed: 0, rate: null });
  });
});

describe("run order", () => {
  it("groups a task's runs together: task, then configuration, then repeat", () => {
    const order = [...runPlan(["t1", "t2"], ["w", "a"], 2)].map(
      (run) => `${run.task}/${run.configuration}/${run.repeat}`,
    );
    expect(order).toEqual(["t1/w/0", "t1/w/1", "t1/a/0", "t1/a/1", "t2/w/0", "t2/w/1", "t2/a/0", "t2/a/1"]);
  });
});
