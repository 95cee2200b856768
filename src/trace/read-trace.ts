/**
 * Reads one run's trace from Postgres alone: where the run lives (its start
 * record and API runs), the thread's checkpoint history walked along the
 * current branch, the ledger and the approval records.
 */
import type { StateSnapshot } from "@langchain/langgraph";
import { findRunOrigin } from "../stores/trace-store.js";
import { checkpointIdFrom, threadConfig } from "../run-config.js";
import type { Database } from "../stores/open-database.js";
import { assembleTrace } from "./run-trace.js";
import type { NodeStep, RunTrace } from "./trace-entries.js";

/** What the reader needs of a compiled graph: its checkpoint history. */
export interface HistorySource {
  getStateHistory(config: ReturnType<typeof threadConfig>): AsyncIterableIterator<StateSnapshot>;
}

/**
 * The snapshots on the thread's current branch, oldest first: from the newest
 * checkpoint back through its parents (a fork left by an edit or a rewind is
 * not part of what happened last).
 */
export function currentBranch(snapshots: readonly StateSnapshot[]): StateSnapshot[] {
  const byId = new Map(snapshots.map((snapshot) => [checkpointIdFrom(snapshot.config), snapshot]));
  const branch: StateSnapshot[] = [];
  let cursor = snapshots[0];
  while (cursor && branch.length <= snapshots.length) {
    branch.push(cursor);
    cursor = byId.get(checkpointIdFrom(cursor.parentConfig));
  }
  return branch.reverse();
}

/** Each task of each checkpoint as the node step it was: from that checkpoint's time to the next one's. */
export function nodeSteps(branch: readonly StateSnapshot[]): NodeStep[] {
  const steps: NodeStep[] = [];
  branch.forEach((snapshot, index) => {
    const next = branch[index + 1];
    for (const task of snapshot.tasks) {
      if (task.name.startsWith("__")) continue;
      const finished = task.result !== undefined && task.result !== null && typeof task.result === "object";
      steps.push({
        node: task.name,
        started_at: snapshot.createdAt ?? "",
        ended_at: finished ? (next?.createdAt ?? null) : null,
        writes: finished ? (task.result as Record<string, unknown>) : null,
      });
    }
  });
  return steps;
}

export async function readRunTrace(
  database: Database,
  graphFor: (graphId: string | null) => Promise<HistorySource>,
  runId: string,
): Promise<RunTrace | undefined> {
  const origin = await findRunOrigin(database.pool, database.schema, runId);
  if (!origin) return undefined;
  const graph = await graphFor(origin.graph_id);
  const snapshots: StateSnapshot[] = [];
  for await (const snapshot of graph.getStateHistory(threadConfig(origin.thread_id))) snapshots.push(snapshot);
  const [ledger, approvals] = await Promise.all([
    database.ledger.list(origin.thread_id),
    database.approvals.list(origin.thread_id),
  ]);
  return assembleTrace({ origin, steps: nodeSteps(currentBranch(snapshots)), ledger, approvals });
}
