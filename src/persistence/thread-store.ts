/**
 * What the API server keeps beside the checkpoints: who owns each thread,
 * its runs, and the one-run-at-a-time lock. The lock is a lease on the
 * thread row (`active_run`, `lease_until`), taken with one conditional
 * UPDATE, so any number of server processes sharing this Postgres agree on
 * which of them runs a thread; a process that dies holding it loses it when
 * the lease runs out, and another process may continue the thread.
 *
 * Every read and write names the owner: a thread that belongs to somebody
 * else is indistinguishable from one that does not exist.
 */
import type pg from "pg";
import { quoteSchemaName } from "../sql-names.js";
import { replaceUnstorable } from "../policy/safe-text.js";
import { IDEMPOTENT, transaction } from "./retry.js";
import { createRunKeyStore, type RunKeyStore } from "./run-keys.js";
import { createRunAdmission, leaseStatement, type LeaseFields, type RunAdmission } from "./run-admission.js";

export type ThreadStatus = "idle" | "busy" | "interrupted" | "error";
/** An API run's status (the LangGraph API's names), not the agent's `RunStatus` in state/transitions.ts. */
export type ApiRunStatus = "pending" | "running" | "success" | "error" | "interrupted" | "timeout";

/** The owner of a thread: the verified principal's tenant and user. */
export interface Owner {
  tenant: string;
  user_id: string;
}

export interface ThreadRow {
  thread_id: string;
  owner: string;
  tenant: string;
  metadata: Record<string, unknown>;
  graph_id: string | null;
  run_bound: Record<string, string>;
  status: ThreadStatus;
  /** Public state values kept when a run ends (`status`, `termination_reason`, `result`), for `values` filters. */
  state_values: Record<string, unknown>;
  active_run: string | null;
  created_at: Date;
  updated_at: Date;
}

/** Work that commits with a run's final status, on that transaction's client (see `setRunStatus`). */
export type RunEndHook = (client: pg.ClientBase, ended: RunRow) => Promise<void>;

export interface RunRow {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  owner: string;
  tenant: string;
  status: ApiRunStatus;
  metadata: Record<string, unknown>;
  kwargs: Record<string, unknown>;
  error: { error: string; message: string } | null;
  /** Where the run left the thread: its status and, when it ended, why (the termination reason). */
  outcome: RunOutcome | null;
  cancel_requested: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface RunOutcome {
  status: string;
  termination_reason: unknown;
  pending_review: boolean;
  /** The Warrant run (`state.run.run_id`, ledger, approvals, audit) this API run worked on. */
  warrant_run_id?: string;
}

export interface ThreadSearch {
  /**
   * Metadata containment. The keys the server owns and shows in every
   * thread's metadata (`owner`, `tenant`, `graph_id`, `assistant_id`) are
   * matched against the thread row's own columns.
   */
  metadata?: Record<string, unknown> | undefined;
  /** Containment on the state values kept at each run's end (`state_values`). */
  values?: Record<string, unknown> | undefined;
  /** Only these thread ids. */
  ids?: string[] | undefined;
  status?: ThreadStatus | undefined;
  sort_by?: "thread_id" | "status" | "created_at" | "updated_at" | undefined;
  sort_order?: "asc" | "desc" | undefined;
  limit: number;
  offset: number;
}

/** Metadata keys matched against the thread row's columns, not its metadata json. */
const COLUMN_KEYS: Record<string, string> = {
  owner: "owner",
  tenant: "tenant",
  graph_id: "graph_id",
  assistant_id: "graph_id",
};

export interface ThreadStore {
  create(
    owner: Owner,
    thread: { thread_id: string; metadata: Record<string, unknown>; graph_id?: string | undefined },
  ): Promise<ThreadRow | undefined>;
  get(owner: Owner, threadId: string): Promise<ThreadRow | undefined>;
  search(owner: Owner, query: ThreadSearch): Promise<ThreadRow[]>;
  count(owner: Owner, query: Omit<ThreadSearch, "limit" | "offset" | "sort_by" | "sort_order">): Promise<number>;
  patchMetadata(owner: Owner, threadId: string, metadata: Record<string, unknown>): Promise<ThreadRow | undefined>;
  /** Deletes an idle thread (and its runs); false when missing or busy. */
  delete(owner: Owner, threadId: string): Promise<"deleted" | "missing" | "busy">;
  /**
   * Takes the thread's run lease for `runId` when nobody holds a live one.
   * Returns false when another run holds it.
   */
  acquire(owner: Owner, threadId: string, runId: string, leaseMs: number, fields: LeaseFields): Promise<boolean>;
  /** Extends the lease; false when the run no longer holds it. Also reports a cancel request. */
  heartbeat(threadId: string, runId: string, leaseMs: number): Promise<{ held: boolean; cancel: boolean }>;
  /** Releases the lease and sets the thread's status and kept values (only if `runId` still holds it). */
  release(threadId: string, runId: string, status: ThreadStatus, values?: Record<string, unknown>): Promise<void>;

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
  /** Run-level idempotency keys (API `Idempotency-Key`, CLI `--idempotency-key`). */
  readonly runKeys: RunKeyStore;
  /** Takes a thread's lease only while its owner is under the run limit, in one atomic step. */
  readonly admission: RunAdmission;
  /** The reviewer inbox's threads: interrupted threads of a tenant (of one owner, when given), newest first. */
  interruptedThreads(tenant: string, options: { owner?: string | undefined; limit: number }): Promise<ThreadRow[]>;
  /** A thread of the tenant, whoever owns it (the inbox's lookup; never an owner's route). */
  getInTenant(tenant: string, threadId: string): Promise<ThreadRow | undefined>;
}

const THREAD_COLUMNS = [
  "thread_id::text as thread_id",
  "owner",
  "tenant",
  "metadata",
  "graph_id",
  "run_bound",
  "status",
  "state_values",
  "active_run::text as active_run",
  "created_at",
  "updated_at",
].join(", ");
export const runColumns = (alias = "") =>
  [
    "run_id::text as run_id",
    "thread_id::text as thread_id",
    "assistant_id",
    "owner",
    "tenant",
    "status",
    "metadata",
    "kwargs",
    "error",
    "outcome",
    "cancel_requested",
    "created_at",
    "updated_at",
  ]
    .map((column) => `${alias}${column}`)
    .join(", ");
const RUN_COLUMNS = runColumns();

export function createThreadStore(pool: pg.Pool, schema: string): ThreadStore {
  const s = quoteSchemaName(schema);
  const one = async <T>(sql: string, params: unknown[]): Promise<T | undefined> =>
    (await pool.query(sql, params)).rows[0] as T | undefined;
  const many = async <T>(sql: string, params: unknown[]): Promise<T[]> => (await pool.query(sql, params)).rows as T[];

  const filters = (owner: Owner, query: Omit<ThreadSearch, "limit" | "offset" | "sort_by" | "sort_order">) => {
    const clauses = ["tenant = $1", "owner = $2"];
    const params: unknown[] = [owner.tenant, owner.user_id];
    const json: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(query.metadata ?? {})) {
      const column = Object.hasOwn(COLUMN_KEYS, key) ? COLUMN_KEYS[key] : undefined;
      if (column === undefined) {
        json[key] = value;
      } else if (typeof value !== "string") {
        // These columns hold strings: any other value matches no thread.
        clauses.push("false");
      } else {
        params.push(value);
        clauses.push(`${column} = $${params.length}`);
      }
    }
    if (Object.keys(json).length > 0) {
      params.push(JSON.stringify(json));
      clauses.push(`metadata @> $${params.length}::jsonb`);
    }
    if (query.values && Object.keys(query.values).length > 0) {
      params.push(JSON.stringify(query.values));
      clauses.push(`state_values @> $${params.length}::jsonb`);
    }
    if (query.status) {
      params.push(query.status);
      clauses.push(`status = $${params.length}`);
    }
    if (query.ids) {
      params.push(query.ids);
      clauses.push(`thread_id = any($${params.length}::uuid[])`);
    }
    return { where: clauses.join(" and "), params };
  };

  return {
    runKeys: createRunKeyStore(pool, schema),
    admission: createRunAdmission(pool, schema),
    create: (owner, thread) =>
      one<ThreadRow>(
        `insert into ${s}.threads (thread_id, owner, tenant, metadata, graph_id) values ($1, $2, $3, $4::jsonb, $5)
         on conflict (thread_id) do nothing returning ${THREAD_COLUMNS}`,
        [thread.thread_id, owner.user_id, owner.tenant, JSON.stringify(thread.metadata), thread.graph_id ?? null],
      ),
    get: (owner, threadId) =>
      one<ThreadRow>(`select ${THREAD_COLUMNS} from ${s}.threads where thread_id = $1 and tenant = $2 and owner = $3`, [
        threadId,
        owner.tenant,
        owner.user_id,
      ]),
    async search(owner, query) {
      const { where, params } = filters(owner, query);
      params.push(query.limit, query.offset);
      // Column and direction come from closed lists (never from request text).
      const column = { thread_id: "thread_id", status: "status", created_at: "created_at", updated_at: "updated_at" }[
        query.sort_by ?? "updated_at"
      ];
      const direction = query.sort_order === "asc" ? "asc" : "desc";
      return many<ThreadRow>(
        `select ${THREAD_COLUMNS} from ${s}.threads where ${where}
          order by ${column} ${direction}, thread_id ${direction}
          limit $${params.length - 1} offset $${params.length}`,
        params,
      );
    },
    async count(owner, query) {
      const { where, params } = filters(owner, query);
      const row = await one<{ n: string }>(`select count(*)::text as n from ${s}.threads where ${where}`, params);
      return Number(row?.n ?? 0);
    },
    patchMetadata: (owner, threadId, metadata) =>
      one<ThreadRow>(
        `update ${s}.threads set metadata = metadata || $4::jsonb, updated_at = now()
          where thread_id = $1 and tenant = $2 and owner = $3
          returning ${THREAD_COLUMNS}`,
        [threadId, owner.tenant, owner.user_id, JSON.stringify(metadata)],
      ),
    async delete(owner, threadId) {
      const row = await one<{ thread_id: string }>(
        `delete from ${s}.threads
          where thread_id = $1 and tenant = $2 and owner = $3 and (active_run is null or lease_until < now())
          returning thread_id::text`,
        [threadId, owner.tenant, owner.user_id],
      );
      if (row) return "deleted";
      return (await this.get(owner, threadId)) ? "busy" : "missing";
    },
    async acquire(owner, threadId, runId, leaseMs, fields) {
      return (await pool.query(leaseStatement(schema, owner, threadId, runId, leaseMs, fields))).rows.length > 0;
    },
    async heartbeat(threadId, runId, leaseMs) {
      const row = await one<{ cancel: boolean }>(
        `${IDEMPOTENT}with lease as (
           update ${s}.threads set lease_until = now() + make_interval(secs => $3::double precision / 1000)
            where thread_id = $1 and active_run = $2 returning thread_id)
         select exists(select 1 from lease) as held,
                coalesce((select cancel_requested from ${s}.runs where run_id = $2), false) as cancel`,
        [threadId, runId, leaseMs],
      );
      const result = row as unknown as { held: boolean; cancel: boolean } | undefined;
      return { held: result?.held ?? false, cancel: result?.cancel ?? false };
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
    async createRun(owner, run) {
      const row = await one<RunRow>(
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
      one<RunRow>(
        `select ${RUN_COLUMNS} from ${s}.runs where run_id = $1 and thread_id = $2 and tenant = $3 and owner = $4`,
        [runId, threadId, owner.tenant, owner.user_id],
      ),
    listRuns: (owner, threadId, options) =>
      many<RunRow>(
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
      one<RunRow>(
        `update ${s}.runs set cancel_requested = true, updated_at = now()
          where run_id = $1 and thread_id = $2 and tenant = $3 and owner = $4 returning ${RUN_COLUMNS}`,
        [runId, threadId, owner.tenant, owner.user_id],
      ),
    // A pending run (delayed or queued: run-queue-store.ts) holds no lease; it is never an orphan.
    orphanedRuns: (threadId) =>
      many<RunRow>(
        `select ${runColumns("r.")} from ${s}.runs r join ${s}.threads t on t.thread_id = r.thread_id
          where r.status = 'running' and (t.active_run is distinct from r.run_id or t.lease_until < now())
            and ($1::uuid is null or r.thread_id = $1::uuid)`,
        [threadId ?? null],
      ),
    interruptedThreads: (tenant, options) =>
      many<ThreadRow>(
        `select ${THREAD_COLUMNS} from ${s}.threads where tenant = $1 and status = 'interrupted' and ($2::text is null or owner = $2)
          order by updated_at desc, thread_id limit $3`,
        [tenant, options.owner ?? null, options.limit],
      ),
    getInTenant: (tenant, threadId) =>
      one<ThreadRow>(`select ${THREAD_COLUMNS} from ${s}.threads where thread_id = $1 and tenant = $2`, [
        threadId,
        tenant,
      ]),
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
