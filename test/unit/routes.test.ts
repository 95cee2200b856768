/**
 * Nodes route themselves (src/runtime/routes.ts `routed`): the route sees
 * the fields it reads (proposals, decisions, status) as the node's update
 * leaves them, exactly as a conditional edge after the node would.
 */
import { Command, END } from "@langchain/langgraph";
import { describe, expect, test } from "vitest";
import { afterDecisions, afterObserve, afterPlan, routed, stateAfter } from "../../src/runtime/routes.js";
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
