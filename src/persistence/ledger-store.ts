/**
 * The Postgres side of the effect ledger (`<schema>.ledger`). Every statement
 * is parameterized; the only interpolated identifier is the schema name,
 * which is validated against a strict pattern and then double-quoted.
 */
import type pg from "pg";
import { ConfigError, InvariantError } from "../errors.js";
import { LedgerRowSchema, type LedgerOutcome, type LedgerRow, type LedgerStore } from "../runtime/ledger.js";

/** Lower-case Postgres identifier of at most 63 bytes: safe to quote, never needs escaping. */
const SCHEMA_NAME_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The schema name as a quoted SQL identifier.
 * Throws `ConfigError("config_invalid")` for anything outside `^[a-z_][a-z0-9_]{0,62}$`.
 */
export function quoteSchemaName(schema: string): string {
  if (!SCHEMA_NAME_PATTERN.test(schema)) {
    throw new ConfigError("config_invalid", `database schema name ${JSON.stringify(schema)} must match ${SCHEMA_NAME_PATTERN.source}`);
  }
  return `"${schema}"`;
}

/**
 * Idempotent DDL for the ledger, in order. The caller runs it under the setup
 * advisory lock because `create ... if not exists` still races on the catalog
 * when two processes run it at the same moment.
 */
export function ledgerMigrations(schema: string): string[] {
  const quoted = quoteSchemaName(schema);
  return [
    `create schema if not exists ${quoted}`,
    `create table if not exists ${quoted}.ledger (
      thread_id text not null,
      call_id text not null,
      attempt integer not null,
      tool text not null,
      server text not null,
      risk text not null,
      fingerprint text not null,
      idempotency_key text,
      status text not null,
      error_code text,
      started_at timestamptz not null,
      finished_at timestamptz,
      elapsed_ms integer,
      primary key (thread_id, call_id, attempt)
    )`,
    `create index if not exists ledger_thread_id_idx on ${quoted}.ledger (thread_id)`,
    // Reconciliation of unknown write outcomes (added after the first release, hence not in the create).
    `alter table ${quoted}.ledger add column if not exists reconciles integer`,
    `alter table ${quoted}.ledger add column if not exists reconciled_by integer`,
    // One run id across tables; the owner every effect acts for, and who approved it.
    `alter table ${quoted}.ledger add column if not exists run_id text`,
    `alter table ${quoted}.ledger add column if not exists owner text`,
    `alter table ${quoted}.ledger add column if not exists approved_by text`,
    `create index if not exists ledger_run_id_idx on ${quoted}.ledger (run_id)`,
  ];
}

const COLUMNS =
  "call_id, attempt, tool, server, risk, fingerprint, idempotency_key, status, error_code, started_at, finished_at, elapsed_ms, reconciles, reconciled_by, run_id, owner, approved_by";

/** A row as `pg` returns it: timestamps arrive as `Date` (default parser) or text (if someone changed the parser). */
type StoredRow = Record<string, unknown>;

/**
 * A `LedgerStore` over `pool`, in `schema` (default layout from `ledgerMigrations`).
 * Uses only `pool.query`, so it never holds a client: safe with the one-connection embedded pool.
 */
export function createLedgerStore(pool: pg.Pool, schema: string): LedgerStore {
  const table = `${quoteSchemaName(schema)}.ledger`;

  return {
    async begin(threadId: string, row: LedgerRow): Promise<void> {
      requireThreadId(threadId);
      // Validate before writing so a malformed row never reaches the durable record.
      const valid = LedgerRowSchema.parse(row);
      await pool.query(
        `insert into ${table} (thread_id, ${COLUMNS})
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::timestamptz, $12::timestamptz, $13, $14, $15, $16, $17, $18)`,
        [
          threadId,
          valid.call_id,
          valid.attempt,
          valid.tool,
          valid.server,
          valid.risk,
          valid.fingerprint,
          valid.idempotency_key,
          valid.status,
          valid.error_code,
          valid.started_at,
          valid.finished_at,
          valid.elapsed_ms,
          valid.reconciles ?? null,
          valid.reconciled_by ?? null,
          valid.run_id ?? null,
          valid.owner ?? null,
          valid.approved_by ?? null,
        ],
      );
    },

    async finish(threadId: string, callId: string, attempt: number, outcome: LedgerOutcome): Promise<void> {
      requireThreadId(threadId);
      const valid = LedgerRowSchema.pick({ status: true, error_code: true, finished_at: true, elapsed_ms: true, reconciled_by: true }).parse(outcome);
      // An absent reconciled_by keeps the stored one (coalesce), so finishing never erases a reconciliation.
      const result = await pool.query(
        `update ${table}
            set status = $4, error_code = $5, finished_at = $6::timestamptz, elapsed_ms = $7, reconciled_by = coalesce($8, reconciled_by)
          where thread_id = $1 and call_id = $2 and attempt = $3`,
        [threadId, callId, attempt, valid.status, valid.error_code, valid.finished_at, valid.elapsed_ms, valid.reconciled_by ?? null],
      );
      // Finishing an attempt that was never begun means the caller lost track of its own effects.
      if (result.rowCount !== 1) {
        throw new InvariantError("illegal_transition", `ledger has no attempt ${attempt} of call ${callId} in thread ${threadId}`);
      }
    },

    async list(threadId: string): Promise<LedgerRow[]> {
      const result = await pool.query<StoredRow>(
        `select ${COLUMNS} from ${table} where thread_id = $1 order by started_at, call_id, attempt`,
        [threadId],
      );
      return result.rows.map(toLedgerRow);
    },

    async latest(threadId: string, callId: string): Promise<LedgerRow | undefined> {
      const result = await pool.query<StoredRow>(
        `select ${COLUMNS} from ${table} where thread_id = $1 and call_id = $2 order by attempt desc limit 1`,
        [threadId, callId],
      );
      const first = result.rows[0];
      return first === undefined ? undefined : toLedgerRow(first);
    },
  };
}

function requireThreadId(threadId: string): void {
  if (threadId.length === 0) throw new InvariantError("illegal_transition", "ledger thread id must not be empty");
}

/** Normalizes timestamps to ISO strings, leaves out unset reconciliation links, then validates the whole row. */
function toLedgerRow(stored: StoredRow): LedgerRow {
  const { reconciles, reconciled_by: reconciledBy, run_id: runId, owner, approved_by: approvedBy, ...rest } = stored;
  return LedgerRowSchema.parse({
    ...rest,
    ...(typeof runId === "string" ? { run_id: runId } : {}),
    ...(typeof owner === "string" ? { owner } : {}),
    ...(typeof approvedBy === "string" ? { approved_by: approvedBy } : {}),
    started_at: toIsoString(stored.started_at),
    finished_at: stored.finished_at === null ? null : toIsoString(stored.finished_at),
    ...(reconciles === null || reconciles === undefined ? {} : { reconciles }),
    ...(reconciledBy === null || reconciledBy === undefined ? {} : { reconciled_by: reconciledBy }),
  });
}

function toIsoString(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "string") {
    const parsed = new Date(value);
    return Number.isNaN(parsed.getTime()) ? value : parsed.toISOString();
  }
  // Anything else is left for the schema to reject with a clear message.
  return value;
}
