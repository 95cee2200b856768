/**
 * The controlled graph end to end: real notes MCP server (child process),
 * real Postgres through PostgresSaver, on both the server and the embedded
 * backend. Assertions are on codes, ledger rows and evidence.
 */
import { ToolMessage } from "@langchain/core/messages";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import type { ToolHost } from "../../src/mcp/tool-host.js";
import { createRulesPlanner } from "../../src/domains/rules-planner.js";
import type { State } from "../../src/state.js";
import { calls, endlessPlanner, proposal, scriptedPlanner } from "../support/scripted-planner.js";
import { agentHarness, connectShippedTools } from "./support/agent.js";
import { backends, useBackend } from "./support/postgres.js";

const QUESTION = "Compare self-attention with cross-attention using my notes";

function errorCodes(state: State): string[] {
  return state.messages
    .filter((message): message is ToolMessage => ToolMessage.isInstance(message) && message.status === "error")
    .map((message) => (JSON.parse(String(message.content)) as { error: { code: string } }).error.code);
}

let tools: ToolHost;
const fixture = useSandbox();
beforeAll(async () => {
  tools = await connectShippedTools(fixture);
});

describe.each(backends)("agent graph on $name Postgres", (backend) => {
  const opened = useBackend(backend);

  it("answers alice's attention question citing only cs301 notes", async () => {
    const agent = agentHarness({ database: opened().database, tools, planner: createRulesPlanner() });
    const { threadId, state } = await agent.run("alice", QUESTION);
    expect(state.status).toBe("completed");
    expect(state.termination_reason?.code).toBe("final_answer");
    expect(state.result?.citations.length).toBeGreaterThan(0);
    for (const citation of state.result?.citations ?? []) expect(citation.source_id.startsWith("cs301/")).toBe(true);
    expect(state.result?.citations.map((citation) => citation.ref)).toContain("cs301.self-attention@1");
    expect(state.ledger.map((row) => [row.tool, row.status])).toEqual([
      ["search_notes", "succeeded"],
      ["read_note", "succeeded"],
      ["read_note", "succeeded"],
      ["read_note", "succeeded"],
    ]);
    // The durable ledger holds the same rows as the state.
    const durable = await opened().database.ledger.list(threadId);
    expect(durable.map((row) => `${row.call_id}#${row.attempt}:${row.status}`).sort()).toEqual(
      state.ledger.map((row) => `${row.call_id}#${row.attempt}:${row.status}`).sort(),
    );
    expect(state.usage).toMatchObject({ model_calls: 3, tool_calls: 4 });
  });

  it("gives bob an abstention and never a cs301 excerpt", async () => {
    const agent = agentHarness({ database: opened().database, tools, planner: createRulesPlanner() });
    const { state } = await agent.run("bob", QUESTION);
    expect(state.status).toBe("abstained");
    expect(state.result?.abstained).toBe(true);
    expect(state.result?.citations).toEqual([]);
    expect(state.evidence.filter((item) => item.source_id.startsWith("cs301/"))).toEqual([]);
    const transcript = JSON.stringify(state.messages.map((message) => message.content));
    expect(transcript).not.toMatch(/cs301/);
  });

  it("says the rules planner cannot find an unreleased note instead of answering from notes that share a word with it", async () => {
    const agent = agentHarness({ database: opened().database, tools, planner: createRulesPlanner() });
    const { state } = await agent.run("alice", "Show me the exam 2 worked solutions");
    expect(state.status).toBe("abstained");
    expect(state.termination_reason?.code).toBe("abstained");
    expect(state.result).toMatchObject({ abstained: true, citations: [] });
    expect(state.result?.answer).toMatch(/^I can't find notes on "exam worked solutions" that you can read/);
    // One search, nothing read: no note was evidence, so none was opened().
    expect(state.ledger.map((row) => [row.tool, row.status])).toEqual([["search_notes", "succeeded"]]);
    expect(state.decisions.every((decision) => decision.type === "allow")).toBe(true);
  });

  it("checks bob's authorization before any existence check", async () => {
    const planner = scriptedPlanner([
      calls(
        proposal("read_note", { note_id: "cs301.self-attention" }),
        proposal("read_note", { note_id: "db201.no-such-note" }),
      ),
      { type: "final", answer: "nothing", citations: [], abstained: true },
    ]);
    const agent = agentHarness({ database: opened().database, tools, planner });
    const { state } = await agent.run("bob", "read those");
    planner.assertDone();
    expect(errorCodes(state)).toEqual(["access_denied", "access_denied"]);
    // The cs301 note was refused by authorize: only the db201 lookup reached the server.
    expect(state.ledger.map((row) => row.tool)).toEqual(["read_note"]);
    expect(state.decisions.map((decision) => decision.type)).toEqual(["deny", "allow"]);
  });

  it("turns invalid proposals into typed, repairable errors without executing them", async () => {
    const planner = scriptedPlanner([
      calls(
        proposal("delete_everything", {}),
        proposal("search_notes", { query: "attention", extra: 1 }),
        proposal("search_notes", { query: "attention", limit: true }),
        proposal("search_notes", { query: "x".repeat(501) }),
        proposal("search_notes", '{"query": "attention", "limit": '),
        proposal("search_notes", { query: "attention", user_id: "bob" }),
      ),
      (input) => {
        // The planner sees every error as an observation it can repair.
        const tail = input.messages.slice(-6);
        expect(tail.every((message) => ToolMessage.isInstance(message))).toBe(true);
        return { type: "final", answer: "giving up", citations: [], abstained: true };
      },
    ]);
    const agent = agentHarness({ database: opened().database, tools, planner });
    const { state } = await agent.run("alice", "search badly");
    planner.assertDone();
    expect(errorCodes(state)).toEqual([
      "unknown_tool",
      "invalid_arguments",
      "invalid_arguments",
      "invalid_arguments",
      "invalid_arguments",
      "invalid_arguments",
    ]);
    expect(state.ledger).toEqual([]);
    expect(state.status).toBe("abstained");
  });

  it("refuses an unreleased note to a student in the server too", async () => {
    const planner = scriptedPlanner([
      calls(proposal("read_note", { note_id: "cs301.exam-2-solutions" })),
      { type: "final", answer: "no", citations: [], abstained: true },
    ]);
    const agent = agentHarness({ database: opened().database, tools, planner });
    const { state } = await agent.run("alice", "show the exam solutions");
    // authorize allowed it (alice is in cs301); the server refused it.
    expect(state.ledger.map((row) => [row.tool, row.status, row.error_code])).toEqual([
      ["read_note", "failed", "access_denied"],
    ]);
    expect(errorCodes(state)).toEqual(["access_denied"]);
    expect(state.evidence.some((item) => item.item_id === "cs301.exam-2-solutions")).toBe(false);
  });

  it("stops a long run by its model-turn budget, not by LangGraph's recursion limit", async () => {
    // 20 turns of four node steps each would overrun LangGraph's default limit of 25.
    const agent = agentHarness({
      database: opened().database,
      tools,
      planner: endlessPlanner(),
      budgets: { model_turns: 20, tool_calls: 100, no_progress_steps: 100, tokens: 1_000_000 },
    });
    const { state } = await agent.run("alice", "keep searching");
    expect(state.status).toBe("stopped");
    expect(state.termination_reason).toMatchObject({ code: "budget_exhausted", budget: "model_turns", turn: 20 });
    expect(state.usage.model_calls).toBe(20);
    expect(state.ledger).toHaveLength(20);
  }, 60_000);

  it("counts every call of a parallel response against the tool budget", async () => {
    const searches = ["a", "b", "c", "d", "e"].map((letter) =>
      proposal("search_notes", { query: `attention ${letter}` }),
    );
    const planner = scriptedPlanner([calls(...searches)]);
    const agent = agentHarness({ database: opened().database, tools, planner, budgets: { tool_calls: 3 } });
    const { state } = await agent.run("alice", "five at once");
    planner.assertDone();
    expect(state.ledger).toHaveLength(3);
    expect(errorCodes(state)).toEqual(["budget_exhausted", "budget_exhausted"]);
    expect(state.termination_reason).toMatchObject({ code: "budget_exhausted", budget: "tool_calls" });
    expect(state.status).toBe("stopped");
  });

  it("stops a repeated action", async () => {
    const same = () => calls(proposal("search_notes", { query: "attention", limit: 2 }));
    const planner = scriptedPlanner([same(), same()]);
    const agent = agentHarness({ database: opened().database, tools, planner, budgets: { max_repeats: 1 } });
    const { state } = await agent.run("alice", "again and again");
    planner.assertDone();
    expect(state.ledger).toHaveLength(1);
    expect(state.termination_reason?.code).toBe("repeated_action");
    expect(state.status).toBe("stopped");
  });

  it("stops when turns make no progress", async () => {
    const failing = () =>
      calls(proposal("read_note", { note_id: `cs301.missing-${Math.random().toString(36).slice(2, 8)}` }));
    const planner = scriptedPlanner([failing(), failing()]);
    const agent = agentHarness({ database: opened().database, tools, planner, budgets: { no_progress_steps: 2 } });
    const { state } = await agent.run("alice", "read things that do not exist");
    planner.assertDone();
    expect(state.termination_reason?.code).toBe("no_progress");
  });

  it("stops at the deadline", async () => {
    let clock = Date.now();
    const planner = scriptedPlanner([
      () => {
        clock += 10_000;
        return calls(proposal("search_notes", { query: "attention" }));
      },
    ]);
    const agent = agentHarness({
      database: opened().database,
      tools,
      planner,
      budgets: { deadline_ms: 5_000 },
      now: () => clock,
    });
    const { state } = await agent.run("alice", "slow");
    expect(state.termination_reason).toMatchObject({ code: "budget_exhausted", budget: "deadline" });
  });

  it("fails a final answer that cites evidence the run never saw", async () => {
    const planner = scriptedPlanner([
      { type: "final", answer: "made up", citations: ["cs301.self-attention@1"], abstained: false },
    ]);
    const agent = agentHarness({ database: opened().database, tools, planner });
    const { threadId, state } = await agent.run("bob", "cite something");
    expect(state.status).toBe("failed");
    expect(state.termination_reason?.code).toBe("unsupported_citation");
    expect(state.result).toBeNull();
    expect(threadId).toBeTruthy();
  });

  it("continues the same thread with a new request after a finished run", async () => {
    const agent = agentHarness({ database: opened().database, tools, planner: createRulesPlanner() });
    const first = await agent.run("alice", QUESTION);
    const second = await agent.run("alice", "What is BM25?", first.threadId);
    expect(second.state.status).toBe("completed");
    expect(second.state.usage.model_calls).toBe(3);
    // The thread's ledger keeps the first run's rows; the second searches once and reads the one note on BM25.
    expect(second.state.ledger).toHaveLength(first.state.ledger.length + 2);
    expect(second.state.ledger.slice(-2).map((row) => row.tool)).toEqual(["search_notes", "read_note"]);
    expect(second.state.result?.citations.map((citation) => citation.ref)).toEqual(["cs301.bm25@1"]);
  });
});
