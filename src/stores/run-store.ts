/**
 * The runs table: an API run's row from creation to its final status, the
 * cancel flag its heartbeat reads, and the runs a dead process left behind.
 */
import type pg from "pg";
import { IDEMPOTENT, transaction } from "../db/retry.js";
import { replaceUnstorable } from "../policy/safe-text.js";
import { quoteSchemaName } from "../sql-names.js";
import {
  type ApiRunStatus,
  type Owner,
  RUN_COLUMNS,
  type RunEndHook,
  type RunOutcome,
  type RunRow,
  runColumns,
} from "./thread-rows.js";

/** The runs table's reads and writes. */
export interface RunQueries {
  createRun(
    owner: Owner,
    run: {
      run_id: string;
      thread_id: string;
      assistant_id: string;
      status: ApiRunStatus;
      metadata: Record<string, unknown>;
      kwargs: Record<string, unknown>;
    },
  ): Promise<RunRow>;
  getRun(owner: Owner, threadId: string, runId: string): Promise<RunRow | undefined>;
  listRuns(
    owner: Owner,
    threadId: string,
    options: { limit: number; offset: number; status?: ApiRunStatus | undefined },
  ): Promise<RunRow[]>;
  /**
   * Records a run's status. With `onEnd`, the hook runs in the same
   * transaction, on its client, with the updated row (the webhook outbox:
   * `run.ended` commits with the status or not at all); the transaction is
   * retried whole after a transient failure, so the hook must be repeatable.
   */
  setRunStatus(
    runId: string,
    status: ApiRunStatus,
    error?: { error: string; message: string },
    outcome?: RunOutcome,
    onEnd?: RunEndHook,
  ): Promise<void>;
  /** Marks a run for cancellation (seen by whichever process runs it at its next heartbeat). */
  requestCancel(owner: Owner, threadId: string, runId: string): Promise<RunRow | undefined>;
  /** Runs left `running`/`pending` by a process that is gone (their thread's lease expired); of one thread when given. */
  orphanedRuns(threadId?: string): Promise<RunRow[]>;
}

export function createRunQueries(pool: pg.Pool, schema: string): RunQueries {
  const s = quoteSchemaName(schema);
  const one = async (sql: string, params: unknown[]): Promise<RunRow | undefined> =>
    (await pool.query<RunRow>(sql, params)).rows[0];
  const many = async (sql: string, params: unknown[]): Promise<RunRow[]> =>
    (await pool.query<RunRow>(sql, params)).rows;
  return {
    async createRun(owner, run) {
      const row = await one(
        `insert into ${s}.runs (run_id, thread_id, assistant_id, owner, tenant, status, metadata, kwargs)
         values ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb) returning ${RUN_COLUMNS}`,
        [
          run.run_id,
          run.thread_id,
          run.assistant_id,
          owner.user_id,
          owner.tenant,
          run.status,
          JSON.stringify(run.metadata),
          JSON.stringify(run.kwargs),
        ],
      );
      if (!row) throw new Error("run insert returned nothing");
      return row;
    },
    getRun: (owner, threadId, runId) =>
      one(`select ${RUN_COLUMNS} from ${s}.runs where run_id = $1 and thread_id = $2 and tenant = $3 and owner = $4`, [
        runId,
        threadId,
        owner.tenant,
        owner.user_id,
      ]),
    listRuns: (owner, threadId, options) =>
      many(
        `select ${RUN_COLUMNS} from ${s}.runs where thread_id = $1 and tenant = $2 and owner = $3 and ($4::text is null or status = $4)
          order by created_at desc, run_id limit $5 offset $6`,
        [threadId, owner.tenant, owner.user_id, options.status ?? null, options.limit, options.offset],
      ),
    async setRunStatus(runId, status, error, outcome, onEnd) {
      const update = `update ${s}.runs set status = $2, error = $3::jsonb, outcome = coalesce($4::jsonb, outcome), updated_at = now()
          where run_id = $1`;
      const values = [runId, status, error ? storableJson(error) : null, outcome ? storableJson(outcome) : null];
      if (!onEnd) {
        await pool.query(`${IDEMPOTENT}${update}`, values);
        return;
      }
      // Idempotent as a whole: the same update again, and a hook that records each event once.
      await transaction(
        pool,
        async (client) => {
          const ended = (await client.query<RunRow>(`${update} returning ${RUN_COLUMNS}`, values)).rows[0];
          if (ended) await onEnd(client, ended);
        },
        { idempotent: true },
      );
    },
    requestCancel: (owner, threadId, runId) =>
      one(
        `update ${s}.runs set cancel_requested = true, updated_at = now()
          where run_id = $1 and thread_id = $2 and tenant = $3 and owner = $4 returning ${RUN_COLUMNS}`,
        [runId, threadId, owner.tenant, owner.user_id],
      ),
    // A pending run (delayed or queued: run-queue-store.ts) holds no lease; it is never an orphan.
    orphanedRuns: (threadId) =>
      many(
        `select ${runColumns("r.")} from ${s}.runs r join ${s}.threads t on t.thread_id = r.thread_id
          where r.status = 'running' and (t.active_run is distinct from r.run_id or t.lease_until < now())
            and ($1::uuid is null or r.thread_id = $1::uuid)`,
        [threadId ?? null],
      ),
  };
}

/**
 * JSON for a jsonb column from values our code shaped but whose strings may
 * quote untrusted text (a tool's error message in a termination reason, an
 * exception's message): jsonb refuses `\u0000` and lone surrogates, and a
 * failed status write would leave the run `running` for good.
 */
function storableJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => (typeof item === "string" ? replaceUnstorable(item) : item));
}
