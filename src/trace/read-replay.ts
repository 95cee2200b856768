/**
 * Reads what `replay` re-decides: for each run, every authorize step on its
 * thread's current branch, with the state it started from and the decisions
 * it wrote. Postgres alone; no node runs and no tool server starts.
 */
import type { StateSnapshot } from "@langchain/langgraph";
import type { Database } from "../stores/open-database.js";
import type { ListedTool } from "../mcp/catalog.js";
import { findRunOrigin, recentRunIds, recordedDefinitions } from "../stores/trace-store.js";
import type { Decision } from "../policy/decision.js";
import { threadConfig } from "../run-config.js";
import type { State } from "../state.js";
import { currentBranch, type HistorySource } from "./read-trace.js";
import type { RecordedStep } from "./replay.js";

/** The authorize steps of one run among a thread's snapshots (oldest first). */
export function authorizeSteps(branch: readonly StateSnapshot[], runId: string, threadId: string): RecordedStep[] {
  const steps: RecordedStep[] = [];
  for (const snapshot of branch) {
    const values = snapshot.values as State;
    if (values.run?.run_id !== runId) continue;
    for (const task of snapshot.tasks) {
      if (task.name !== "authorize" || typeof task.result !== "object" || task.result === null) continue;
      const decisions = (task.result as { decisions?: unknown }).decisions;
      steps.push({
        run_id: runId,
        thread_id: threadId,
        at: snapshot.createdAt ?? "",
        state: values,
        decisions: Array.isArray(decisions) ? (decisions as Decision[]) : [],
      });
    }
  }
  return steps;
}

/** Every recorded authorize step of these runs, run by run; unknown run ids are returned apart. */
export async function readReplaySteps(
  database: Database,
  graphFor: (graphId: string | null) => Promise<HistorySource>,
  runIds: readonly string[],
): Promise<{ steps: RecordedStep[]; unknown: string[] }> {
  const steps: RecordedStep[] = [];
  const unknown: string[] = [];
  for (const runId of runIds) {
    const origin = await findRunOrigin(database.pool, database.schema, runId);
    if (!origin) {
      unknown.push(runId);
      continue;
    }
    const graph = await graphFor(origin.graph_id);
    const snapshots: StateSnapshot[] = [];
    for await (const snapshot of graph.getStateHistory(threadConfig(origin.thread_id))) snapshots.push(snapshot);
    steps.push(...authorizeSteps(currentBranch(snapshots), origin.run_id, origin.thread_id));
  }
  return { steps, unknown };
}

/** What `replay` reads from the database: the runs' authorize steps and the pinned tool definitions. */
export interface ReplayRecords {
  steps: RecordedStep[];
  unknown: string[];
  definitions: { server: string; tool: ListedTool }[];
}

/** The records of these runs, or of the newest `last` runs. */
export async function readReplayRecords(
  database: Database,
  graphFor: (graphId: string | null) => Promise<HistorySource>,
  which: { runIds: readonly string[] } | { last: number },
): Promise<ReplayRecords> {
  const ids = "last" in which ? await recentRunIds(database.pool, database.schema, which.last) : which.runIds;
  const { steps, unknown } = await readReplaySteps(database, graphFor, ids);
  return { steps, unknown, definitions: await recordedDefinitions(database.pool, database.schema) };
}
