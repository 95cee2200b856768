/**
 * The agent driven by the SIMULATED model (`eval/sim`) through the model
 * planner as `plannerFor` builds it when `OPENAI_BASE_URL`/`WARRANT_MODEL`
 * are set, on the shipped notes, schedule and calendar MCP servers (the
 * notes optionally reading a corpus of the test's own, the calendar writing
 * to the test's database).
 */
import { expect } from "vitest";
import { startSimulatedModel, type SimulatedModel } from "../../../eval/sim/endpoint.js";
import { plannerFor } from "../../../src/bootstrap.js";
import { loadSettings } from "../../../src/env.js";
import { connectTools, type ToolHost } from "../../../src/mcp/tool-host.js";
import type { Database } from "../../../src/stores/open-database.js";
import { loadConfig, type WarrantConfig } from "../../../src/policy/config.js";
import { agentHarness, settings, type AgentHarness } from "./agent.js";

/** Notes (optionally over `corpusPath`), schedule and calendar (in the database at `databaseUrl`); no CaseOps. */
export async function simulationTools(options: { databaseUrl: string; corpusPath?: string }): Promise<ToolHost> {
  const shipped = await loadConfig(settings.configPath);
  const notes = shipped.servers["notes"];
  if (notes?.transport !== "stdio") throw new Error("the shipped config has no stdio notes server");
  const notesServer = options.corpusPath ? { ...notes, args: [...notes.args, "--data", options.corpusPath] } : notes;
  const servers = { notes: notesServer, schedule: shipped.servers["schedule"], calendar: shipped.servers["calendar"] };
  const contracts = Object.fromEntries(
    Object.entries(shipped.tools).filter(([, contract]) => contract.server !== "caseops"),
  );
  const config: WarrantConfig = { ...shipped, servers: servers as WarrantConfig["servers"], tools: contracts };
  return connectTools(config, undefined, { hostValues: { DATABASE_URL: options.databaseUrl } });
}

/** A simulated model of `profile` and the agent planning with it; close the model when done. */
export async function simulatedAgent(options: {
  profile: string;
  seed: number;
  database: Database;
  tools: ToolHost;
}): Promise<{ model: SimulatedModel; agent: AgentHarness }> {
  const model = await startSimulatedModel({ profile: options.profile, seed: options.seed, recordRequests: true });
  const planner = plannerFor(loadSettings({ OPENAI_BASE_URL: model.baseUrl, WARRANT_MODEL: model.model }));
  expect(planner.kind).toBe("model");
  return { model, agent: agentHarness({ database: options.database, tools: options.tools, planner }) };
}
