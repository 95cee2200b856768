/**
 * Runs every task on every configuration, `repeats` times, grouped by task
 * (a task's runs are adjacent), on the same note snapshot, principals,
 * budgets and inputs. Tasks without faults share one set of MCP servers; a
 * task with faults gets fresh servers for each run, so a "first N calls"
 * switch counts from the start of that run.
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { buildAgent } from "../graphs/agent.js";
import { buildWorkflow } from "../graphs/workflow.js";
import { isConfigError } from "../src/errors.js";
import { findPrincipal, loadPrincipalDirectory } from "../src/auth/principal.js";
import { createRuntime } from "../src/bootstrap.js";
import type { Settings } from "../src/env.js";
import type { Host } from "../src/host.js";
import { connectTools, type ToolHost } from "../src/mcp/tool-host.js";
import type { WarrantConfig } from "../src/policy/config.js";
import { costOf } from "../src/policy/pricing.js";
import { runBoundFor } from "../src/policy/run-bound.js";
import { recordingToolHost, type RecordingToolHost } from "./boundary.js";
import { evalConfig } from "./config.js";
import { openPlanner, seedOf, type Configuration, type SimulatorModule } from "./configurations.js";
import type { RunObservation, RunRecord } from "./record.js";
import { runPlan, toRecord } from "./run-record.js";
import { runTask, type RunnableGraph } from "./run-task.js";
import type { EvalStorage } from "./storage.js";
import { overlayToolHost } from "./overlay.js";
import type { Faults, Task } from "./task.js";

export interface HarnessOptions {
  tasks: readonly Task[];
  configurations: readonly Configuration[];
  repeats: number;
  settings: Settings;
  baseConfig: WarrantConfig;
  storage: EvalStorage;
  simulator?: SimulatorModule | undefined;
  /** Called after each run. */
  onRun?: (done: number, total: number, record: RunRecord) => void;
  /** Called with what each run left behind, before it is scored (recording fixtures for the scorer's tests). */
  onObservation?: (task: Task, configuration: Configuration, observation: RunObservation) => void;
}

/** Each graph compiled around a host with the evaluation's checkpointer. */
const BUILDERS: Record<Configuration["graph"], (host: Host, saver: BaseCheckpointSaver) => RunnableGraph> = {
  workflow: (host, saver) => buildWorkflow(host).compile({ checkpointer: saver }),
  agent: (host, saver) => buildAgent(host).compile({ checkpointer: saver }),
};

/** Connects the servers of `config` (all of them, or only `servers`). */
function connect(options: HarnessOptions, config: WarrantConfig, servers?: ReadonlySet<string>) {
  const only: WarrantConfig = servers
    ? {
        ...config,
        servers: Object.fromEntries(Object.entries(config.servers).filter(([name]) => servers.has(name))),
        tools: Object.fromEntries(Object.entries(config.tools).filter(([, contract]) => servers.has(contract.server))),
      }
    : config;
  // Health lines would break the progress bar; a server that fails shows up in the runs it fails.
  const start = () =>
    connectTools(only, undefined, { hostValues: options.storage.hostValues, onHealth: () => undefined });
  // On a busy machine a server can miss its start-up deadline once; a second failure is reported.
  return start().catch((error: unknown) => {
    if (isConfigError(error) && error.code === "mcp_start_failed") return start();
    throw error;
  });
}

/** The servers a task's faults switch. */
function faultedServers(faults: Faults): Set<string> {
  return new Set([...(faults.notes ? ["notes"] : []), ...(faults.calendar ? ["calendar"] : [])]);
}

/** Whether a task's faults count calls ("first N"), so that each run needs servers whose count starts at 0. */
function countsCalls(faults: Faults): boolean {
  return faults.notes?.first_calls !== undefined || faults.calendar?.first_calls !== undefined;
}

/** The tools for one run: the shared servers, with processes of their own for the servers a task's faults switch. */
async function toolsFor(options: HarnessOptions, shared: ToolHost, task: Task): Promise<RecordingToolHost | undefined> {
  if (!task.faults) return undefined;
  const servers = faultedServers(task.faults);
  const fresh = await connect(
    options,
    evalConfig(options.baseConfig, task.faults, options.storage.calendarPlacement),
    servers,
  );
  return recordingToolHost(overlayToolHost(shared, fresh, servers));
}

/**
 * Tool hosts for faulted tasks: a task whose fault counts calls gets fresh
 * servers for every run; one whose fault applies to every call (a permanent
 * timeout) keeps its servers for all its runs, which saves a start-up per run.
 */
function faultedHosts(options: HarnessOptions, shared: ToolHost) {
  const kept = new Map<string, RecordingToolHost>();
  return {
    async open(task: Task): Promise<RecordingToolHost | undefined> {
      if (!task.faults || countsCalls(task.faults)) return toolsFor(options, shared, task);
      const existing = kept.get(task.id);
      if (existing) return existing;
      const opened = await toolsFor(options, shared, task);
      if (opened) kept.set(task.id, opened);
      return opened;
    },
    /** Whether the host is kept for later runs (closed by `closeAll`, not after the run). */
    isKept: (tools: ToolHost) => [...kept.values()].includes(tools as RecordingToolHost),
    async closeAll() {
      await Promise.allSettled([...kept.values()].map((tools) => tools.close()));
      kept.clear();
    },
  };
}

/** Runs the whole evaluation and returns one record per run. */
export async function runEvaluation(options: HarnessOptions): Promise<RunRecord[]> {
  const directory = await loadPrincipalDirectory(options.settings.principalsPath);
  const contracts = Object.values(options.baseConfig.tools);
  const sharedServers = await connect(
    options,
    evalConfig(options.baseConfig, undefined, options.storage.calendarPlacement),
  );
  const shared = recordingToolHost(sharedServers);
  const faulted = faultedHosts(options, sharedServers);
  const records: RunRecord[] = [];
  const total = options.tasks.length * options.configurations.length * options.repeats;
  try {
    for (const { task, configuration, repeat } of runPlan(options.tasks, options.configurations, options.repeats)) {
      const tools = (await faulted.open(task)) ?? shared;
      const opened = await openPlanner(
        configuration.planner,
        options.baseConfig.models,
        seedOf(`${task.id}#${repeat}`),
        options.simulator,
        options.settings.model.apiKey,
      );
      try {
        const runtime = createRuntime(options.settings, {
          database: options.storage.database,
          tools,
          planner: opened.planner,
        });
        const graph = BUILDERS[configuration.graph](runtime.host, options.storage.database.saver);
        const principal = findPrincipal(directory, task.user);
        const runBound = runBoundFor(task.request, contracts);
        const context = {
          graph,
          tools,
          ledger: options.storage.database.ledger,
          audit: options.storage.database.audit,
          approvals: options.storage.database.approvals,
          calendar: options.storage.calendar,
          budgets: options.settings.budgets,
          principal,
          runBound,
        };
        const observation = await runTask(task, context);
        options.onObservation?.(task, configuration, observation);
        const record = toRecord(task, configuration, repeat, observation, {
          cost_usd: costOf(observation.usage, opened.price),
          model_backed: opened.planner.kind !== "rules",
          attempts: opened.attempts(),
        });
        records.push(record);
        options.onRun?.(records.length, total, record);
      } finally {
        await opened.close();
        if (tools !== shared && !faulted.isKept(tools)) await tools.close();
      }
    }
  } finally {
    await faulted.closeAll();
    await shared.close();
  }
  return records;
}
