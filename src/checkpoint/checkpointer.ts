/**
 * Warrant's checkpointer: LangGraph's `BaseCheckpointSaver` contract
 * (`getTuple`, `list`, `put`, `putWrites`, `deleteThread`, and
 * `getDeltaChannelHistory`) over its own tables and statements
 * (checkpoint-tables.ts: PostgresSaver 1.0.5's layout, so nothing migrates;
 * checkpoint-sql.ts; checkpoint-rows.ts), writing less often and in fewer
 * statements. It knows nothing of the ledger or any other store.
 *
 * Fewer statements: PostgresSaver sends BEGIN, one INSERT per changed
 * channel, the checkpoint and COMMIT for every checkpoint, and the same per
 * write for every task's writes (75 statements per tool step, measured).
 * Here any number of checkpoints with their blobs and writes is one statement
 * of data-modifying CTEs (checkpoint-sql.ts).
 *
 * Fewer round trips: a save only has to be durable before something outside
 * the process depends on it. So a checkpoint the run continues from (a node
 * is triggered) and ordinary task writes are HELD in memory, per thread,
 * until one of these writes them, in order:
 * - whoever takes them under the thread's lock (`exclusive`, `takeHeld`):
 *   the runtime's write-ahead step (write-ahead.ts) commits them with an
 *   effect's intent row before the effect starts;
 * - a checkpoint nothing continues from (the run's end), a run's input
 *   checkpoint, and writes to special channels (interrupt, resume, error):
 *   at once, before `put`/`putWrites` returns;
 * - any read of the thread (`getTuple`, `list`, `getDeltaChannelHistory`),
 *   `flush`, `flushAll`, and `close` (the database's close).
 * Every write of held saves goes through the writer attached with `attach`
 * (the write-ahead unit, which also holds other statements for the thread
 * and sends them first, and sweeps idle threads); without one they are
 * written alone. A process killed in between loses only saves made after the
 * last effect started: the run resumes from the checkpoint committed with
 * that effect's intent row (or the run's input).
 *
 * Less data: the growing fields of the state are `DeltaChannel`s
 * (src/state/), which store each step's writes instead of the whole value;
 * `getDeltaChannelHistory` reads what rebuilds them in one recursive query.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  compareChannelVersions,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type DeltaChannelHistory,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import type pg from "pg";
import { CheckpointBuffer } from "./checkpoint-buffer.js";
import type { PendingSaves } from "./checkpoint-sql.js";
import { CheckpointRows, configIds } from "./checkpoint-rows.js";
import { deltaHistoryStatement, savesStatement, type DeltaHistoryRow } from "./checkpoint-sql.js";
import {
  DELETE_THREAD,
  listWhere,
  SELECT_CHECKPOINTS,
  SELECT_PENDING_SENDS,
  type CheckpointRow,
  type PendingSendsRow,
} from "./checkpoint-tables.js";
import { statement as queryConfig } from "../db/prepared.js";
import { WarrantSerializer } from "./serde.js";

/** StateGraph's trigger channels: `branch:to:<node>`. */
const TRIGGER_PREFIX = "branch:to:";

/**
 * Whether some node is triggered by this checkpoint (a trigger channel that
 * holds a value, newer than what that node has seen), i.e. the run goes on
 * from it. A trigger its node consumed is empty (and gets a newer version
 * all the same, so the value is what tells). Anything else (no StateGraph
 * triggers at all, say) counts as an end and is written at once.
 */
export function runContinuesFrom(
  checkpoint: Pick<Checkpoint, "channel_versions" | "versions_seen" | "channel_values">,
): boolean {
  return Object.entries(checkpoint.channel_versions).some(([channel, version]) => {
    if (!channel.startsWith(TRIGGER_PREFIX) || !Object.hasOwn(checkpoint.channel_values, channel)) return false;
    const node = channel.slice(TRIGGER_PREFIX.length);
    const seen = Object.hasOwn(checkpoint.versions_seen, node) ? checkpoint.versions_seen[node]?.[channel] : undefined;
    return seen === undefined || compareChannelVersions(version, seen) > 0;
  });
}

export interface WarrantSaverOptions {
  /** Prepare the per-step statements (see prepared.ts). */
  namedStatements?: boolean;
  /** Idle time after which what a thread holds is written by the write-ahead unit's sweep (write-ahead.ts). */
  idleFlushMs?: number;
  /** Where a failed background write is reported (default: stderr). */
  log?: (line: string) => void;
}

/**
 * Who writes a thread's held saves (write-ahead.ts), attached once. Its
 * methods run under the thread's lock unless said otherwise.
 */
export interface HeldSavesWriter {
  /** Before a save, flush or read of the thread is admitted: throws to fail it. Not under the lock. */
  admit(threadId: string): void;
  /** A save of the thread is now held. Not under the lock. */
  held(threadId: string): void;
  /**
   * Writes the thread's held saves (`takeHeld`), with whatever else it holds
   * for the thread; unless in the `background`, first throws what `admit` would.
   */
  write(threadId: string, background: boolean): Promise<void>;
  /** The thread's rows are being deleted (its held saves already dropped). */
  deleting(threadId: string): Promise<void>;
  /** Threads it holds something of its own for. Not under the lock. */
  threads(): Iterable<string>;
  /** For good: the checkpointer is closing and writes what every thread holds next. Not under the lock. */
  close(): void;
}

/**
 * The saver's held saves as its writer (the write-ahead unit) reaches them:
 * the typed contract between the two, so nothing tests for a method by name.
 * `takeHeld`, `restoreHeld`, `dropHeld` and `writeHeld` run under the
 * thread's lock (`exclusive`).
 */
export interface HeldSaves {
  /** The pool every statement of the checkpointer runs on. */
  readonly pool: pg.Pool;
  readonly options: WarrantSaverOptions;
  /** Sets who writes held saves (once). */
  attach(writer: HeldSavesWriter): void;
  /** The attached writer, if any. */
  attached(): HeldSavesWriter | undefined;
  /** Runs `work` alone for the thread. */
  exclusive<T>(threadId: string, work: () => Promise<T>): Promise<T>;
  /** Writes what the thread holds now (through the attached writer). */
  flush(threadId: string, options?: { background?: boolean }): Promise<void>;
  /** Removes and returns the thread's held saves (none: empty). */
  takeHeld(threadId: string): PendingSaves;
  /** Puts saves whose statement failed back in front of any held since. */
  restoreHeld(threadId: string, saves: PendingSaves): void;
  /** Drops the thread's held saves: the statement they rode on failed. */
  dropHeld(threadId: string): void;
  /** Whether the thread holds saves not yet written. */
  holds(threadId: string): boolean;
  /** Writes the thread's held saves alone, in one statement. */
  writeHeld(threadId: string): Promise<void>;
}

export class WarrantSaver extends BaseCheckpointSaver implements HeldSaves {
  private readonly buffer = new CheckpointBuffer();
  private readonly rows: CheckpointRows;
  private readonly named: boolean;
  private writer: HeldSavesWriter | undefined;

  constructor(
    /** The pool every statement of the checkpointer runs on. */
    readonly pool: pg.Pool,
    serde?: SerializerProtocol,
    readonly options: WarrantSaverOptions = {},
  ) {
    super(serde ?? new WarrantSerializer());
    this.named = options.namedStatements ?? false;
    this.rows = new CheckpointRows(this.serde, (current) => this.getNextVersion(current));
  }

  /** Sets who writes held saves (once: the write-ahead unit over this saver). */
  attach(writer: HeldSavesWriter): void {
    if (this.writer && this.writer !== writer) throw new Error("a writer is already attached to this checkpointer");
    this.writer = writer;
  }

  /** The attached writer, if any. */
  attached(): HeldSavesWriter | undefined {
    return this.writer;
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const save = await this.rows.checkpointSave(config, checkpoint, metadata, newVersions);
    this.writer?.admit(save.thread_id);
    this.buffer.add(save.thread_id, { checkpoint: save });
    this.writer?.held(save.thread_id);
    if (metadata.source === "input" || !runContinuesFrom(checkpoint)) await this.flush(save.thread_id);
    return {
      configurable: { thread_id: save.thread_id, checkpoint_ns: save.checkpoint_ns, checkpoint_id: checkpoint.id },
    };
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    const save = await this.rows.writesSave(config, writes, taskId);
    if (save.rows.length === 0) return;
    const threadId = save.rows[0]?.[0] ?? "";
    this.writer?.admit(threadId);
    this.buffer.add(threadId, { writes: save });
    this.writer?.held(threadId);
    // Interrupts, resumes and errors end or restart a run: a client (or another server) reads them next.
    if (save.upsert) await this.flush(threadId);
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    await this.flushFor(config);
    const { threadId, namespace, checkpointId } = configIds(config);
    const [where, args] = checkpointId
      ? ["where thread_id = $1 and checkpoint_ns = $2 and checkpoint_id = $3", [threadId, namespace, checkpointId]]
      : ["where thread_id = $1 and checkpoint_ns = $2 order by checkpoint_id desc limit 1", [threadId, namespace]];
    const { rows } = await this.pool.query<CheckpointRow>(SELECT_CHECKPOINTS + where, args);
    const row = rows[0];
    if (row === undefined) return undefined;
    await this.migrateSends([row]);
    return this.rows.tuple(row, { threadId: threadId ?? row.thread_id, namespace });
  }

  async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    await this.flushFor(config);
    const { filter, before, limit } = options ?? {};
    const configurable = (config?.configurable ?? {}) as Record<string, string | undefined>;
    const [where, args] = listWhere({
      threadId: configurable.thread_id,
      namespace: configurable.checkpoint_ns,
      checkpointId: configurable.checkpoint_id,
      metadata: filter,
      before: before?.configurable?.checkpoint_id as string | undefined,
    });
    let query = `${SELECT_CHECKPOINTS}${where} order by checkpoint_id desc`;
    if (limit !== undefined) query += ` limit ${Number.parseInt(limit.toString(), 10)}`;
    const { rows } = await this.pool.query<CheckpointRow>(query, args);
    await this.migrateSends(rows);
    for (const row of rows) yield await this.rows.tuple(row, { threadId: row.thread_id, namespace: row.checkpoint_ns });
  }

  /** Checkpoints of format v < 4 get their sends from their parents' writes (checkpoint-rows.ts). */
  private async migrateSends(rows: CheckpointRow[]): Promise<void> {
    const old = rows.filter((row) => (row.checkpoint.v ?? 0) < 4 && row.parent_checkpoint_id != null);
    const first = old[0];
    if (first === undefined) return;
    const parents = old.map((row) => row.parent_checkpoint_id);
    const sends = await this.pool.query<PendingSendsRow>(SELECT_PENDING_SENDS, [first.thread_id, parents]);
    for (const sent of sends.rows)
      for (const row of old.filter((candidate) => candidate.parent_checkpoint_id === sent.checkpoint_id))
        await this.rows.migratePendingSends(sent.pending_sends, row);
  }

  async deleteThread(threadId: string): Promise<void> {
    await this.exclusive(threadId, async () => {
      this.buffer.discard(threadId);
      await this.writer?.deleting(threadId);
      await this.pool.query(DELETE_THREAD, [threadId]);
    });
  }

  /**
   * What a `DeltaChannel` (src/state/) needs to rebuild its value at a
   * checkpoint: its writes on the path from the nearest ancestor that stores
   * a full copy, and that copy. The base class walks the ancestors with one
   * `getTuple` each; this is one recursive query (checkpoint-sql.ts).
   */
  override async getDeltaChannelHistory(options: {
    config: RunnableConfig;
    channels: string[];
  }): Promise<Record<string, DeltaChannelHistory>> {
    const { config, channels } = options;
    if (channels.length === 0) return {};
    const { threadId, namespace, checkpointId } = configIds(config);
    if (threadId === undefined) throw new Error(`Missing "thread_id" in "config.configurable"`);
    await this.flush(threadId);
    const query = deltaHistoryStatement(threadId, namespace, checkpointId, channels);
    const { rows } = await this.pool.query<DeltaHistoryRow>(queryConfig(query.text, query.values, this.named));
    const history: Record<string, DeltaChannelHistory> = Object.fromEntries(
      channels.map((channel) => [channel, { writes: [] }]),
    );
    for (const row of rows) {
      const entry = history[row.channel];
      if (!entry) continue;
      const value = await this.rows.load(row.type, row.blob);
      if (row.kind === "seed") entry.seed = value;
      else entry.writes.push([row.task_id ?? "", row.channel, value]);
    }
    return history;
  }

  /**
   * Writes what the thread holds now (through the attached writer). In the
   * `background` (a sweep, a flush of every thread) nobody of the thread
   * waits on it: the writer keeps a failure for the thread's next operation.
   */
  async flush(threadId: string, options: { background?: boolean } = {}): Promise<void> {
    const background = options.background ?? false;
    await this.exclusive(threadId, async () => {
      if (this.writer) await this.writer.write(threadId, background);
      else await this.writeHeld(threadId);
    });
  }

  /** Writes what every thread holds, in the background. */
  async flushAll(): Promise<void> {
    const threads = new Set([
      ...this.buffer.threads(),
      ...this.buffer.busyThreads(),
      ...(this.writer?.threads() ?? []),
    ]);
    for (const threadId of threads) await this.flush(threadId, { background: true });
  }

  /** Writes what every thread holds and stops the writer's background work: the database's close, before its pool ends. */
  async close(): Promise<void> {
    this.writer?.close();
    await this.flushAll();
  }

  /** Runs `work` alone for the thread: after every earlier holder of its lock (a write of its saves), before every later one. */
  exclusive<T>(threadId: string, work: () => Promise<T>): Promise<T> {
    return this.buffer.exclusive(threadId, work);
  }

  /** Removes and returns the thread's held saves (none: empty). Call under `exclusive`. */
  takeHeld(threadId: string): PendingSaves {
    return this.buffer.take(threadId);
  }

  /** Puts saves whose statement failed back in front of any held since. Call under `exclusive`. */
  restoreHeld(threadId: string, saves: PendingSaves): void {
    this.buffer.restore(threadId, saves);
  }

  /** Drops the thread's held saves: the statement they rode on failed, and the thread goes on from what is committed. */
  dropHeld(threadId: string): void {
    this.buffer.discard(threadId);
  }

  /** Whether the thread holds saves not yet written. */
  holds(threadId: string): boolean {
    return this.buffer.has(threadId);
  }

  /** Writes the thread's held saves alone, in one statement; on failure they are held again. Call under `exclusive`. */
  async writeHeld(threadId: string): Promise<void> {
    const saves = this.buffer.take(threadId);
    const query = savesStatement(saves);
    if (!query) return;
    await this.pool.query(queryConfig(query.text, query.values, this.named)).catch((error: unknown) => {
      this.buffer.restore(threadId, saves);
      throw error;
    });
  }

  private async flushFor(config: RunnableConfig | undefined): Promise<void> {
    const { threadId } = configIds(config);
    if (threadId !== undefined) await this.flush(threadId);
    else await this.flushAll();
  }
}
