/**
 * Nodes route themselves (src/graph/routes.ts `routed`): the route sees
 * the fields it reads (proposals, decisions, status) as the node's update
 * leaves them, exactly as a conditional edge after the node would.
 */
import { Command, END } from "@langchain/langgraph";
import { describe, expect, test } from "vitest";
import {
  afterDecisions,
  afterObserve,
  afterPlan,
  routed,
  sameValue,
  stateAfter,
  withoutNoOps,
} from "../../src/graph/routes.js";
import type { State } from "../../src/state.js";

const base = { status: "planning", proposals: [], decisions: [], messages: [] } as unknown as State;
const deny = { type: "deny", call_id: "c1", tool: "search_notes", code: "access_denied", message: "no" };
const allow = { type: "allow", call_id: "c2", tool: "search_notes" };

describe("routed", () => {
  test("answers with the node's update and the route taken on the state it leaves", async () => {
    const update = { status: ["tool_proposed"] as const, proposals: [{ call_id: "c1" }] };
    const node = routed(async () => update as never, afterPlan);
    const command = await node(base, {});
    expect(command).toBeInstanceOf(Command);
    expect(command.update).toBe(update);
    expect(command.goto).toEqual(["authorize"]);
    expect((await routed(async () => ({ proposals: [] }) as never, afterPlan)(base, {})).goto).toEqual(["observe"]);
  });

  test("status goes through its reducer, so an illegal transition fails in the node", () => {
    expect(stateAfter({ ...base, status: "observing" } as State, { status: "completed" }).status).toBe("completed");
    expect(afterObserve(stateAfter({ ...base, status: "observing" } as State, { status: "completed" }))).toBe(END);
    expect(afterObserve(stateAfter({ ...base, status: "observing" } as State, { status: "planning" }))).toBe("plan");
    expect(() => stateAfter({ ...base, status: "completed" } as State, { status: "tool_running" })).toThrow();
  });

  test("decisions written by the node decide; fields it did not write are the state's", () => {
    const withAllowed = { ...base, decisions: [allow] } as unknown as State;
    expect(afterDecisions(stateAfter(withAllowed, {}))).toBe("execute");
    expect(afterDecisions(stateAfter(withAllowed, { decisions: [deny] } as never))).toBe("observe");
  });
});

describe("withoutNoOps", () => {
  const settled = {
    ...base,
    termination_reason: null,
    result: null,
    review_feedback: null,
    verdict: { type: "tool_calls" },
    tool_offer: { offered: ["a"], withheld: [] },
  } as unknown as State;

  test("leaves out settled fields written with what they hold and appended fields written with nothing", () => {
    const update = {
      status: ["planning"],
      messages: [],
      evidence: [],
      termination_reason: null,
      result: null,
      progress: { run_id: "r", steps_without_progress: 0, seen_results: [] },
    };
    expect(withoutNoOps(settled, update as never)).toEqual({ status: ["planning"], progress: update.progress });
  });

  test("keeps every write that changes something, and plan's verdict and tool offer always (the trace reads them)", () => {
    const update = {
      messages: [{ id: "m" }],
      termination_reason: { code: "final_answer", detail: "", turn: 1 },
      verdict: { type: "tool_calls" },
      tool_offer: { offered: ["a"], withheld: [] },
    };
    expect(withoutNoOps(settled, update as never)).toBe(update);
  });

  test("a field the state does not hold yet is written, even with null", () => {
    const update = { termination_reason: null, result: null };
    expect(withoutNoOps(base, update as never)).toBe(update);
  });

  test("routed nodes send the update without its no-op writes", async () => {
    const node = routed(
      async () => ({ status: ["planning"], termination_reason: null, evidence: [] }) as never,
      afterObserve,
    );
    const command = await node({ ...settled, status: "observing" } as State, {});
    expect(command.update).toEqual({ status: ["planning"] });
    expect(command.goto).toEqual(["plan"]);
  });

  test("sameValue is deep equality of JSON-like values", () => {
    expect(sameValue({ a: [1, { b: null }] }, { a: [1, { b: null }] })).toBe(true);
    expect(sameValue({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(sameValue([1, 2], [2, 1])).toBe(false);
    expect(sameValue({ a: [] }, { a: {} })).toBe(false);
    expect(sameValue(null, {})).toBe(false);
    expect(sameValue(new Date(0), new Date(0))).toBe(false);
  });
});
