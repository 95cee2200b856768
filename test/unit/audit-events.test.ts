/**
 * Audit events on the real graph (in memory): every denied proposal is
 * recorded by authorize and every run's ending by observe, once each, with
 * the run's principal and the typed code.
 */
import { describe, expect, it } from "vitest";
import { graphHarness } from "../support/harness.js";
import { memoryHost, memoryTools } from "../support/memory-host.js";
import { calls, proposal, scriptedPlanner } from "../support/scripted-planner.js";

const alice = {
  user_id: "alice",
  tenant: "uni",
  role: "student",
  scopes: ["notes:read"],
  grants: { courses: ["cs301"] },
};

function harness(steps: Parameters<typeof scriptedPlanner>[0], budgets = {}) {
  const host = memoryHost({
    planner: scriptedPlanner(steps),
    tools: memoryTools(() => ({ ok: true, text: "{}", structured: {} })),
    budgets,
  });
  const h = graphHarness(host, { principal: alice });
  return { ...h, run: (text: string) => h.start(text) };
}

describe("audit events", () => {
  it("records each denied proposal (authorize) and the run's ending (observe)", async () => {
    const unknown = proposal("drop_tables", {});
    const extra = proposal("read_note", { note_id: "n1", admin: true });
    const h = harness([calls(unknown, extra), { type: "final", answer: "done", citations: [], abstained: false }]);
    await h.run("hello");
    const events = h.host.auditStore.events;
    expect(
      events
        .filter((event) => event.kind === "denied")
        .map((event) => [event.subject, event.tool, event.code, event.node, event.actor]),
    ).toEqual([
      [unknown.call_id, "drop_tables", "unknown_tool", "authorize", "alice"],
      [extra.call_id, "read_note", "invalid_arguments", "authorize", "alice"],
    ]);
    const ended = events.filter((event) => event.kind === "run_ended");
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({ node: "observe", code: "final_answer", actor: "alice", subject: "", tool: null });
    expect(ended[0]?.run_id).toBe(
      ((await h.graph.getState(h.config)).values as { run: { run_id: string } }).run.run_id,
    );
  });

  it("records a budget stop with the budget named, one ending per run", async () => {
    const h = harness(
      [calls(proposal("read_note", { note_id: "n1" })), calls(proposal("read_note", { note_id: "n2" }))],
      { model_turns: 1 },
    );
    await h.run("hello");
    const ended = h.host.auditStore.events.filter((event) => event.kind === "run_ended");
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({ code: "budget_exhausted", detail: expect.stringContaining("(model_turns)") });
  });

  it("gives each run on a thread its own ending", async () => {
    const answer = { type: "final" as const, answer: "x", citations: [], abstained: true };
    const h = harness([answer, answer]);
    await h.run("one");
    await h.run("two");
    const ended = h.host.auditStore.events.filter((event) => event.kind === "run_ended");
    expect(ended.map((event) => event.code)).toEqual(["abstained", "abstained"]);
    expect(new Set(ended.map((event) => event.run_id)).size).toBe(2);
  });
});
