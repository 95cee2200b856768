/**
 * Pending runs: a run created with `after_seconds` (it waits until then) or
 * `multitask_strategy: "enqueue"`/`"interrupt"` on a busy thread (it waits
 * for the runs before it). Its `runs` row says `pending`; its queue row
 * holds what starting it needs (the principal that asked and the checked
 * request body). Any instance starts a due run: it claims the row (a short
 * claim, `for update skip locked`), so one instance starts it, FIFO per thread.
 */
import type pg from "pg";
import type { Principal } from "../auth/principal.js";
import { quoteSchemaName } from "../sql-names.js";
import { runColumns, type Owner, type RunRow } from "./thread-store.js";

export function runQueueMigrations(schema: string): string[] {
  const s = quoteSchemaName(schema);
  return [
    `create table if not exists ${s}.run_queue (
      run_id uuid primary key references ${s}.runs (run_id) on delete cascade,
      thread_id uuid not null references ${s}.threads (thread_id) on delete cascade,
      seq bigserial not null,
      not_before timestamptz not null default now(),
      claimed_until timestamptz,
      principal jsonb not null,
      body jsonb not null,
      created_at timestamptz not null default now()
    )`,
    `create index if not exists run_queue_due on ${s}.run_queue (not_before, seq)`,
    `create index if not exists run_queue_by_thread on ${s}.run_queue (thread_id, seq)`,
  ];
}

/** A pending run an instance has claimed to start. */
export interface QueuedRun {
  run_id: string;
  thread_id: string;
  principal: Principal;
  body: Record<string, unknown>;
}

export interface RunQueueStore {
  /** Records a pending run (its `runs` row and its queue row, in one transaction). */
  enqueue(
    owner: Owner,
    run: {
      run_id: string;
      thread_id: string;
      assistant_id: string;
      metadata: Record<string, unknown>;
      kwargs: Record<string, unknown>;
      afterSeconds: number;
      principal: Principal;
      body: Record<string, unknown>;
    },
  ): Promise<RunRow>;
  /** Pending runs of a thread (queued or delayed). */
  pendingOn(threadId: string): Promise<number>;
  /**
   * Claims up to `limit` due runs whose thread is free and that are first
   * among the thread's due runs, for `claimMs`; another instance skips them meanwhile.
   */
  claimDue(limit: number, claimMs: number): Promise<QueuedRun[]>;
  /** The claimed run did not start for a passing reason (the thread or the owner's limit is busy): try again after `retryMs`. */
  retryLater(runId: string, retryMs: number): Promise<void>;
  /** The run is leaving the queue (started, or failed to start): its queue row goes. */
  remove(runId: string): Promise<void>;
  /** A pending run's row turns `running` (it starts now); undefined when it is no longer pending (cancelled). */
  activate(runId: string): Promise<RunRow | undefined>;
  /** The claimed run could not start and never will: recorded `error` with the refusal, and dequeued. */
  fail(runId: string, error: { error: string; message: string }): Promise<void>;
  /** Cancels a pending run: dequeued and recorded `interrupted`. False when it was not pending (it has started). */
  cancel(owner: Owner, threadId: string, runId: string): Promise<boolean>;
}

export function createRunQueueStore(pool: pg.Pool, schema: string): RunQueueStore {
  const s = quoteSchemaName(schema);
  return {
    async enqueue(owner, run) {
      const client = await pool.connect();
      try {
        await client.query("begin");
        const inserted = await client.query<RunRow>(
          `insert into ${s}.runs (run_id, thread_id, assistant_id, owner, tenant, status, metadata, kwargs)
           values ($1, $2, $3, $4, $5, 'pending', $6::jsonb, $7::jsonb) returning ${runColumns()}`,
          [
            run.run_id,
            run.thread_id,
            run.assistant_id,
            owner.user_id,
            owner.tenant,
            JSON.stringify(run.metadata),
            JSON.stringify(run.kwargs),
          ],
        );
        await client.query(
          `insert into ${s}.run_queue (run_id, thread_id, not_before, principal, body)
           values ($1, $2, now() + make_interval(secs => $3::double precision), $4::jsonb, $5::jsonb)`,
          [run.run_id, run.thread_id, run.afterSeconds, JSON.stringify(run.principal), JSON.stringify(run.body)],
        );
        await client.query("commit");
        const row = inserted.rows[0];
        if (!row) throw new Error("pending run insert returned nothing");
        return row;
      } catch (error) {
        await client.query("rollback").catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    async pendingOn(threadId) {
      const result = await pool.query<{ n: number }>(
        `select count(*)::int as n from ${s}.run_queue where thread_id = $1`,
        [threadId],
      );
      return result.rows[0]?.n ?? 0;
    },
    async claimDue(limit, claimMs) {
      const result = await pool.query<QueuedRun>(
        `with due as (
           select q.run_id from ${s}.run_queue q join ${s}.threads t on t.thread_id = q.thread_id
            where q.not_before <= now() and (q.claimed_until is null or q.claimed_until < now())
              and (t.active_run is null or t.lease_until < now())
              and not exists (select 1 from ${s}.run_queue e
                               where e.thread_id = q.thread_id and e.seq < q.seq and e.not_before <= now())
            order by q.seq limit $1 for update of q skip locked)
         update ${s}.run_queue q set claimed_until = now() + make_interval(secs => $2::double precision / 1000)
           from due where q.run_id = due.run_id
         returning q.run_id::text as run_id, q.thread_id::text as thread_id, q.principal, q.body`,
        [limit, claimMs],
      );
      return result.rows;
    },
    async retryLater(runId, retryMs) {
      await pool.query(
        `update ${s}.run_queue set claimed_until = now() + make_interval(secs => $2::double precision / 1000) where run_id = $1`,
        [runId, retryMs],
      );
    },
    async remove(runId) {
      await pool.query(`delete from ${s}.run_queue where run_id = $1`, [runId]);
    },
    async activate(runId) {
      const result = await pool.query<RunRow>(
        `update ${s}.runs set status = 'running', updated_at = now()
          where run_id = $1 and status = 'pending' and exists (select 1 from ${s}.run_queue where run_id = $1)
          returning ${runColumns()}`,
        [runId],
      );
      return result.rows[0];
    },
    async fail(runId, error) {
      await pool.query(
        `with dequeued as (delete from ${s}.run_queue where run_id = $1 returning run_id)
         update ${s}.runs set status = 'error', error = $2::jsonb, updated_at = now()
          where run_id = $1 and status = 'pending'`,
        [runId, JSON.stringify(error)],
      );
    },
    async cancel(owner, threadId, runId) {
      const result = await pool.query(
        `with dequeued as (
           delete from ${s}.run_queue q using ${s}.runs r
            where q.run_id = $1 and r.run_id = q.run_id and r.thread_id = $2 and r.tenant = $3 and r.owner = $4
              and r.status = 'pending'
            returning q.run_id)
         update ${s}.runs set status = 'interrupted', updated_at = now()
          where run_id in (select run_id from dequeued) and status = 'pending' returning run_id`,
        [runId, threadId, owner.tenant, owner.user_id],
      );
      return (result.rowCount ?? 0) > 0;
    },
  };
}
