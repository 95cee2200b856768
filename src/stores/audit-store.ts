/** The Postgres side of the audit events (`<schema>.audit_events`). */
import type pg from "pg";
import { AUDIT_KINDS, type AuditEvent, type AuditStore } from "../audit/events.js";
import { replaceUnstorable } from "../policy/safe-text.js";
import { chainedStatement } from "./audit-chain-store.js";
import { quoteSchemaName } from "../sql-names.js";
import { Params } from "../db/sql-params.js";
import type { ThreadStatements } from "../checkpoint/write-ahead.js";

export function auditTables(schema: string): string[] {
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

const UNIQUE_VIOLATION = "23505";

/** The event with every text field storable (U+FFFD for NUL and lone surrogates). */
function storable(event: AuditEvent): AuditEvent {
  const copy = { ...event };
  for (const column of COLUMNS) {
    const value = copy[column];
    if (typeof value === "string") (copy as Record<string, unknown>)[column] = replaceUnstorable(value);
  }
  return copy;
}

/** `statements`: the thread's deferred ledger statements are written first, so a run's last link is still how it ended. */
export function createAuditStore(
  pool: pg.Pool,
  schema: string,
  statements?: Pick<ThreadStatements, "settle">,
): AuditStore {
  const table = `${quoteSchemaName(schema)}.audit_events`;
  return {
    async record(events, run) {
      for (const raw of events) {
        await statements?.settle(raw.thread_id);
        // Details quote untrusted text (model output, server errors); a NUL would fail the insert (22021) and with it the run.
        const event = storable(raw);
        const params = new Params();
        if (!run) {
          const placeholders = COLUMNS.map((column) =>
            params.add(event[column], column === "at" ? "timestamptz" : "text"),
          ).join(", ");
          await pool.query(
            `insert into ${table} (${COLUMNS.join(", ")}) values (${placeholders}) on conflict do nothing`,
            params.values,
          );
          continue;
        }
        // The event is its own chain link. One already stored (a node replayed after a crash) appends nothing.
        const [thread, runId, kind, subject] = [
          params.add(event.thread_id),
          params.add(run.run_id),
          params.add(event.kind),
          params.add(event.subject),
        ];
        const link = `select ${thread} as thread_id, ${runId} as run_id, ${kind} as kind, ${subject} as subject, false as numbered,
                             ${params.add(event.node)} as node, ${params.add(event.actor)} as actor,
                             ${params.add(event.code)} as code, ${params.add(event.tool)} as tool,
                             ${params.add(event.detail)} as detail, ${params.add(event.at, "timestamptz")} as at
                       where not exists (select 1 from ${table} e
                                          where e.thread_id = ${thread} and e.run_id = ${runId}
                                            and e.kind = ${kind} and e.subject = ${subject})`;
        try {
          await pool.query(chainedStatement(schema, params, run, { ctes: [], link }), params.values);
        } catch (error) {
          // The same event written at the same moment by a second copy of the node: the statement (head included) rolled back.
          if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION) throw error;
        }
      }
    },
    async list(threadId) {
      const result = await pool.query(
        `select ${COLUMNS.filter((column) => column !== "at").join(", ")},
                to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at
           from ${table} where thread_id = $1 and kind = any($2::text[]) order by at, kind, subject`,
        // The nodes' events; the chain's link events for ledger and approval rows are read by verification.
        [threadId, [...AUDIT_KINDS]],
      );
      return result.rows as AuditEvent[];
    },
  };
}
