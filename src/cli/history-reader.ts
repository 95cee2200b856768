/**
 * The commands that read recorded runs (trace, policy explain and replay)
 * open the database themselves when no server runs: a graph compiled on it
 * is only a reader of its checkpoint history here, so no node runs and no
 * tool server starts.
 */
import { createRuntime } from "../bootstrap.js";
import type { Settings } from "../env.js";
import type { Database } from "../stores/open-database.js";
import { readRunTrace, type HistorySource } from "../trace/read-trace.js";
import type { RunTrace } from "../trace/trace-entries.js";
import { findServer, operatorToken, requestJson } from "./server-client.js";

export type GraphReader = (graphId: string | null) => Promise<HistorySource>;

/** Runs `body` with the database and a history reader for each served graph, then closes both. */
export async function withHistory<T>(
  settings: Settings,
  body: (database: Database, graphFor: GraphReader) => Promise<T>,
): Promise<T> {
  const runtime = createRuntime(settings);
  const database = await runtime.database();
  const graphFor: GraphReader = async (graphId) => {
    if (graphId === "workflow") {
      const { buildWorkflow } = await import("../../graphs/workflow.js");
      return buildWorkflow(runtime.host).compile({ checkpointer: database.saver });
    }
    const { buildAgent } = await import("../../graphs/agent.js");
    return buildAgent(runtime.host).compile({ checkpointer: database.saver });
  };
  try {
    return await body(database, graphFor);
  } finally {
    await runtime.close();
  }
}

/** A run's trace: from the running server when there is one (it may hold the embedded database), else read here. */
export async function traceOf(settings: Settings, runId: string): Promise<RunTrace | undefined> {
  const server = await findServer(settings);
  if (server) {
    const path = `/operator/runs/${encodeURIComponent(runId)}/trace`;
    const answer = await requestJson<RunTrace>(server, await operatorToken(settings), "GET", path, { accept: [404] });
    return answer.status === 404 ? undefined : answer.body;
  }
  return withHistory(settings, (database, graphFor) => readRunTrace(database, graphFor, runId));
}
