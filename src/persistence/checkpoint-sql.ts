/**
 * Multi-row statements over LangGraph's checkpoint tables (the layout of
 * `@langchain/langgraph-checkpoint-postgres` 1.0.5, schema `public`).
 * PostgresSaver sends one INSERT per channel blob and one per write, each a
 * round trip; these send a whole save as one statement, with every row's
 * columns as parallel arrays (`unnest`), so its cost no longer grows with the
 * number of channels. A single statement is atomic, so a save needs no
 * BEGIN/COMMIT of its own.
 */
import { WRITES_IDX_MAP } from "@langchain/langgraph-checkpoint";

const TABLES = {
  checkpoints: `"public".checkpoints`,
  blobs: `"public".checkpoint_blobs`,
  writes: `"public".checkpoint_writes`,
} as const;

/** One `checkpoint_blobs` row, as `PostgresSaver._dumpBlobs` makes it. */
export type BlobRow = [thread_id: string, checkpoint_ns: string, channel: string, version: string, type: string, blob: Uint8Array | undefined];
/** One `checkpoint_writes` row, as `PostgresSaver._dumpWrites` makes it. */
export type WriteRow = [thread_id: string, checkpoint_ns: string, checkpoint_id: string, task_id: string, idx: number, channel: string, type: string, blob: Uint8Array];

/** One checkpoint: its row and its new blobs. */
export interface CheckpointSave {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | undefined;
  checkpoint: Record<string, unknown>;
  metadata: unknown;
  blobs: BlobRow[];
}

/** One `putWrites` call: its rows and whether they replace stored ones (special channels) or never do. */
export interface WritesSave {
  rows: WriteRow[];
  upsert: boolean;
}

export interface Statement {
  text: string;
  values: unknown[];
}

/**
 * Whether a `putWrites` batch replaces stored rows: as in PostgresSaver,
 * only when every write is to a special channel (error, interrupt, resume…),
 * whose index is fixed, so a later one replaces an earlier one.
 */
export function writesReplace(writes: readonly (readonly [string, unknown])[]): boolean {
  return writes.every(([channel]) => Object.hasOwn(WRITES_IDX_MAP, channel));
}

/**
 * One row per key, as the one-statement-per-row saver would have left it:
 * replacing rows keep the last, others the first (ON CONFLICT DO NOTHING).
 * A multi-row `ON CONFLICT DO UPDATE` must not touch one row twice.
 */
function uniqueWrites(save: WritesSave): WriteRow[] {
  const byKey = new Map<string, WriteRow>();
  for (const row of save.rows) {
    const key = JSON.stringify([row[0], row[1], row[2], row[3], row[4]]);
    if (save.upsert || !byKey.has(key)) byKey.set(key, row);
  }
  return [...byKey.values()];
}

/** Each column of `rows` as one array parameter. */
function columns<Row extends readonly unknown[]>(rows: readonly Row[], width: number): unknown[][] {
  return Array.from({ length: width }, (_, index) => rows.map((row) => row[index] ?? null));
}

/**
 * Checkpoints and their blobs in one statement: the blob insert is a
 * data-modifying CTE, which Postgres runs to completion whether or not the
 * main statement reads it.
 */
export function checkpointsStatement(all: readonly CheckpointSave[]): Statement {
  // A checkpoint saved twice keeps its last version, as two upserts in a row would.
  const saves = [...new Map(all.map((save) => [JSON.stringify([save.thread_id, save.checkpoint_ns, save.checkpoint_id]), save])).values()];
  const blobs = saves.flatMap((save) => save.blobs);
  const values: unknown[] = [
    ...columns(blobs, 6),
    saves.map((save) => save.thread_id),
    saves.map((save) => save.checkpoint_ns),
    saves.map((save) => save.checkpoint_id),
    saves.map((save) => save.parent_checkpoint_id ?? null),
    saves.map((save) => JSON.stringify(save.checkpoint)),
    saves.map((save) => JSON.stringify(save.metadata)),
  ];
  const text = `with new_blobs as (
      insert into ${TABLES.blobs} (thread_id, checkpoint_ns, channel, version, type, blob)
      select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bytea[])
      on conflict (thread_id, checkpoint_ns, channel, version) do nothing
    )
    insert into ${TABLES.checkpoints} (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
    select t, n, c, p, k::jsonb, m::jsonb from unnest($7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[]) as s(t, n, c, p, k, m)
    on conflict (thread_id, checkpoint_ns, checkpoint_id) do update set checkpoint = excluded.checkpoint, metadata = excluded.metadata`;
  return { text, values };
}

/**
 * Writes of one or more `putWrites` calls, as at most two statements: one for
 * the batches that replace stored rows, one for those that never do.
 */
export function writesStatements(saves: readonly WritesSave[]): Statement[] {
  const statements: Statement[] = [];
  for (const upsert of [true, false]) {
    const rows = saves.filter((save) => save.upsert === upsert).flatMap((save) => uniqueWrites(save));
    // Across calls too: a later batch of the same key wins (replacing) or loses (not).
    const unique = uniqueWrites({ rows, upsert });
    if (unique.length === 0) continue;
    const conflict = upsert
      ? "do update set channel = excluded.channel, type = excluded.type, blob = excluded.blob"
      : "do nothing";
    statements.push({
      text: `insert into ${TABLES.writes} (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
        select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::integer[], $6::text[], $7::text[], $8::bytea[])
        on conflict (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) ${conflict}`,
      values: columns(unique, 8),
    });
  }
  return statements;
}
