/** Trace assembly on recorded node steps: which steps belong to a run, what each entry quotes, the order. */
import { describe, expect, it } from "vitest";
import { renderTrace } from "../../src/trace/render.js";
import { assembleTrace, stepsOfRun } from "../../src/trace/run-trace.js";
import type { RunOrigin } from "../../src/ports.js";
import type { LedgerRow } from "../../src/state/ledger.js";
import type { NodeStep } from "../../src/trace/trace-entries.js";

const at = (ms: number) => new Date(Date.UTC(2026, 11, 1, 12, 0, 0, ms)).toISOString();
const step = (
  node: string,
  start: number,
  writes: Record<string, unknown> | null,
  end: number | null = start + 5,
): NodeStep => ({
  node,
  started_at: at(start),
  ended_at: end === null ? null : at(end),
  writes,
});
const plan = (runId: string, turn: number, start: number, extra: Record<string, unknown> = {}) =>
  step("plan", start, {
    run: { run_id: runId, request: `request of ${runId}`, turn, owner: "alice", started_at: at(start + 1) },
    usage:
      turn === 1
        ? { reset: true, model_calls: 1, input_tokens: 100, output_tokens: 20, cost_usd: 0.001 }
        : { model_calls: 1, input_tokens: 50, output_tokens: 10, cost_usd: 0.0005 },
    tool_offer: {
      offered: ["search_notes", "read_note"],
      withheld: [{ tool: "create_study_event", reason: "not_relevant" }],
    },
    proposals: [{ call_id: `c${turn}`, name: "search_notes", raw_arguments: "{}" }],
    verdict: { type: "tool_calls" },
    messages: [
      {
        lc: 1,
        type: "constructor",
        id: ["langchain_core", "messages", "AIMessage"],
        kwargs: { content: "", response_metadata: { model_name: "gpt-test" } },
      },
    ],
    ...extra,
  });
const origin = (runId: string): RunOrigin => ({
  run_id: runId,
  thread_id: "t1",
  owner: "alice",
  started_at: at(1),
  api_runs: [],
  graph_id: "agent",
});
const row = (
  callId: string,
  runId: string,
  status: LedgerRow["status"],
  errorCode: LedgerRow["error_code"] = null,
): LedgerRow => ({
  call_id: callId,
  attempt: 1,
  tool: "search_notes",
  server: "notes",
  risk: "read",
  fingerprint: "0".repeat(64),
  idempotency_key: null,
  status,
  error_code: errorCode,
  started_at: at(20),
  finished_at: at(24),
  elapsed_ms: 4,
  run_id: runId,
});

describe("stepsOfRun", () => {
  it("gives a step to the run it worked in: plan starts a run, later nodes belong to it", () => {
    const steps = [
      plan("r1", 1, 0),
      step("observe", 10, {}),
      plan("r2", 1, 20),
      step("authorize", 30, { decisions: [] }),
      step("observe", 40, {}),
    ];
    expect(stepsOfRun(steps, "r1").map((s) => s.started_at)).toEqual([at(0), at(10)]);
    expect(stepsOfRun(steps, "r2").map((s) => s.node)).toEqual(["plan", "authorize", "observe"]);
    expect(stepsOfRun(steps, "r3")).toEqual([]);
  });
});

describe("assembleTrace", () => {
  const steps = [
    plan("r1", 1, 0),
    step("authorize", 10, {
      status: ["tool_authorized"],
      decisions: [
        { type: "allow", call_id: "c1", tool: "search_notes", model_args: { query: "attention" } },
        {
          type: "deny",
          call_id: "c9",
          tool: "read_note",
          check: "run_bound",
          code: "access_denied",
          message: "another course",
        },
      ],
    }),
    step("execute", 18, { status: ["tool_running", "observing"], usage: { tool_calls: 1 } }, 26),
    step("observe", 26, {
      evidence: [{ ref: "cs301.attention@1" }],
      termination_reason: { code: "final_answer", detail: "answered", turn: 1 },
      status: ["completed"],
    }),
  ];

  it("quotes each node's writes: plan's model, tokens and offer; each decision's check; the attempts; the end", () => {
    const trace = assembleTrace({
      origin: origin("r1"),
      steps,
      ledger: [row("c1", "r1", "succeeded"), row("c7", "other-run", "failed", "tool_timeout")],
      approvals: [],
    });
    expect(trace).toMatchObject({
      run_id: "r1",
      request: "request of r1",
      status: "completed",
      started_at: at(0),
      evidence_refs: ["cs301.attention@1"],
    });
    expect(trace.usage).toMatchObject({ model_calls: 1, tool_calls: 1, input_tokens: 100, output_tokens: 20 });
    expect(trace.termination).toEqual({ code: "final_answer", detail: "answered", turn: 1, budget: null });
    expect(trace.timeline.map((entry) => entry.kind)).toEqual(["plan", "decision", "decision", "execution", "observe"]);
    const [first, allow, deny, attempt] = trace.timeline;
    expect(first).toMatchObject({
      kind: "plan",
      turn: 1,
      model: "gpt-test",
      offered: ["search_notes", "read_note"],
      withheld: [{ tool: "create_study_event", reason: "not_relevant" }],
    });
    expect(allow).toMatchObject({ outcome: "allow", check: null, arguments: { query: "attention" } });
    expect(deny).toMatchObject({ outcome: "deny", check: "run_bound", code: "access_denied" });
    // Only this run's attempts; the other run's row is not in it.
    expect(attempt).toMatchObject({ kind: "execution", call_id: "c1", status: "succeeded", error_class: null });
  });

  it("classifies a failed attempt's error and keeps an unfinished run open", () => {
    const open = steps.slice(0, 3).concat(step("human_review", 40, null, null));
    const trace = assembleTrace({
      origin: origin("r1"),
      steps: open,
      ledger: [row("c1", "r1", "failed", "tool_timeout")],
      approvals: [],
    });
    expect(trace.termination).toBeNull();
    expect(trace.ended_at).toBeNull();
    expect(trace.nodes.at(-1)).toEqual({ node: "human_review", started_at: at(40), ended_at: null });
    expect(trace.timeline.find((entry) => entry.kind === "execution")).toMatchObject({
      error_code: "tool_timeout",
      error_class: "transient",
    });
  });

  it("reads nothing it does not understand as data: wrong-typed writes are skipped, not thrown on", () => {
    const hostile = [
      step("plan", 0, {
        run: { run_id: "r1", turn: "7" },
        usage: "lots",
        tool_offer: { offered: [1, "x"], withheld: "none" },
        proposals: [null, 3],
      }),
    ];
    const trace = assembleTrace({ origin: origin("r1"), steps: hostile, ledger: [], approvals: [] });
    expect(trace.timeline).toEqual([
      expect.objectContaining({ kind: "plan", turn: 0, offered: ["x"], withheld: [], proposed: [] }),
    ]);
  });

  it("reads the fixed workflow's steps as plan entries: they write plan's fields under their own names", () => {
    const workflow = [
      { ...plan("r1", 1, 0), node: "retrieve" },
      step("validate", 10, { verdict: { type: "final" } }),
      step("observe", 20, {}),
    ];
    const trace = assembleTrace({ origin: origin("r1"), steps: workflow, ledger: [], approvals: [] });
    expect(
      trace.timeline
        .filter((entry) => entry.kind === "plan")
        .map((entry) => (entry.kind === "plan" ? [entry.node, entry.verdict] : [])),
    ).toEqual([
      ["retrieve", "tool_calls"],
      ["validate", "final"],
    ]);
  });

  it("says which planner spent what: a model's tokens, the rules planner's none, a code step's no call", () => {
    const rules = plan("r1", 1, 0, {
      usage: { reset: true, model_calls: 1, input_tokens: 0, output_tokens: 0, cost_usd: 0 },
      messages: [],
    });
    const code = { ...plan("r1", 2, 10, { usage: { model_calls: 0 }, messages: [] }), node: "study" };
    const lines = (steps: NodeStep[]) =>
      renderTrace(assembleTrace({ origin: origin("r1"), steps, ledger: [], approvals: [] }))
        .split("\n")
        .filter((line) => / plan {8}/.test(line));
    expect(lines([plan("r1", 1, 0)])[0]).toContain("model gpt-test  1 model call(s), 100 in / 20 out tokens");
    const [byRules, byCode] = lines([rules, code]);
    expect(byRules).toMatch(/turn 1 {2}rules planner, no model$/);
    expect(byCode).toMatch(/\(study\) turn 2 {2}code step, no model$/);
  });
});

describe("compaction in the trace (issue 23)", () => {
  it("shows each plan turn's compacted context, and none before the first compaction", async () => {
    const { renderTrace } = await import("../../src/trace/render.js");
    const compacted = { tokens: 31_000, compacted_through: 41, compacted_results: 20, compactions: 1 };
    const offer = (context?: typeof compacted) => ({
      tool_offer: { offered: ["search_notes"], withheld: [], ...(context ? { context } : {}) },
    });
    const trace = assembleTrace({
      origin: origin("r9"),
      steps: [plan("r9", 1, 0, offer()), plan("r9", 2, 10, offer(compacted))],
      ledger: [],
      approvals: [],
    });
    const plans = trace.timeline.filter((entry) => entry.kind === "plan");
    expect(plans.map((entry) => (entry.kind === "plan" ? entry.context : undefined))).toEqual([null, compacted]);
    const rendered = renderTrace(trace);
    expect(rendered.match(/context compaction 1: 20 older tool result/g)).toHaveLength(1);
  });
});
