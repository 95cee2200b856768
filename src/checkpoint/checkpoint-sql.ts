/**
 * The statements that write the checkpointer's tables (checkpoint-tables.ts:
 * PostgresSaver's layout, schema `public`).
 * PostgresSaver sends one INSERT per channel blob and one per write, each a
 * round trip; here every pending save of a thread is one statement of
 * data-modifying CTEs, with every row's columns as parallel arrays
 * (`unnest`), so its cost no longer grows with the number of channels. A
 * single statement is atomic, so the saves need no BEGIN/COMMIT of their
 * own, and they can be put in front of another statement (`withSaves`).
 * Also the one-query history `DeltaChannel`s are rebuilt from.
 */
import { WRITES_IDX_MAP } from "@langchain/langgraph-checkpoint";
import { TABLES } from "./checkpoint-tables.js";
import { Params } from "../db/sql-params.js";

/** One `checkpoint_blobs` row (checkpoint-rows.ts makes them). */
export type BlobRow = [
  thread_id: string,
  checkpoint_ns: string,
  channel: string,
  version: string,
  type: string,
  blob: Uint8Array | undefined,
];
/** One `checkpoint_writes` row (checkpoint-rows.ts makes them). */
export type WriteRow = [
  thread_id: string,
  checkpoint_ns: string,
  checkpoint_id: string,
  task_id: string,
  idx: number,
  channel: string,
  type: string,
  blob: Uint8Array,
];

/** One checkpoint: its row and its new blobs. */
export interface CheckpointSave {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | undefined;
  checkpoint: Record<string, unknown>;
  /** The metadata as stored (JSON text), serialized when the checkpoint was put. */
  metadata_json: string;
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
    // NUL cannot occur in these ids (Postgres text rejects it), so it separates them.
    const key = `${row[0]}\u0000${row[1]}\u0000${row[2]}\u0000${row[3]}\u0000${row[4]}`;
    if (save.upsert || !byKey.has(key)) byKey.set(key, row);
  }
  return [...byKey.values()];
}

/**
 * The columns of one multi-row insert as parameters: each an array that
 * `unnest` turns into rows, except a text column with one value in every
 * row (a thread's id and namespace, in every row of its saves), which is
 * sent once as a scalar. Returns, per column, the expression to select.
 */
class Columns {
  private readonly arrays: string[] = [];
  constructor(private readonly params: Params) {}

  /** A text column: a scalar when every row has the same non-null value. */
  text(values: unknown[] | undefined): string {
    const first = values?.[0];
    if (typeof first === "string" && values?.every((value) => value === first)) return this.params.add(first);
    return this.array(values, "text[]");
  }

  array(values: unknown[] | undefined, cast: string): string {
    this.arrays.push(this.params.add(values ?? [], cast));
    return `s.c${this.arrays.length}`;
  }

  /** The FROM item the array columns are selected from. */
  from(): string {
    return `unnest(${this.arrays.join(", ")}) as s(${this.arrays.map((_, index) => `c${index + 1}`).join(", ")})`;
  }
}

/** Each column of `rows` as one array parameter. */
function columns<Row extends readonly unknown[]>(rows: readonly Row[], width: number): unknown[][] {
  return Array.from({ length: width }, (_, index) => rows.map((row) => row[index] ?? null));
}

/**
 * Blobs travel as base64 text, decoded by Postgres: `pg` sends a `bytea[]`
 * parameter as hex (twice the bytes) escaped inside an array literal, and
 * these arrays are most of what a tool step sends.
 */
function base64(blobs: unknown[] | undefined): (string | null)[] {
  return (blobs ?? []).map((blob) =>
    blob instanceof Uint8Array ? Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength).toString("base64") : null,
  );
}

/** Saves not yet written, in the order LangGraph made them. */
export interface PendingSaves {
  checkpoints: CheckpointSave[];
  writes: WritesSave[];
}

/**
 * The saves as data-modifying CTEs of one statement, their parameters added
 * to `params`. Postgres runs every data-modifying CTE to completion whether
 * or not the main statement reads it, and one statement is atomic, so the
 * saves need no transaction of their own and can ride on another statement
 * (the ledger's intent row) in one round trip.
 */
export function saveCtes(saves: PendingSaves, params: Params): string[] {
  const ctes: string[] = [];
  if (saves.checkpoints.length > 0) {
    // A checkpoint saved twice keeps its last version, as two upserts in a row would.
    const unique = [
      ...new Map(
        saves.checkpoints.map((save) => [
          JSON.stringify([save.thread_id, save.checkpoint_ns, save.checkpoint_id]),
          save,
        ]),
      ).values(),
    ];
    const [thread, namespace, channel, version, type, blob] = columns(
      unique.flatMap((save) => save.blobs),
      6,
    );
    const blobs = new Columns(params);
    const [t, n] = [blobs.text(thread), blobs.text(namespace)];
    const [c, v, y, b] = [
      blobs.array(channel, "text[]"),
      blobs.array(version, "text[]"),
      blobs.array(type, "text[]"),
      blobs.array(base64(blob), "text[]"),
    ];
    ctes.push(`saved_blobs as (
      insert into ${TABLES.blobs} (thread_id, checkpoint_ns, channel, version, type, blob)
      select ${t}, ${n}, ${c}, ${v}, ${y}, decode(${b}, 'base64') from ${blobs.from()}
      on conflict (thread_id, checkpoint_ns, channel, version) do nothing
    )`);
    const rows = new Columns(params);
    const [ct, cn] = [
      rows.text(unique.map((save) => save.thread_id)),
      rows.text(unique.map((save) => save.checkpoint_ns)),
    ];
    const [cc, cp, ck, cm] = [
      rows.array(
        unique.map((save) => save.checkpoint_id),
        "text[]",
      ),
      rows.array(
        unique.map((save) => save.parent_checkpoint_id ?? null),
        "text[]",
      ),
      rows.array(
        unique.map((save) => JSON.stringify(save.checkpoint)),
        "text[]",
      ),
      rows.array(
        unique.map((save) => save.metadata_json),
        "text[]",
      ),
    ];
    ctes.push(`saved_checkpoints as (
      insert into ${TABLES.checkpoints} (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
      select ${ct}, ${cn}, ${cc}, ${cp}, ${ck}::jsonb, ${cm}::jsonb from ${rows.from()}
      on conflict (thread_id, checkpoint_ns, checkpoint_id) do update set checkpoint = excluded.checkpoint, metadata = excluded.metadata
    )`);
  }
  for (const upsert of [true, false]) {
    const rows = saves.writes.filter((save) => save.upsert === upsert).flatMap((save) => uniqueWrites(save));
    // Across calls too: a later batch of the same key wins (replacing) or loses (not).
    const unique = uniqueWrites({ rows, upsert });
    if (unique.length === 0) continue;
    const conflict = upsert
      ? "do update set channel = excluded.channel, type = excluded.type, blob = excluded.blob"
      : "do nothing";
    const [thread, namespace, checkpoint, task, index, channel, type, blob] = columns(unique, 8);
    const writes = new Columns(params);
    const [t, n] = [writes.text(thread), writes.text(namespace)];
    const [c, k, i, h, y, b] = [
      writes.array(checkpoint, "text[]"),
      writes.array(task, "text[]"),
      writes.array(index, "integer[]"),
      writes.array(channel, "text[]"),
      writes.array(type, "text[]"),
      writes.array(base64(blob), "text[]"),
    ];
    ctes.push(`saved_${upsert ? "replacing" : "new"}_writes as (
      insert into ${TABLES.writes} (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
      select ${t}, ${n}, ${c}, ${k}, ${i}, ${h}, ${y}, decode(${b}, 'base64') from ${writes.from()}
      on conflict (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) ${conflict}
    )`);
  }
  return ctes;
}

/** The saves alone, as one statement (undefined when there are none). */
export function savesStatement(saves: PendingSaves): Statement | undefined {
  const params = new Params();
  const ctes = saveCtes(saves, params);
  return ctes.length === 0 ? undefined : { text: `with ${ctes.join(",\n")}\nselect 1`, values: params.values };
}

/**
 * `statement` with the saves in front of it as CTEs: one statement, so the
 * saves commit exactly when it does. `statement` is a plain INSERT, UPDATE,
 * DELETE or SELECT, or one that starts with a non-recursive WITH; its rows
 * and row count are what it alone would return.
 */
export function withSaves(statement: Statement, saves: PendingSaves): Statement {
  const params = new Params(statement.values);
  const ctes = saveCtes(saves, params);
  if (ctes.length === 0) return statement;
  const text = statement.text.trimStart();
  const leadingWith = /^with\s+/i.exec(text);
  if (leadingWith && /^recursive\b/i.test(text.slice(leadingWith[0].length)))
    throw new Error("withSaves: a recursive WITH cannot take the saves in front");
  const combined = leadingWith
    ? `with ${ctes.join(",\n")},\n${text.slice(leadingWith[0].length)}`
    : `with ${ctes.join(",\n")}\n${text}`;
  return { text: combined, values: params.values };
}

/** One row of `deltaHistoryStatement`: a write on the path, or a channel's full copy (its seed). */
export interface DeltaHistoryRow {
  kind: "write" | "seed";
  channel: string;
  task_id: string | null;
  type: string;
  blob: Uint8Array | null;
}

/**
 * The history `DeltaChannel`s are rebuilt from, in one statement: from the
 * checkpoint (the thread's latest when `checkpointId` is undefined), walk
 * parent links; a channel stops at the first ancestor holding a stored value
 * for it (a blob at its version that is not `empty`). Returns, oldest first,
 * each visited ancestor's writes to the channels still walking there (the
 * stopping ancestor's included, the starting checkpoint's own pending writes
 * not), in the order PostgresSaver reads writes (task_id, idx), and each
 * channel's stored value as `seed`.
 */
export function deltaHistoryStatement(
  threadId: string,
  namespace: string,
  checkpointId: string | undefined,
  channels: readonly string[],
): Statement {
  const text = `with recursive chain (checkpoint_id, parent_checkpoint_id, depth, walking, pending) as (
      (select checkpoint_id, parent_checkpoint_id, 0, '{}'::text[], $4::text[]
         from ${TABLES.checkpoints}
        where thread_id = $1 and checkpoint_ns = $2 and ($3::text is null or checkpoint_id = $3)
        order by checkpoint_id desc limit 1)
      union all
      select p.checkpoint_id, p.parent_checkpoint_id, c.depth + 1, c.pending,
             array(select wanted.name from unnest(c.pending) as wanted(name)
                    where not exists (select 1 from ${TABLES.blobs} b
                                       where b.thread_id = $1 and b.checkpoint_ns = $2 and b.channel = wanted.name
                                         and b.version = p.checkpoint -> 'channel_versions' ->> wanted.name and b.type <> 'empty'))
        from chain c join ${TABLES.checkpoints} p on p.thread_id = $1 and p.checkpoint_ns = $2 and p.checkpoint_id = c.parent_checkpoint_id
       where cardinality(c.pending) > 0
    )
    select kind, channel, task_id, type, blob from (
      select 'write' as kind, c.depth, w.task_id, w.idx, w.channel, w.type, w.blob
        from chain c join ${TABLES.writes} w
          on w.thread_id = $1 and w.checkpoint_ns = $2 and w.checkpoint_id = c.checkpoint_id and w.channel = any(c.walking)
      union all
      select 'seed', c.depth, null, null, b.channel, b.type, b.blob
        from chain c
        join ${TABLES.checkpoints} p on p.thread_id = $1 and p.checkpoint_ns = $2 and p.checkpoint_id = c.checkpoint_id
        join ${TABLES.blobs} b on b.thread_id = $1 and b.checkpoint_ns = $2
                              and b.channel = any(c.walking) and not (b.channel = any(c.pending))
                              and b.version = p.checkpoint -> 'channel_versions' ->> b.channel and b.type <> 'empty'
    ) history
    order by depth desc, kind = 'write', task_id, idx`;
  return { text, values: [threadId, namespace, checkpointId ?? null, [...channels]] };
}
