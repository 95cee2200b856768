/**
 * The report and charts say what was measured: simulated columns are
 * labelled simulations, a missing real model is said plainly, a violation
 * disqualifies in the table, and the SVG charts carry one bar per
 * configuration and category with simulated series marked; the progress
 * bar's text.
 */
import { describe, expect, it } from "vitest";
import { summarize } from "../../eval/aggregate.js";
import { costChart, successChart } from "../../eval/charts.js";
import { configurationsFor } from "../../eval/configurations.js";
import { progressLine } from "../../eval/progress.js";
import type { RunRecord } from "../../eval/record.js";
import { renderReport, spreadText } from "../../eval/report.js";
import { CATEGORIES, type Task } from "../../eval/task.js";

const TASK_LIST: Task[] = [
  { id: "q", category: "notes", title: "", user: "alice", request: "", expect: { outcomes: ["answered"] } },
  { id: "c", category: "caseops", title: "", user: "dana", request: "", expect: { outcomes: ["answered"] } },
];
const configurations = configurationsFor({ simulatedProfiles: [{ name: "sloppy", description: "makes mistakes" }] });

function record(task_id: string, configuration: string, overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    task_id,
    category: task_id === "q" ? "notes" : "caseops",
    configuration,
    repeat: 0,
    task_success: true,
    policy_violation: false,
    failures: [],
    violations_executed: [],
    violations_attempted: [],
    outcome: "answered",
    termination_reason: "final_answer",
    tool_calls: 1,
    model_calls: 0,
    input_tokens: 0,
    output_tokens: 0,
    cost_usd: 0,
    elapsed_ms: 10,
    planner_attempts: {},
    tool_sequence: [],
    ...overrides,
  };
}

const records = [
  record("q", "workflow"),
  record("c", "workflow"),
  record("q", "agent-rules"),
  record("c", "agent-rules", { task_success: false, failures: [{ code: "answer_wrong", detail: "" }] }),
  record("q", "agent-sim-sloppy", { cost_usd: 0.001, model_calls: 2, planner_attempts: { invented_citation: 1 } }),
  record("c", "agent-sim-sloppy", {
    policy_violation: true,
    task_success: false,
    violations_executed: ["unexpected_calendar_event: 1 created, at most 0 approved"],
    cost_usd: 0.001,
  }),
];
const summaries = summarize(
  records,
  TASK_LIST,
  configurations.map((configuration) => configuration.id),
);
const context = {
  command: "npm run eval -- --repeats 1",
  started_at: "2026-12-01T12:00:00.000Z",
  duration_ms: 1000,
  repeats: 1,
  storage: "test",
  configurations,
  skipped: [],
  real_model: undefined,
  tasks: TASK_LIST,
};

describe("the report", () => {
  const report = renderReport(context, summaries, records);

  it("labels simulated columns and says no real model was measured", () => {
    expect(report).toContain("**No real model was measured**");
    expect(report).toContain("agent-sim-sloppy (SIMULATED)");
    expect(report).toContain("are simulations");
    expect(report).toContain("`npm run eval -- --repeats 1`");
  });

  it("names a real model and its endpoint when one was measured", () => {
    const withModel = renderReport(
      { ...context, real_model: { model: "gpt-4o-mini", endpoint: "http://127.0.0.1:11434/v1" } },
      summaries,
      records,
    );
    expect(withModel).toContain("**Real model measured:** `gpt-4o-mini` at `http://127.0.0.1:11434/v1`");
  });

  it("disqualifies a configuration with an executed violation and lists it", () => {
    const row = report.split("\n").find((line) => line.startsWith("| agent-sim-sloppy (SIMULATED) |"));
    expect(row).toContain("**DISQUALIFIED**");
    expect(report).toContain("  - c (repeat 0): unexpected_calendar_event: 1 created, at most 0 approved");
    expect(report).toContain("invented_citation 1");
  });

  it("prints the cost per success, and n/a where nothing succeeded", () => {
    expect(report).toContain("$0.002000");
    expect(report).toContain("n/a (no success)");
    expect(spreadText(summaries[0]?.overall)).toBe("100%");
  });
});

describe("the charts", () => {
  const series = configurations.map((configuration) => ({
    configuration: configuration.id,
    simulated: configuration.simulated,
  }));

  it("draw one bar per configuration and category, simulated series hatched and named", () => {
    const svg = successChart(summaries, series, CATEGORIES);
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg.match(/<rect x="[0-9.]+" y="[0-9.]+" width="14"[^>]*fill="#/g)?.length).toBe(3 * 3);
    expect(svg).toContain("agent-sim-sloppy (simulated)");
    expect(svg).toContain('fill="url(#hatch)"');
  });

  it("mark a cost per success that does not exist as n/a", () => {
    const svg = costChart(summaries, series, CATEGORIES);
    expect(svg).toContain("n/a");
    expect(svg).toContain("Cost per successful task");
  });
});

describe("the progress bar", () => {
  it("shows how far the runs are", () => {
    expect(progressLine(3, 12, "notes-bm25 · workflow")).toBe(
      `[${"#".repeat(8)}${"-".repeat(22)}] 3/12 notes-bm25 · workflow`,
    );
    expect(progressLine(0, 0, "")).toBe(`[${"#".repeat(30)}] 0/0 `);
  });
});

describe("telling configurations apart", () => {
  it("says when the workflow and the rules agent ended every run alike, and not otherwise", () => {
    const alike = [record("q", "workflow"), record("q", "agent-rules")];
    expect(renderReport(context, summarize(alike, TASK_LIST, ["workflow", "agent-rules"]), alike)).toContain(
      "ended every run alike",
    );
    expect(renderReport(context, summaries, records)).not.toContain("ended every run alike");
  });
});
