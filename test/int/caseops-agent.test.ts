/**
 * The CaseOps investigation end to end: the shipped config launches the
 * caseops server (Streamable HTTP, task tokens), the rules planner drives the
 * graph, the run ends with the case's evidence refs. Also the schedule server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWorkflow } from "../../graphs/workflow.js";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import { createRulesPlanner } from "../../src/domains/rules-planner.js";
import { loadConfig } from "../../src/policy/config.js";
import { calls, proposal, scriptedPlanner } from "../support/scripted-planner.js";
import { agentHarness, settings } from "./support/agent.js";
import { openTestDatabase } from "./support/postgres.js";
import type { Database } from "../../src/stores/open-database.js";

let tools: ToolHost;
let database: Database;

beforeAll(async () => {
  tools = await connectTools(await loadConfig(settings.configPath));
  database = await openTestDatabase();
});
afterAll(async () => {
  await tools?.close();
  await database?.close();
});

describe("CaseOps over Streamable HTTP with task tokens", () => {
  it("investigates C-102 in exactly four executions and cites case, policy and alias", async () => {
    const agent = agentHarness({ database, tools, planner: createRulesPlanner(), runBound: { case_id: "C-102" } });
    const { state } = await agent.run("dana", "Investigate claim C-102: are its documents complete?");
    expect(state.status).toBe("completed");
    expect(state.result?.answer).toMatch(/^DOCUMENTS_COMPLETE_AFTER_NORMALIZATION/);
    expect(state.ledger.map((row) => [row.tool, row.status])).toEqual([
      ["get_case_snapshot", "succeeded"],
      ["get_policy_requirements", "succeeded"],
      ["list_unclassified_documents", "succeeded"],
      ["resolve_document_alias", "succeeded"],
    ]);
    expect(state.result?.citations.map((citation) => citation.ref)).toEqual([
      "case:C-102@v3",
      "policy:motor-2026.1",
      "alias:DOC-7781",
    ]);
  });

  it("the fixed workflow investigates C-102 with the same sequence, through the same control plane", async () => {
    const workflow = agentHarness({
      database,
      tools,
      planner: createRulesPlanner(),
      runBound: { case_id: "C-102" },
      build: buildWorkflow,
    });
    const { state } = await workflow.run("dana", "Investigate claim C-102: are its documents complete?");
    expect(state.status).toBe("completed");
    expect(state.result?.answer).toMatch(/^DOCUMENTS_COMPLETE_AFTER_NORMALIZATION/);
    expect(state.ledger.map((row) => [row.tool, row.status])).toEqual([
      ["get_case_snapshot", "succeeded"],
      ["get_policy_requirements", "succeeded"],
      ["list_unclassified_documents", "succeeded"],
      ["resolve_document_alias", "succeeded"],
    ]);
    expect(state.decisions.every((decision) => decision.type === "allow")).toBe(true);
    expect(state.result?.citations.map((citation) => citation.ref)).toEqual([
      "case:C-102@v3",
      "policy:motor-2026.1",
      "alias:DOC-7781",
    ]);
  });

  it("answers another tenant's case exactly like a missing one", async () => {
    const planner = scriptedPlanner([
      calls(proposal("get_case_snapshot", { case_id: "C-102" })),
      { type: "final", answer: "no", citations: [], abstained: true },
    ]);
    const foreign = await agentHarness({ database, tools, planner, runBound: { case_id: "C-102" } }).run(
      "gil",
      "look at C-102",
    );
    const missingPlanner = scriptedPlanner([
      calls(proposal("get_case_snapshot", { case_id: "C-999" })),
      { type: "final", answer: "no", citations: [], abstained: true },
    ]);
    const missing = await agentHarness({
      database,
      tools,
      planner: missingPlanner,
      runBound: { case_id: "C-999" },
    }).run("gil", "look at C-999");
    const toolText = (state: typeof foreign.state) =>
      state.messages.filter((message) => message.getType() === "tool").map((message) => message.content);
    expect(foreign.state.ledger.map((row) => row.error_code)).toEqual(["access_denied"]);
    expect(toolText(foreign.state)).toEqual(toolText(missing.state));
  });

  it("refuses a case other than the one the run is bound to, before any call", async () => {
    const planner = scriptedPlanner([
      calls(proposal("get_case_snapshot", { case_id: "C-101" })),
      { type: "final", answer: "no", citations: [], abstained: true },
    ]);
    const { state } = await agentHarness({ database, tools, planner, runBound: { case_id: "C-102" } }).run(
      "dana",
      "look at C-101",
    );
    expect(state.ledger).toEqual([]);
    expect(state.decisions).toMatchObject([{ type: "deny", code: "access_denied" }]);
  });

  it("hides CaseOps tools from a principal without the scope", async () => {
    const planner = scriptedPlanner([
      calls(proposal("get_case_snapshot", { case_id: "C-102" })),
      { type: "final", answer: "no", citations: [], abstained: true },
    ]);
    const { state } = await agentHarness({ database, tools, planner, runBound: { case_id: "C-102" } }).run(
      "alice",
      "look at C-102",
    );
    expect(planner.inputs[0]?.tools.map((tool) => tool.name)).not.toContain("get_case_snapshot");
    expect(state.decisions).toMatchObject([{ type: "deny", code: "tool_not_permitted" }]);
    expect(state.ledger).toEqual([]);
  });
});

describe("schedule server through the agent", () => {
  it("splits 121 minutes over 3 days as 41, 40, 40", async () => {
    const { state } = await agentHarness({ database, tools, planner: createRulesPlanner() }).run(
      "alice",
      "Split 121 minutes of revision over 3 days, at most 60 per day",
    );
    expect(state.status).toBe("completed");
    expect(state.result?.answer).toBe("Schedule: day 1: 41 min, day 2: 40 min, day 3: 40 min.");
  });

  it("rejects a boolean for days before any call", async () => {
    const planner = scriptedPlanner([
      calls(proposal("calculate_schedule", { total_minutes: 121, days: true, daily_limit: 60 })),
      { type: "final", answer: "no", citations: [], abstained: true },
    ]);
    const { state } = await agentHarness({ database, tools, planner }).run("alice", "schedule");
    expect(state.decisions).toMatchObject([{ type: "deny", code: "invalid_arguments" }]);
    expect(state.ledger).toEqual([]);
  });

  it("asks a human when the minutes do not fit, without raising the limit", async () => {
    const { state } = await agentHarness({ database, tools, planner: createRulesPlanner() }).run(
      "alice",
      "Split 200 minutes over 3 days, at most 60 per day",
    );
    expect(state.ledger.map((row) => row.error_code)).toEqual(["capacity_exceeded"]);
    expect(state.status).toBe("needs_human");
  });
});
