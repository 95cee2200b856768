/**
 * The ledger table (`<schema>.ledger`): its statements for migration 1, its
 * one column list (what every insert writes and every read selects, with
 * the type each value is sent as), and a stored row read back as a
 * `LedgerRow`. The audit chain's snapshot of a ledger row
 * (`COVERED_COLUMNS.ledger` in src/audit/chain.ts, in its hashed
 * order) is a subset of these columns, and audit-chain-store.ts casts them
 * to text by the types listed here.
 */
import { LedgerRowSchema, type LedgerRow } from "../state/ledger.js";
import { quoteSchemaName } from "../sql-names.js";

/**
 * Idempotent DDL for the ledger, in order. The caller runs it under the setup
 * advisory lock because `create ... if not exists` still races on the catalog
 * when two processes run it at the same moment.
 */
export function ledgerTables(schema: string): string[] {
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
    // Whether a write's request left the process (issue 46): null on reads and on rows older than the column.
    `alter table ${quoted}.ledger add column if not exists sent boolean`,
  ];
}

/** Migration 2: the task id of a write its server runs as an MCP task (src/mcp/tasks.ts). */
export function ledgerTaskColumn(schema: string): string[] {
  return [`alter table ${quoteSchemaName(schema)}.ledger add column if not exists task_id text`];
}

/** A ledger column beside `thread_id` (the key every statement names), and the SQL type its value is sent as. */
export interface LedgerColumn {
  name: keyof LedgerRow;
  type: "text" | "integer" | "timestamptz" | "boolean";
}

/** Every ledger column but `thread_id`, in the order inserts write them and reads select them. */
export const LEDGER_COLUMNS: readonly LedgerColumn[] = [
  { name: "call_id", type: "text" },
  { name: "attempt", type: "integer" },
  { name: "tool", type: "text" },
  { name: "server", type: "text" },
  { name: "risk", type: "text" },
  { name: "fingerprint", type: "text" },
  { name: "idempotency_key", type: "text" },
  { name: "status", type: "text" },
  { name: "error_code", type: "text" },
  { name: "started_at", type: "timestamptz" },
  { name: "finished_at", type: "timestamptz" },
  { name: "elapsed_ms", type: "integer" },
  { name: "reconciles", type: "integer" },
  { name: "reconciled_by", type: "integer" },
  { name: "run_id", type: "text" },
  { name: "owner", type: "text" },
  { name: "approved_by", type: "text" },
  { name: "sent", type: "boolean" },
  { name: "task_id", type: "text" },
];

/** `LEDGER_COLUMNS` as a select (and insert) list. */
export const LEDGER_COLUMN_LIST = LEDGER_COLUMNS.map((column) => column.name).join(", ");

/** The ledger columns of a type, for readers that turn values into text (audit-chain-store.ts). */
export function ledgerColumnsOfType(type: LedgerColumn["type"]): string[] {
  return LEDGER_COLUMNS.filter((column) => column.type === type).map((column) => column.name);
}

/** A row as `pg` returns it: timestamps arrive as `Date` (default parser) or text (if someone changed the parser). */
export type StoredRow = Record<string, unknown>;

/** Normalizes timestamps to ISO strings, leaves out unset reconciliation links, then validates the whole row. */
export function toLedgerRow(stored: StoredRow): LedgerRow {
  const {
    reconciles,
    reconciled_by: reconciledBy,
    run_id: runId,
    owner,
    approved_by: approvedBy,
    sent,
    task_id: taskId,
    ...rest
  } = stored;
  return LedgerRowSchema.parse({
    ...rest,
    ...(typeof runId === "string" ? { run_id: runId } : {}),
    ...(typeof owner === "string" ? { owner } : {}),
    ...(typeof approvedBy === "string" ? { approved_by: approvedBy } : {}),
    ...(typeof sent === "boolean" ? { sent } : {}),
    ...(typeof taskId === "string" ? { task_id: taskId } : {}),
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
