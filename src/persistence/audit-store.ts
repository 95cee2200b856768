/** The Postgres side of the audit events (`<schema>.audit_events`). */
import type pg from "pg";
import type { AuditEvent, AuditStore } from "../runtime/audit.js";
import { replaceUnstorable } from "../policy/safe-text.js";
import { quoteSchemaName } from "./ledger-store.js";

export function auditMigrations(schema: string): string[] {
  const s = quoteSchemaName(schema);
  return [
    `create schema if not exists ${s}`,
    `create table if not exists ${s}.audit_events (
      thread_id text not null,
      run_id text not null,
      kind text not null,
      subject text not null,
      node text not null,
      actor text not null,
      code text not null,
      tool text,
      detail text not null,
      at timestamptz not null,
      primary key (thread_id, run_id, kind, subject)
    )`,
    `create index if not exists audit_events_by_code on ${s}.audit_events (kind, code, at desc)`,
  ];
}

const COLUMNS = ["thread_id", "run_id", "kind", "subject", "node", "actor", "code", "tool", "detail", "at"] as const;

export function createAuditStore(pool: pg.Pool, schema: string): AuditStore {
  const table = `${quoteSchemaName(schema)}.audit_events`;
  return {
    async record(events) {
      for (const event of events) {
        const placeholders = COLUMNS.map((_, index) => `$${index + 1}`).join(", ");
        // Details quote untrusted text (model output, server errors); a NUL would fail the insert (22021) and with it the run.
        const values = COLUMNS.map((column) => {
          const value = event[column];
          return typeof value === "string" ? replaceUnstorable(value) : value;
        });
        await pool.query(`insert into ${table} (${COLUMNS.join(", ")}) values (${placeholders}) on conflict do nothing`, values);
      }
    },
    async list(threadId) {
      const result = await pool.query(
        `select ${COLUMNS.filter((column) => column !== "at").join(", ")}, to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at
           from ${table} where thread_id = $1 order by at, kind, subject`,
        [threadId],
      );
      return result.rows as AuditEvent[];
    },
  };
}
