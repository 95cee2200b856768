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
 * same owner runs in between, so the transaction first takes a per-owner
 * advisory transaction lock (released at commit or rollback, also when the
 * connection dies). Under READ COMMITTED each statement after the lock sees
 * every admission committed before it.
 */
import type pg from "pg";
import { quoteSchemaName } from "../sql-names.js";
import { transaction } from "./retry.js";
import type { Owner } from "./thread-store.js";

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

/** Counting an owner's live leases reads only the leased threads. */
export function admissionMigrations(schema: string): string[] {
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
    values: [
      threadId,
      owner.tenant,
      owner.user_id,
      runId,
      leaseMs,
      fields.graph_id,
      fields.run_bound ? JSON.stringify(fields.run_bound) : null,
    ],
  };
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
  // A run retrying its own admission (its COMMIT's answer was lost) does not count against itself.
  const countStatement = (owner: Owner, runId: string | null = null): pg.QueryConfig => ({
    text: `select count(*)::int as n from ${s}.threads where tenant = $1 and owner = $2 and active_run is not null and lease_until > now()
              and active_run is distinct from $3::uuid`,
    values: [owner.tenant, owner.user_id, runId],
  });
  return {
    admit(owner, threadId, runId, { leaseMs, limit, fields }) {
      // Held only for these four statements; nothing else is awaited meanwhile (the embedded pool has one client).
      // Retried whole after a transient failure, also one during COMMIT: the lease statement lets a run take its own lease again.
      return transaction(
        pool,
        async (client): Promise<Admission> => {
          await client.query(admissionLockStatement(schema, owner));
          const inFlight = (await client.query<{ n: number }>(countStatement(owner, runId))).rows[0]?.n ?? 0;
          if (inFlight >= limit) return { type: "over_limit", in_flight: inFlight };
          const taken =
            (await client.query(leaseStatement(schema, owner, threadId, runId, leaseMs, fields))).rows.length > 0;
          return taken ? { type: "admitted" } : { type: "thread_busy" };
        },
        { idempotent: true },
      );
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
