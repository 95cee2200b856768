/**
 * The Postgres side of the approval record (`<schema>.approvals`).
 * Parameterized statements; the only interpolated identifier is the schema.
 */
import type pg from "pg";
import type { ApprovalRecord, ApprovalStore } from "../ports.js";
import { chainedStatement, rowLink, runChained } from "./audit-chain-store.js";
import { quoteSchemaName } from "../sql-names.js";
import type { ThreadStatements } from "../checkpoint/write-ahead.js";
import { Params } from "../db/sql-params.js";

export function approvalTables(schema: string): string[] {
  const s = quoteSchemaName(schema);
  return [
    `create schema if not exists ${s}`,
    `create table if not exists ${s}.approvals (
      thread_id text not null,
      action_id text not null,
      version integer not null,
      run_id text not null,
      call_id text not null,
      tool text not null,
      fingerprint text not null,
      outcome text not null,
      edited_fingerprint text,
      approver text not null,
      approver_tenant text not null,
      owner text not null,
      decided_at timestamptz not null,
      expires_at timestamptz not null,
      primary key (thread_id, action_id, version)
    )`,
  ];
}

const COLUMNS = [
  "thread_id",
  "action_id",
  "version",
  "run_id",
  "call_id",
  "tool",
  "fingerprint",
  "outcome",
  "edited_fingerprint",
  "approver",
  "approver_tenant",
  "owner",
  "decided_at",
  "expires_at",
] as const;

const CASTS: Partial<Record<(typeof COLUMNS)[number], string>> = {
  version: "integer",
  decided_at: "timestamptz",
  expires_at: "timestamptz",
};

/** `statements`: the thread's deferred ledger statements are written first, so the chain keeps the order things happened in. */
export function createApprovalStore(
  pool: pg.Pool,
  schema: string,
  statements?: Pick<ThreadStatements, "settle">,
): ApprovalStore {
  const table = `${quoteSchemaName(schema)}.approvals`;
  return {
    async record(rows, run) {
      for (const row of rows) {
        await statements?.settle(row.thread_id);
        const params = new Params();
        const placeholders = COLUMNS.map((column) => params.add(row[column], CASTS[column] ?? "text")).join(", ");
        const insert = `insert into ${table} (${COLUMNS.join(", ")})
          values (${placeholders})
          on conflict (thread_id, action_id, version) do nothing`;
        if (!run) {
          await pool.query(insert, params.values);
          continue;
        }
        // The record and its audit-chain link in one statement; a replayed record (kept as it was) appends nothing.
        const link = rowLink(params, "approvals", run, {
          kind: "approval",
          key: "w.action_id || '/' || w.version::text",
          node: "human_review",
          actor: "w.approver",
          code: "w.outcome",
        });
        await runChained(
          pool,
          chainedStatement(schema, params, run, { ctes: [`written as (${insert} returning *)`], link }),
          params,
        );
      }
    },
    async list(threadId) {
      const result = await pool.query(
        `select ${COLUMNS.filter((column) => column !== "decided_at" && column !== "expires_at").join(", ")},
                to_char(decided_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as decided_at,
                to_char(expires_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as expires_at
           from ${table} where thread_id = $1 order by decided_at, action_id, version`,
        [threadId],
      );
      return result.rows as ApprovalRecord[];
    },
  };
}
