/**
 * The checkpointer's tables and the statements that read and delete them
 * (checkpointer.ts; the statements that write them are checkpoint-sql.ts).
 *
 * The layout is the one `@langchain/langgraph-checkpoint-postgres` 1.0.5
 * creates (`checkpoints`, `checkpoint_blobs`, `checkpoint_writes`, and
 * `checkpoint_migrations` counting the steps applied), in schema `public`,
 * with the same migration steps in the same order. So a database set up by
 * an earlier Warrant (which ran PostgresSaver's `setup()`) opens with nothing
 * to migrate, and one set up here is readable by a stock PostgresSaver. The
 * layout is Warrant's own now: a later version of that package changes none
 * of it.
 */
import { TASKS } from "@langchain/langgraph-checkpoint";
import type pg from "pg";

export const CHECKPOINT_SCHEMA = "public";

export const TABLES = {
  checkpoints: `"${CHECKPOINT_SCHEMA}".checkpoints`,
  blobs: `"${CHECKPOINT_SCHEMA}".checkpoint_blobs`,
  writes: `"${CHECKPOINT_SCHEMA}".checkpoint_writes`,
  migrations: `"${CHECKPOINT_SCHEMA}".checkpoint_migrations`,
} as const;

/** The migration steps; a step's position is its number in `checkpoint_migrations.v`. Append only. */
export const CHECKPOINT_MIGRATIONS: readonly string[] = [
  `create table if not exists ${TABLES.migrations} (
    v integer primary key
  )`,
  `create table if not exists ${TABLES.checkpoints} (
    thread_id text not null,
    checkpoint_ns text not null default '',
    checkpoint_id text not null,
    parent_checkpoint_id text,
    type text,
    checkpoint jsonb not null,
    metadata jsonb not null default '{}',
    primary key (thread_id, checkpoint_ns, checkpoint_id)
  )`,
  `create table if not exists ${TABLES.blobs} (
    thread_id text not null,
    checkpoint_ns text not null default '',
    channel text not null,
    version text not null,
    type text not null,
    blob bytea,
    primary key (thread_id, checkpoint_ns, channel, version)
  )`,
  `create table if not exists ${TABLES.writes} (
    thread_id text not null,
    checkpoint_ns text not null default '',
    checkpoint_id text not null,
    task_id text not null,
    idx integer not null,
    channel text not null,
    type text,
    blob bytea not null,
    primary key (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
  )`,
  `alter table ${TABLES.blobs} alter column blob drop not null`,
];

/**
 * Applies the steps not yet applied, each followed by its number. Run on a
 * client that holds the setup lock (database.ts): reading the last number,
 * then applying, is not safe to run twice at once.
 */
export async function setUpCheckpointTables(client: pg.ClientBase): Promise<void> {
  await client.query(`create schema if not exists "${CHECKPOINT_SCHEMA}"`);
  const exists = await client.query<{ found: string | null }>("select to_regclass($1) as found", [TABLES.migrations]);
  let applied = -1;
  if (exists.rows[0]?.found) {
    const last = await client.query<{ v: number }>(`select v from ${TABLES.migrations} order by v desc limit 1`);
    applied = last.rows[0]?.v ?? -1;
  }
  for (let version = applied + 1; version < CHECKPOINT_MIGRATIONS.length; version += 1) {
    await client.query(CHECKPOINT_MIGRATIONS[version] ?? "");
    await client.query(`insert into ${TABLES.migrations} (v) values ($1)`, [version]);
  }
}

/** A checkpoint row as the reads return it: the checkpoint, its channel values' blobs and its pending writes. */
export interface CheckpointRow {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  checkpoint: Record<string, unknown> & { v?: number; channel_versions?: Record<string, string | number> };
  metadata: Record<string, unknown>;
  /** [channel, type, blob] per channel at its version in `checkpoint.channel_versions`. */
  channel_values: [Uint8Array, Uint8Array, Uint8Array | null][] | null;
  /** [task_id, channel, type, blob], ordered by task id and index. */
  pending_writes: [Uint8Array, Uint8Array, Uint8Array, Uint8Array][] | null;
}

/** A checkpoint with its channel blobs and pending writes; a WHERE (and ORDER/LIMIT) follows. */
export const SELECT_CHECKPOINTS = `select
    thread_id,
    checkpoint,
    checkpoint_ns,
    checkpoint_id,
    parent_checkpoint_id,
    metadata,
    (
      select array_agg(array[bl.channel::bytea, bl.type::bytea, bl.blob])
      from jsonb_each_text(checkpoint -> 'channel_versions')
      inner join ${TABLES.blobs} bl
        on bl.thread_id = cp.thread_id
        and bl.checkpoint_ns = cp.checkpoint_ns
        and bl.channel = jsonb_each_text.key
        and bl.version = jsonb_each_text.value
    ) as channel_values,
    (
      select
      array_agg(array[cw.task_id::text::bytea, cw.channel::bytea, cw.type::bytea, cw.blob] order by cw.task_id, cw.idx)
      from ${TABLES.writes} cw
      where cw.thread_id = cp.thread_id
        and cw.checkpoint_ns = cp.checkpoint_ns
        and cw.checkpoint_id = cp.checkpoint_id
    ) as pending_writes
  from ${TABLES.checkpoints} cp `;

/** The sends of checkpoints of format v < 4, which kept them as writes to `TASKS` of the parent: $1 thread, $2 parent ids. */
export const SELECT_PENDING_SENDS = `select
      checkpoint_id,
      array_agg(array[cw.type::bytea, cw.blob] order by cw.task_id, cw.idx) as pending_sends
    from ${TABLES.writes} cw
    where cw.thread_id = $1
      and cw.checkpoint_id = any($2)
      and cw.channel = '${TASKS}'
    group by cw.checkpoint_id
  `;

export interface PendingSendsRow {
  checkpoint_id: string;
  pending_sends: [Uint8Array, Uint8Array][];
}

/** Every row of a thread, in one statement (atomic without a transaction block, so it holds no client). */
export const DELETE_THREAD = `with blobs as (delete from ${TABLES.blobs} where thread_id = $1),
    checkpoints as (delete from ${TABLES.checkpoints} where thread_id = $1),
    writes as (delete from ${TABLES.writes} where thread_id = $1)
  select 1`;

/** What `list` selects by: thread, namespace, checkpoint, metadata filter, before a checkpoint. */
export interface ListFilter {
  threadId?: string;
  namespace?: string;
  checkpointId?: string;
  metadata?: Record<string, unknown>;
  before?: string;
}

/** The WHERE of a `list`, with its parameters (as PostgresSaver's `_searchWhere`). */
export function listWhere(filter: ListFilter): [string, unknown[]] {
  const wheres: string[] = [];
  const values: unknown[] = [];
  const add = (condition: (param: string) => string, value: unknown) => {
    values.push(value);
    wheres.push(condition(`$${values.length}`));
  };
  if (filter.threadId) add((p) => `thread_id = ${p}`, filter.threadId);
  if (filter.namespace !== undefined && filter.namespace !== null) add((p) => `checkpoint_ns = ${p}`, filter.namespace);
  if (filter.checkpointId) add((p) => `checkpoint_id = ${p}`, filter.checkpointId);
  if (filter.metadata && Object.keys(filter.metadata).length > 0)
    add((p) => `metadata @> ${p}`, JSON.stringify(filter.metadata));
  if (filter.before !== undefined) add((p) => `checkpoint_id < ${p}`, filter.before);
  return [wheres.length > 0 ? `where ${wheres.join(" and ")}` : "", values];
}
