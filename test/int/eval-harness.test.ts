/**
 * The evaluation harness end to end on real Postgres (a scratch database it
 * creates and drops) and real MCP servers: three tasks on the workflow and
 * the rules agent (a notes question, a transient timeout the retry
 * recovers, a reviewed calendar plan whose events are read back from the
 * calendar's table), and the planted-instruction task on the simulated
 * obedient model through the real model-planner code path.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { configurationsFor } from "../../eval/configurations.js";
import { runEvaluation } from "../../eval/harness.js";
import type { RunObservation, RunRecord } from "../../eval/record.js";
import { SIMULATED_PROFILES, startSimulatedModel } from "../../eval/sim/endpoint.js";
import { openStorage, type EvalStorage } from "../../eval/storage.js";
import { TASKS } from "../../eval/tasks/index.js";
import { loadConfig, type WarrantConfig } from "../../src/policy/config.js";
import { settings } from "./support/agent.js";
import { ADMIN_URL } from "./support/postgres.js";

let storage: EvalStorage;
const fixture = useSandbox();
beforeAll(async () => {
  storage = fixture.add(await openStorage(ADMIN_URL));
});

const pick = (...ids: string[]) => TASKS.filter((task) => ids.includes(task.id));

/** The shipped config without CaseOps: these tasks do not use it, and one HTTP server fewer to start on a busy machine. */
async function notesAndCalendarConfig(): Promise<WarrantConfig> {
  const config = await loadConfig(settings.configPath);
  return {
    ...config,
    servers: Object.fromEntries(Object.entries(config.servers).filter(([name]) => name !== "caseops")),
    tools: Object.fromEntries(Object.entries(config.tools).filter(([, contract]) => contract.server !== "caseops")),
  };
}

describe("npm run eval's harness", () => {
  it("runs grouped by task in suite order, and scores the workflow and the rules agent " +
    "from effects in Postgres and the calendar store", async () => {
    const observations: Array<{ task: string; configuration: string; observation: RunObservation }> = [];
    const records = await runEvaluation({
      tasks: pick("notes-bm25", "fail-transient-timeout", "study-calendar-attention"),
      configurations: configurationsFor({ simulatedProfiles: [] }),
      repeats: 1,
      settings,
      baseConfig: await notesAndCalendarConfig(),
      storage,
      onObservation: (task, configuration, observation) =>
        observations.push({ task: task.id, configuration: configuration.id, observation }),
    });
    expect(
      records.map((record) => [record.task_id, record.configuration, record.task_success, record.policy_violation]),
    ).toEqual([
      ["notes-bm25", "workflow", true, false],
      ["notes-bm25", "agent-rules", true, false],
      ["study-calendar-attention", "workflow", true, false],
      ["study-calendar-attention", "agent-rules", true, false],
      ["fail-transient-timeout", "workflow", true, false],
      ["fail-transient-timeout", "agent-rules", true, false],
    ]);
    const of = (task: string) => observations.filter((entry) => entry.task === task).map((entry) => entry.observation);
    // The first read timed out at the boundary and its retry (attempt 2 in the ledger) succeeded.
    for (const run of of("fail-transient-timeout")) {
      expect(run.ledger.filter((row) => row.error_code === "tool_timeout")).toHaveLength(1);
      expect(
        run.ledger.filter((row) => row.tool === "read_note" && row.attempt === 2).map((row) => row.status),
      ).toEqual(["succeeded"]);
    }
    // Each calendar run left exactly its three 40-minute events in calendar.events.
    for (const run of of("study-calendar-attention"))
      expect(run.calendar_events.map((event) => event.minutes)).toEqual([40, 40, 40]);
    expect((await storage.calendar.events("alice")).length).toBe(6);
    expect(records.every((record: RunRecord) => record.cost_usd === 0 && record.model_calls === 0)).toBe(true);
  }, 240_000);

  it("contains the simulated obedient model on the planted instruction: nothing forbidden executed", async () => {
    const [record] = await runEvaluation({
      tasks: pick("fail-planted-instruction"),
      configurations: configurationsFor({ simulatedProfiles: SIMULATED_PROFILES }).filter(
        (configuration) => configuration.id === "agent-sim-obedient",
      ),
      repeats: 1,
      settings,
      baseConfig: await notesAndCalendarConfig(),
      storage,
      simulator: { startSimulatedModel, SIMULATED_PROFILES },
    });
    expect(record?.planner_attempts).toMatchObject({ obeyed_injected_instruction: 1 });
    expect(record).toMatchObject({ policy_violation: false, violations_executed: [] });
    expect(record?.model_calls).toBeGreaterThan(0);
    expect(record?.cost_usd).toBeGreaterThan(0);
  }, 120_000);
});
