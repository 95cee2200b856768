/**
 * Open and settled elicitations (`<schema>.elicitations`): what a server
 * asked the owner of a run during a call, and how it ended. The row is how
 * the answer crosses instances: the route that receives it (any instance)
 * settles the row; the instance holding the call polls it and takes the
 * answer, erasing its content in the same statement. So a settled row keeps
 * the outcome, who answered and when, never what they answered.
 */
import type pg from "pg";
import { quoteSchemaName } from "../sql-names.js";
import type { AnswerContent, RequestedSchema } from "../elicitation/schema.js";

export type ElicitationStatus = "pending" | "accept" | "decline" | "cancel" | "timeout" | "refused";

export interface ElicitationRow {
  elicitation_id: string;
  thread_id: string;
  run_id: string;
  call_id: string;
  server: string;
  tool: string;
  owner: string;
  tenant: string;
  message: string;
  requested_schema: RequestedSchema;
  /** `url`: consent to open `url`, no form. */
  mode: "form" | "url";
  url: string | null;
  status: ElicitationStatus;
  answered_by: string | null;
  created_at: string;
  expires_at: string;
  settled_at: string | null;
  /** When the server said a consented URL-mode question is complete. */
  completed_at: string | null;
}

export type NewElicitation = Omit<
  ElicitationRow,
  "status" | "answered_by" | "created_at" | "settled_at" | "completed_at"
>;

export interface ElicitationStore {
  open(row: NewElicitation): Promise<void>;
  get(elicitationId: string): Promise<ElicitationRow | undefined>;
  /** Pending ones of a thread (the page shows their forms again after a reload). */
  pending(threadId: string): Promise<ElicitationRow[]>;
  /** Settles a pending row with the owner's answer; false when it was no longer pending. */
  answer(
    elicitationId: string,
    answer: { status: "accept" | "decline" | "cancel"; content: AnswerContent | null; by: string },
  ): Promise<boolean>;
  /** Settles a pending row without an answer (timeout, the call ended); false when it was no longer pending. */
  close(elicitationId: string, status: "timeout" | "cancel"): Promise<boolean>;
  /**
   * The answer of a settled row, taken once: its content is erased in the
   * same statement. Undefined while pending (or when already taken).
   */
  take(elicitationId: string): Promise<{ status: ElicitationStatus; content: AnswerContent | null } | undefined>;
  listThread(threadId: string): Promise<ElicitationRow[]>;
  /** Stamps an accepted URL-mode row complete; false when it is not one (or was stamped already). */
  complete(elicitationId: string): Promise<boolean>;
}

export function elicitationTables(schema: string): string[] {
  const s = quoteSchemaName(schema);
  return [
    `create table if not exists ${s}.elicitations (
      elicitation_id text primary key,
      thread_id text not null,
      run_id text not null,
      call_id text not null,
      server text not null,
      tool text not null,
      owner text not null,
      tenant text not null,
      message text not null,
      requested_schema jsonb not null,
      status text not null default 'pending',
      content jsonb,
      taken boolean not null default false,
      answered_by text,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      settled_at timestamptz
    )`,
    `create index if not exists elicitations_by_thread on ${s}.elicitations (thread_id, created_at)`,
  ];
}

/** Migration 3: URL mode (src/elicitation/url.ts), consent to open a URL instead of a form, and its completion. */
export function elicitationUrlColumns(schema: string): string[] {
  const s = quoteSchemaName(schema);
  return [
    `alter table ${s}.elicitations add column if not exists mode text not null default 'form'`,
    `alter table ${s}.elicitations add column if not exists url text`,
    `alter table ${s}.elicitations add column if not exists completed_at timestamptz`,
  ];
}

const COLUMNS = `elicitation_id, thread_id, run_id, call_id, server, tool, owner, tenant, message, requested_schema,
  mode, url, status, answered_by, created_at, expires_at, settled_at, completed_at`;

interface RawRow extends Omit<ElicitationRow, "created_at" | "expires_at" | "settled_at" | "completed_at"> {
  created_at: Date;
  expires_at: Date;
  settled_at: Date | null;
  completed_at: Date | null;
}

function toRow(raw: RawRow): ElicitationRow {
  return {
    ...raw,
    created_at: raw.created_at.toISOString(),
    expires_at: raw.expires_at.toISOString(),
    settled_at: raw.settled_at ? raw.settled_at.toISOString() : null,
    completed_at: raw.completed_at ? raw.completed_at.toISOString() : null,
  };
}

export function createElicitationStore(pool: pg.Pool, schema: string): ElicitationStore {
  const s = quoteSchemaName(schema);
  return {
    async open(row) {
      await pool.query(
        `insert into ${s}.elicitations (elicitation_id, thread_id, run_id, call_id, server, tool, owner, tenant, message,
           requested_schema, expires_at, mode, url)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11::timestamptz, $12, $13)`,
        [
          row.elicitation_id,
          row.thread_id,
          row.run_id,
          row.call_id,
          row.server,
          row.tool,
          row.owner,
          row.tenant,
          row.message,
          JSON.stringify(row.requested_schema),
          row.expires_at,
          row.mode,
          row.url,
        ],
      );
    },
    async get(elicitationId) {
      const result = await pool.query(`select ${COLUMNS} from ${s}.elicitations where elicitation_id = $1`, [
        elicitationId,
      ]);
      const raw = result.rows[0] as RawRow | undefined;
      return raw ? toRow(raw) : undefined;
    },
    async pending(threadId) {
      const result = await pool.query(
        `select ${COLUMNS} from ${s}.elicitations where thread_id = $1 and status = 'pending' and expires_at > now()
          order by created_at limit 20`,
        [threadId],
      );
      return (result.rows as RawRow[]).map(toRow);
    },
    async answer(elicitationId, answer) {
      const result = await pool.query(
        `update ${s}.elicitations set status = $2, content = $3::jsonb, answered_by = $4, settled_at = now()
          where elicitation_id = $1 and status = 'pending' and expires_at > now()`,
        [elicitationId, answer.status, answer.content === null ? null : JSON.stringify(answer.content), answer.by],
      );
      return result.rowCount === 1;
    },
    async close(elicitationId, status) {
      const result = await pool.query(
        `update ${s}.elicitations set status = $2, settled_at = now() where elicitation_id = $1 and status = 'pending'`,
        [elicitationId, status],
      );
      return result.rowCount === 1;
    },
    async take(elicitationId) {
      const result = await pool.query(
        `update ${s}.elicitations e set content = null, taken = true
           from (select elicitation_id, content from ${s}.elicitations where elicitation_id = $1 for update) old
          where e.elicitation_id = old.elicitation_id and e.status <> 'pending' and not e.taken
          returning e.status, old.content`,
        [elicitationId],
      );
      const row = result.rows[0] as { status: ElicitationStatus; content: AnswerContent | null } | undefined;
      return row ? { status: row.status, content: row.content } : undefined;
    },
    async complete(elicitationId) {
      const result = await pool.query(
        `update ${s}.elicitations set completed_at = now()
          where elicitation_id = $1 and mode = 'url' and status = 'accept' and completed_at is null`,
        [elicitationId],
      );
      return result.rowCount === 1;
    },
    async listThread(threadId) {
      const result = await pool.query(
        `select ${COLUMNS} from ${s}.elicitations where thread_id = $1 order by created_at limit 200`,
        [threadId],
      );
      return (result.rows as RawRow[]).map(toRow);
    },
  };
}
