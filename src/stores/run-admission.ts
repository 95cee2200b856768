/**
 * Run admission: a run starts by taking its thread's lease, and only while
 * the thread's owner has fewer than `limit` runs in progress, in ONE
 * transaction, so the limit holds across any number of server processes on
 * this Postgres.
 *
 * A run in progress IS a live thread lease (`active_run` set and
 * `lease_until` in the future): one run per thread, held from admission to
 * the run's end. So the count needs no counter of its own to keep right:
 * every terminal path already releases the lease (runs.ts), and a process
 * that dies mid-run stops renewing it, so its runs stop counting when their
 * lease expires, without waiting for the orphan sweep.
 *
 * Counting and then updating is only atomic when no other admission of the
 * same owner runs in between, so the admission first takes a per-owner
 * advisory transaction lock (released at commit or rollback, also when the
 * connection dies). Under READ COMMITTED each statement after the lock sees
 * every admission committed before it.
 *
 * The lock, the count and the lease are one call of a database function
 * (`admit_run`, migration 5), sent as one statement: the lock is held for
 * the function's own few statements, not across the client's round trips.
 * Held across a begin, three statements and a commit, an owner's admissions
 * queued behind each other's network and event-loop waits: 50 runs of one
 * user started at once waited 19 ms each for the lock at the median, 86 ms
 * at worst, on a busy 2-core machine.
 */
import type pg from "pg";
import { IDEMPOTENT } from "../db/retry.js";
import { quoteSchemaName } from "../sql-names.js";
import type { Owner } from "./thread-rows.js";

/** The fields a run writes on its thread when it takes the lease. */
export interface LeaseFields {
  graph_id: string;
  run_bound?: Record<string, string>;
}

export type Admission =
  | { type: "admitted" }
  /** Another run holds the thread's live lease. */
  | { type: "thread_busy" }
  /** The owner already has `in_flight` (≥ limit) runs in progress. */
  | { type: "over_limit"; in_flight: number };

export interface RunAdmission {
  /** Takes the thread's lease for `runId` if the owner is under `limit` and the thread is free. */
  admit(
    owner: Owner,
    threadId: string,
    runId: string,
    options: { leaseMs: number; limit: number; fields: LeaseFields },
  ): Promise<Admission>;
  /** The owner's runs in progress now (live leases), in any process. */
  inFlight(owner: Owner): Promise<number>;
  /**
   * Threads whose lease expired while pointing at no live run: the run row
   * was never written (its process died between the lease and the row), or
   * the run ended and its process died before releasing. Of one thread when given.
   */
  stranded(threadId?: string): Promise<StrandedLease[]>;
}

/** An expired lease that holds a thread for no live run (see `stranded`). */
export interface StrandedLease {
  thread_id: string;
  /** The run id the lease points at (it may have no row). */
  active_run: string;
  /** The graph the leasing run was for (the thread's status is read from its checkpoint). */
  graph_id: string | null;
}

/**
 * Migration 5: the admission as one function call. Its statements are the
 * lock (`admissionLockStatement`'s keys, passed in), the count
 * (`countStatement`) and the lease (`leaseStatement`), in that order; a
 * plpgsql function is VOLATILE, so each of its statements takes a snapshot
 * of its own, after the lock. Answers the outcome and the owner's runs in
 * progress (its own not counted).
 */
export function admissionFunction(schema: string): string[] {
  const s = quoteSchemaName(schema);
  return [
    `create or replace function ${s}.admit_run(p_thread uuid, p_tenant text, p_owner text, p_run uuid,
       p_lease_ms double precision, p_graph text, p_run_bound jsonb, p_limit integer, p_lock_space text, p_lock_key text)
       returns table (outcome text, in_flight integer) language plpgsql volatile as $$
     declare
       running integer;
     begin
       perform pg_advisory_xact_lock(hashtext(p_lock_space), hashtext(p_lock_key));
       select count(*)::int into running from ${s}.threads t
        where t.tenant = p_tenant and t.owner = p_owner and t.active_run is not null and t.lease_until > now()
          and t.active_run is distinct from p_run;
       if running >= p_limit then
         return query select 'over_limit'::text, running;
         return;
       end if;
       update ${s}.threads t
          set active_run = p_run, lease_until = now() + make_interval(secs => p_lease_ms / 1000),
              status = 'busy', graph_id = p_graph, run_bound = coalesce(p_run_bound, t.run_bound), updated_at = now()
        where t.thread_id = p_thread and t.tenant = p_tenant and t.owner = p_owner
          and (t.active_run is null or t.lease_until < now() or t.active_run = p_run);
       return query select (case when found then 'admitted' else 'thread_busy' end)::text, running;
     end
     $$`,
  ];
}

/** Counting an owner's live leases reads only the leased threads. */
export function admissionTables(schema: string): string[] {
  const s = quoteSchemaName(schema);
  return [
    `create index if not exists threads_leased_by_owner on ${s}.threads (tenant, owner) where active_run is not null`,
  ];
}

/**
 * The one conditional UPDATE that takes a thread's run lease (a row comes
 * back when it was taken): free, or its holder's lease has run out, or
 * already this run's (its admission is repeated after a lost COMMIT).
 */
export function leaseStatement(
  schema: string,
  owner: Owner,
  threadId: string,
  runId: string,
  leaseMs: number,
  fields: LeaseFields,
): pg.QueryConfig {
  const s = quoteSchemaName(schema);
  return {
    text: `update ${s}.threads
              set active_run = $4, lease_until = now() + make_interval(secs => $5::double precision / 1000),
                  status = 'busy', graph_id = $6, run_bound = coalesce($7::jsonb, run_bound), updated_at = now()
            where thread_id = $1 and tenant = $2 and owner = $3 and (active_run is null or lease_until < now() or active_run = $4)
            returning thread_id::text`,
    values: leaseValues(owner, threadId, runId, leaseMs, fields),
  };
}

/** The lease's parameters, $1…$7: `leaseStatement`'s, and the first seven of `admit_run`. */
function leaseValues(owner: Owner, threadId: string, runId: string, leaseMs: number, fields: LeaseFields): unknown[] {
  const runBound = fields.run_bound ? JSON.stringify(fields.run_bound) : null;
  return [threadId, owner.tenant, owner.user_id, runId, leaseMs, fields.graph_id, runBound];
}

/**
 * The advisory lock one owner's admissions serialize on: a two-key lock
 * (its own key space, apart from the one-key setup lock), namespaced by the
 * schema so two deployments in one database never wait on each other. A
 * hash collision between owners only serializes them; it never admits more.
 */
export function admissionLockStatement(schema: string, owner: Owner): pg.QueryConfig {
  return {
    text: "select pg_advisory_xact_lock(hashtext($1), hashtext($2))",
    values: [`warrant.run_admission:${schema}`, `${owner.tenant}\u001f${owner.user_id}`],
  };
}

export function createRunAdmission(pool: pg.Pool, schema: string): RunAdmission {
  const s = quoteSchemaName(schema);
  // An owner's runs in progress, `runId`'s not counted (admit_run counts the same way).
  const countStatement = (owner: Owner, runId: string | null = null): pg.QueryConfig => ({
    text: `select count(*)::int as n from ${s}.threads where tenant = $1 and owner = $2 and active_run is not null and lease_until > now()
              and active_run is distinct from $3::uuid`,
    values: [owner.tenant, owner.user_id, runId],
  });
  return {
    async admit(owner, threadId, runId, { leaseMs, limit, fields }) {
      const [lockSpace, lockKey] = admissionLockStatement(schema, owner).values ?? [];
      // One statement, repeated whole after a transient failure (also a lost answer): the run's own lease counts
      // for nothing against it and may be taken again.
      const result = await pool.query<{ outcome: Admission["type"]; in_flight: number }>(
        `${IDEMPOTENT}select outcome, in_flight from ${s}.admit_run($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10)`,
        [...leaseValues(owner, threadId, runId, leaseMs, fields), limit, lockSpace, lockKey],
      );
      const row = result.rows[0];
      if (row === undefined) throw new Error("admit_run answered no row");
      return row.outcome === "over_limit" ? { type: "over_limit", in_flight: row.in_flight } : { type: row.outcome };
    },
    async inFlight(owner) {
      return (await pool.query<{ n: number }>(countStatement(owner))).rows[0]?.n ?? 0;
    },
    async stranded(threadId) {
      const result = await pool.query<StrandedLease>(
        `select t.thread_id::text as thread_id, t.active_run::text as active_run, t.graph_id from ${s}.threads t
          where t.active_run is not null and t.lease_until < now() and ($1::uuid is null or t.thread_id = $1::uuid)
            and not exists (select 1 from ${s}.runs r where r.run_id = t.active_run and r.status in ('pending', 'running'))`,
        [threadId ?? null],
      );
      return result.rows;
    },
  };
}
