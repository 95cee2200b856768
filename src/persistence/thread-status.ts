/**
 * A thread's status for a run that held no lease: the in-process CLI. An API
 * run sets the status when it releases its lease (thread-store.ts); a CLI run
 * sets it here when it ends, with the same values, so a thread paused at a
 * review is `interrupted` with its `graph_id` (and in the reviewer inbox)
 * whoever paused it. A thread an API run holds at that moment is left to it.
 */
import type pg from "pg";
import { quoteSchemaName } from "../sql-names.js";
import type { Owner, ThreadStatus } from "./thread-store.js";

export async function recordThreadStatus(
  pool: pg.Pool,
  schema: string,
  owner: Owner,
  threadId: string,
  ended: { status: ThreadStatus; graphId: string; values?: Record<string, unknown> | undefined },
): Promise<void> {
  const s = quoteSchemaName(schema);
  await pool.query(
    `update ${s}.threads
      set status = $4, graph_id = coalesce(graph_id, $5), state_values = coalesce($6::jsonb, state_values), updated_at = now()
      where thread_id = $1 and tenant = $2 and owner = $3 and (active_run is null or lease_until < now())`,
    [
      threadId,
      owner.tenant,
      owner.user_id,
      ended.status,
      ended.graphId,
      ended.values ? JSON.stringify(ended.values) : null,
    ],
  );
}
