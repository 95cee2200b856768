/**
 * The tamper-evident audit chain in Postgres (the pure half, with the hashing
 * rules, is src/audit/chain.ts).
 *
 * A chained write is ONE statement: the row write (ledger insert/update,
 * approval insert, or the audit event itself), the upsert of the run's head
 * in `audit_runs` and the insert of the link event into `audit_events`, as
 * data-modifying CTEs. So a row never exists without its link (or the other
 * way round), and chaining costs no extra round trip. The head upsert is the
 * per-run lock: `insert … on conflict (run_id) do update` row-locks the head,
 * so parallel tool calls of one run append one after the other, each on the
 * head the previous one left (ON CONFLICT always sees the latest committed
 * version, also under READ COMMITTED).
 */
import type pg from "pg";
import {
  COVERED_COLUMNS,
  genesisHash,
  type ChainEvent,
  type ChainRun,
  type CoveredRow,
  type CoveredTable,
  type RunStart,
} from "../audit/chain.js";
import { quoteSchemaName } from "../sql-names.js";
import type { Params } from "../db/sql-params.js";
import { ledgerColumnsOfType } from "./ledger-columns.js";
import { statement } from "../db/prepared.js";

/** A timestamp as hashed and compared: UTC ISO with microseconds, whatever the session's time zone. */
export function utcText(expression: string): string {
  return `to_char((${expression}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/** Column types of the covered tables that need a text form other than themselves (the ledger's: its column list). */
const INTEGER_COLUMNS = new Set([...ledgerColumnsOfType("integer"), "version"]);
const TIMESTAMP_COLUMNS = new Set([...ledgerColumnsOfType("timestamptz"), "decided_at", "expires_at"]);

/** A covered column of row alias `alias` as text, the same way for snapshots and for verification. */
function columnText(alias: string, column: string): string {
  const qualified = `${alias}.${column}`;
  if (INTEGER_COLUMNS.has(column)) return `${qualified}::text`;
  if (TIMESTAMP_COLUMNS.has(column)) return utcText(qualified);
  return qualified;
}

/** The row's snapshot for a link event's detail: a JSON object of its columns as text. */
function snapshotSql(table: CoveredTable, alias: string): string {
  const key = `${table}.${alias}`;
  let text = snapshots.get(key);
  if (text === undefined) {
    const pairs = COVERED_COLUMNS[table].columns.map((column) => `'${column}', ${columnText(alias, column)}`);
    text = `json_build_object(${pairs.join(", ")})::text`;
    snapshots.set(key, text);
  }
  return text;
}
/** snapshotSql's texts, by table and alias (a handful). */
const snapshots = new Map<string, string>();

/** An audit event's columns, as the chained CTEs select them and `audit_events` takes them. */
const EVENT_COLUMNS = "thread_id, run_id, kind, subject, node, actor, code, tool, detail, at, seq, prev_hash, hash";

export function auditChainTables(schema: string): string[] {
  const s = quoteSchemaName(schema);
  const lp = (expression: string) => `coalesce(octet_length(${expression})::text || ':' || ${expression}, '~')`;
  return [
    `create table if not exists ${s}.audit_runs (
      run_id text primary key,
      thread_id text not null,
      owner text not null,
      request_sha256 text not null,
      started_at text not null,
      genesis text not null,
      seq integer not null,
      prev_hash text not null,
      hash text not null
    )`,
    `alter table ${s}.audit_events add column if not exists seq integer`,
    `alter table ${s}.audit_events add column if not exists prev_hash text`,
    `alter table ${s}.audit_events add column if not exists hash text`,
    `create index if not exists audit_events_chain on ${s}.audit_events (run_id, seq)`,
    // The SQL twin of linkHash (src/audit/chain.ts); verification recomputes in TypeScript.
    `create or replace function ${s}.audit_link_hash(prev text, thread_id text, run_id text, seq integer, kind text,
       subject text, node text, actor text, code text, tool text, detail text, at timestamptz)
       returns text language sql stable as $$
       select encode(sha256(convert_to(prev || '|' || ${[
         "thread_id",
         "run_id",
         "seq::text",
         "kind",
         "subject",
         "node",
         "actor",
         "code",
         "tool",
         "detail",
         utcText("at"),
       ]
         .map(lp)
         .join(" || ")}, 'UTF8')), 'hex')
     $$`,
  ];
}

/**
 * The link to append, as a SELECT (named `link`) of: thread_id, run_id, kind,
 * subject, numbered (subject gets `#<seq>`: links of rows, whose subject
 * would otherwise repeat), node, actor, code, tool, detail, at. It yields at
 * most one row; none means nothing was written and nothing is appended.
 */
export interface ChainedWrite {
  /** Earlier CTEs, e.g. `written as (insert … returning *)`. */
  ctes: string[];
  link: string;
}

/** One statement that runs `write.ctes`, advances the run's head and inserts the link event. */
export function chainedStatement(schema: string, params: Params, start: RunStart, write: ChainedWrite): string {
  const s = quoteSchemaName(schema);
  const genesis = params.add(genesisHash(start));
  const subject = (seq: string) => `case when l.numbered then l.subject || '#' || (${seq})::text else l.subject end`;
  const hashOf = (prev: string, seq: string) =>
    `${s}.audit_link_hash(${prev}, l.thread_id, l.run_id, ${seq}, l.kind, ${subject(seq)},
      l.node, l.actor, l.code, l.tool, l.detail, l.at)`;
  return `with ${[...write.ctes, `link as (${write.link})`].join(",\n")},
    head as (
      insert into ${s}.audit_runs as h (run_id, thread_id, owner, request_sha256, started_at, genesis, seq, prev_hash, hash)
      select ${params.add(start.run_id)}, ${params.add(start.thread_id)}, ${params.add(start.owner)},
             ${params.add(start.request_sha256)}, ${params.add(start.started_at)},
             ${genesis}, 1, ${genesis}, ${hashOf(genesis, "1")}
        from link l
      on conflict (run_id) do update
        set seq = h.seq + 1, prev_hash = h.hash, hash = (select ${hashOf("h.hash", "h.seq + 1")} from link l)
      returning seq, prev_hash, hash
    )
    insert into ${s}.audit_events (thread_id, run_id, kind, subject, node, actor, code, tool, detail, at, seq, prev_hash, hash)
    select l.thread_id, l.run_id, l.kind, ${subject("h.seq")}, l.node, l.actor, l.code, l.tool, l.detail, l.at, h.seq, h.prev_hash, h.hash
      from link l cross join head h`;
}

/**
 * One statement that runs several chained writes, in order, and appends one
 * link per written row, in that order: a read's outcome deferred by the
 * ledger and the next intent row of the same run travel together
 * (ledger-store.ts). Each write's CTEs must be named apart (`written_1`…).
 *
 * The chain continues from the run's head, locked with FOR UPDATE (which, in
 * READ COMMITTED, waits for a concurrent writer and then sees its version),
 * or from the genesis when the run has no head yet. Unlike
 * `chainedStatement`, a first link written by two statements at once is not
 * kept apart, so this is for runs whose head exists: callers merge writes
 * only into a run that already has links. Each write writes at most one row
 * (ledger rows are written by key). The statement's one row says how many
 * links each write appended (`w1`, `w2`, …), which is the rows it wrote.
 */
export function chainedWrites(
  schema: string,
  params: Params,
  start: RunStart,
  writes: readonly ChainedWrite[],
): string {
  const s = quoteSchemaName(schema);
  const genesis = params.add(genesisHash(start));
  const runId = params.add(start.run_id);
  const subject = (seq: string) => `case when l.numbered then l.subject || '#' || (${seq})::text else l.subject end`;
  const hashOf = (prev: string, seq: string) =>
    `${s}.audit_link_hash(${prev}, l.thread_id, l.run_id, ${seq}, l.kind, ${subject(seq)},
      l.node, l.actor, l.code, l.tool, l.detail, l.at)`;
  const ctes = writes.flatMap((write) => write.ctes);
  ctes.push(
    `base as (select seq, prev_hash, hash from ${s}.audit_runs where run_id = ${runId} for update)`,
    `state_0 as (select seq, prev_hash, hash from base union all select 0, null::text, ${genesis} where not exists (select 1 from base))`,
  );
  writes.forEach((write, index) => {
    const k = index + 1;
    ctes.push(
      `link_${k} as (${write.link})`,
      // The link appended for this write (none when it wrote no row), on the state the previous writes left.
      `chained_${k} as (
        select p.seq + 1 as seq, p.hash as prev_hash, ${hashOf("p.hash", "p.seq + 1")} as hash,
               l.thread_id, l.run_id, l.kind, ${subject("p.seq + 1")} as subject,
               l.node, l.actor, l.code, l.tool, l.detail, l.at
          from state_${k - 1} p cross join link_${k} l
      )`,
      `state_${k} as (
        select seq, prev_hash, hash from chained_${k}
        union all select seq, prev_hash, hash from state_${k - 1} where not exists (select 1 from chained_${k})
      )`,
    );
  });
  const last = `state_${writes.length}`;
  ctes.push(
    `head as (
      insert into ${s}.audit_runs as h (run_id, thread_id, owner, request_sha256, started_at, genesis, seq, prev_hash, hash)
      select ${runId}, ${params.add(start.thread_id)}, ${params.add(start.owner)},
             ${params.add(start.request_sha256)}, ${params.add(start.started_at)}, ${genesis}, f.seq, f.prev_hash, f.hash
        from ${last} f where f.seq > (select seq from state_0)
      on conflict (run_id) do update set seq = excluded.seq, prev_hash = excluded.prev_hash, hash = excluded.hash
    )`,
    `appended as (
      insert into ${s}.audit_events (${EVENT_COLUMNS})
      ${writes.map((_, index) => `select ${EVENT_COLUMNS} from chained_${index + 1}`).join("\n      union all ")}
    )`,
  );
  return `with ${ctes.join(",\n")}
    select ${writes.map((_, index) => `(select count(*) from chained_${index + 1})::integer as w${index + 1}`).join(", ")}`;
}

/** The link SELECT for a row written by CTE `written` into a covered table. */
export function rowLink(
  params: Params,
  table: CoveredTable,
  start: RunStart,
  fields: { kind: "ledger" | "approval"; key: string; node: string; actor: string; code: string },
  written = "written",
): string {
  return `select w.thread_id, ${params.add(start.run_id)} as run_id, '${fields.kind}'::text as kind,
                 ${fields.key} as subject, true as numbered, '${fields.node}'::text as node,
                 ${fields.actor} as actor, ${fields.code} as code, w.tool as tool,
                 ${snapshotSql(table, "w")} as detail, clock_timestamp() as at
            from ${written} w`;
}

/** Runs a chained statement (`named`: prepared, see prepared.ts); returns how many link events it inserted (0: nothing was written). */
export async function runChained(
  pool: Pick<pg.ClientBase, "query">,
  sql: string,
  params: Params,
  named = false,
): Promise<number> {
  const result = await pool.query(statement(sql, params.values, named));
  return result.rowCount ?? 0;
}

/** What verification reads: start records, events (as hashed text), covered rows (as text). */
export async function loadChain(
  pool: pg.Pool,
  schema: string,
  runId?: string,
): Promise<{ runs: ChainRun[]; events: ChainEvent[]; rows: CoveredRow[] }> {
  const s = quoteSchemaName(schema);
  const runs = (
    await pool.query<ChainRun>(
      `select run_id, thread_id, owner, request_sha256, started_at, genesis, seq, hash
         from ${s}.audit_runs ${runId === undefined ? "" : "where run_id = $1"}`,
      runId === undefined ? [] : [runId],
    )
  ).rows;
  // One run: its thread's events and rows (the rows' latest links may be in other runs of the thread).
  const threads = runId === undefined ? undefined : runs.map((run) => run.thread_id);
  const where = (column: string) => (threads === undefined ? "" : `where ${column} = any($1::text[])`);
  const args = threads === undefined ? [] : [threads];
  const events = (
    await pool.query<ChainEvent>(
      `select thread_id, run_id, seq, prev_hash, hash, kind, subject, node, actor, code, tool, detail, ${utcText("at")} as at
         from ${s}.audit_events ${
           runId === undefined
             ? ""
             : "where run_id = $2 or (thread_id = any($1::text[]) and kind in ('ledger', 'approval'))"
         }`,
      runId === undefined ? [] : [threads, runId],
    )
  ).rows;
  const rows: CoveredRow[] = [];
  for (const table of Object.keys(COVERED_COLUMNS) as CoveredTable[]) {
    const columns = COVERED_COLUMNS[table].columns
      .map((column) => `${columnText("r", column)} as ${column}`)
      .join(", ");
    const found = await pool.query<Record<string, string | null>>(
      `select ${columns} from ${s}.${table} r ${where("r.thread_id")}`,
      args,
    );
    for (const row of found.rows) rows.push({ table, columns: row });
  }
  return { runs, events, rows };
}
