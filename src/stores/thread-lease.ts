/**
 * A thread's one-run-at-a-time lock: a lease on the thread row
 * (`active_run`, `lease_until`), taken with one conditional UPDATE, so any
 * number of server processes sharing this Postgres agree on which of them
 * runs a thread; a process that dies holding it loses it when the lease runs
 * out. Taking it under the owner's run limit is run-admission.ts.
 */
import type pg from "pg";
import { IDEMPOTENT } from "../db/retry.js";
import { quoteSchemaName } from "../sql-names.js";
import { type LeaseFields, leaseStatement } from "./run-admission.js";
import type { Owner, ThreadStatus } from "./thread-rows.js";

/** The run lease on a thread row. */
export interface ThreadLease {
  /**
   * Takes the thread's run lease for `runId` when nobody holds a live one.
   * Returns false when another run holds it.
   */
  acquire(owner: Owner, threadId: string, runId: string, leaseMs: number, fields: LeaseFields): Promise<boolean>;
  /** Extends the lease; false when the run no longer holds it. Also reports a cancel request. */
  heartbeat(threadId: string, runId: string, leaseMs: number): Promise<{ held: boolean; cancel: boolean }>;
  /** Releases the lease and sets the thread's status and kept values (only if `runId` still holds it). */
  release(threadId: string, runId: string, status: ThreadStatus, values?: Record<string, unknown>): Promise<void>;
}

export function createThreadLease(pool: pg.Pool, schema: string): ThreadLease {
  const s = quoteSchemaName(schema);
  return {
    async acquire(owner, threadId, runId, leaseMs, fields) {
      return (await pool.query(leaseStatement(schema, owner, threadId, runId, leaseMs, fields))).rows.length > 0;
    },
    async heartbeat(threadId, runId, leaseMs) {
      const result = await pool.query<{ held: boolean; cancel: boolean }>(
        `${IDEMPOTENT}with lease as (
           update ${s}.threads set lease_until = now() + make_interval(secs => $3::double precision / 1000)
            where thread_id = $1 and active_run = $2 returning thread_id)
         select exists(select 1 from lease) as held,
                coalesce((select cancel_requested from ${s}.runs where run_id = $2), false) as cancel`,
        [threadId, runId, leaseMs],
      );
      const row = result.rows[0];
      return { held: row?.held ?? false, cancel: row?.cancel ?? false };
    },
    async release(threadId, runId, status, values) {
      await pool.query(
        `${IDEMPOTENT}update ${s}.threads
          set active_run = null, lease_until = null, status = $3, state_values = coalesce($4::jsonb, state_values),
              updated_at = now()
          where thread_id = $1 and active_run = $2`,
        [threadId, runId, status, values ? JSON.stringify(values) : null],
      );
    },
  };
}
