/**
 * One recorded run of the agent graph against the real calendar MCP server:
 * two parallel reads, a write alice approves, a proposal of a tool nobody
 * contracted (denied), then the final answer. The audit-chain and trace
 * tests read what it leaves in Postgres.
 */
import path from "node:path";
import { expect } from "vitest";
import type { ToolHost } from "../../../src/mcp/tool-host.js";
import type { Database } from "../../../src/stores/open-database.js";
import type { WarrantConfig } from "../../../src/policy/config.js";
import { calls, proposal, scriptedPlanner } from "../../support/scripted-planner.js";
import { agentHarness } from "./agent.js";
import { DONE, EVENT, REQUEST } from "./calendar.js";

export { EVENT, REQUEST };

/** The shipped calendar server and its contracts, on a fresh store file in `directory`. */
export function calendarConfig(shipped: WarrantConfig, directory: string): WarrantConfig {
  const server = shipped.servers["calendar"];
  if (server?.transport !== "stdio") throw new Error("the shipped config has no stdio calendar server");
  const tools = Object.fromEntries(
    Object.entries(shipped.tools).filter(([, contract]) => contract.server === "calendar"),
  );
  return {
    ...shipped,
    servers: {
      calendar: {
        ...server,
        env: { ...server.env, WARRANT_CALENDAR_DATA: path.join(directory, `${Date.now()}-${Math.random()}.json`) },
      },
    },
    tools,
  };
}

/** Runs the recorded run to its end (alice approves the write); returns its ids. */
export async function recordedRun(database: Database, tools: ToolHost): Promise<{ threadId: string; runId: string }> {
  const planner = scriptedPlanner([
    calls(
      proposal("list_events", {}),
      proposal("list_events", { calendar: "study" }),
      proposal("create_study_event", EVENT),
      proposal("delete_everything", {}),
    ),
    DONE,
  ]);
  const agent = agentHarness({ database, tools, planner });
  const { threadId, state: paused } = await agent.run("alice", REQUEST);
  expect(paused.status).toBe("waiting_approval");
  const state = await agent.resume("alice", threadId, { decisions: [{ type: "approve" }] });
  planner.assertDone();
  expect(state.status).toBe("completed");
  expect(state.ledger.map((row) => row.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
  const runId = state.run?.run_id;
  if (!runId) throw new Error("the run has no id");
  return { threadId, runId };
}
