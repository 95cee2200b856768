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
 * the process depends on it. Which saves may wait is DECLARED by the graph
 * that runs on the thread, never guessed from its channels (`SaveHolding`):
 * - a thread nobody declared holds nothing: every `put` and `putWrites` is
 *   written before it returns, as the stock PostgresSaver does (so foreign
 *   graphs and LangChain's conformance suite are correct by construction);
 * - `openHolding(thread)`: a run of the thread is under way (Warrant's graphs
 *   call it as each node starts, src/graph/save-holding.ts). From then on
 *   its checkpoints and ordinary task writes are HELD in memory;
 * - `closeHoldingAtNextCheckpoint(thread)`: the run ends with its next
 *   checkpoint (observe, the node that routes to END, calls it). That
 *   checkpoint, with everything held before it, is written before `put`
 *   returns, so the run's final state is durable before the run reports
 *   done (another worker may read the thread next), and holding ends.
 * Whatever is held is written, in order, by:
 * - whoever takes it under the thread's lock (`exclusive`, `takeHeld`):
 *   the runtime's write-ahead step (write-ahead.ts) commits it with an
 *   effect's intent row before the effect starts;
 * - a run's input checkpoint (metadata source `input`) and writes to special
 *   channels (interrupt, resume, error: these also end holding, the run
 *   stops or restarts), at once, before `put`/`putWrites` returns;
 * - any read of the thread (`getTuple`, `list`, `getDeltaChannelHistory`),
 *   `flush`, `flushAll`, the idle sweep, and `close` (the database's
 *   close, which also ends holding for every thread).
 * A run stopped otherwise (aborted, killed) leaves its thread declared until
 * its next run ends or the thread is deleted: its saves are still held and
 * written as above, never lost to a live process.
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
 * How a graph declares which of a thread's saves may be held (the header
 * says what each call does). Undeclared threads hold nothing.
 */
export interface SaveHolding {
  /** A run of the thread is under way: hold its checkpoints and task writes until the write-ahead step (or a read) writes them. */
  openHolding(threadId: string): void;
  /** The run ends with the thread's next checkpoint: write it and all held before `put` returns, then hold nothing. */
  closeHoldingAtNextCheckpoint(threadId: string): void;
  /** Whether the thread's saves are held now (opened, its end not yet written). */
  isHolding(threadId: string): boolean;
}

/**
 * The saver's held saves as its writer (the write-ahead unit) reaches them:
 * the typed contract between the two, so nothing tests for a method by name.
 * `takeHeld`, `restoreHeld`, `dropHeld` and `writeHeld` run under the
 * thread's lock (`exclusive`).
 */
export interface HeldSaves extends SaveHolding {
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
  /** Threads whose saves are held (`openHolding`): `closing` once their run's end is declared. */
  private readonly holding = new Map<string, "open" | "closing">();

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

  /** A run of the thread is under way: from now on its checkpoints and task writes are held. */
  openHolding(threadId: string): void {
    this.holding.set(threadId, "open");
  }

  /** The run ends with the thread's next checkpoint: it is written at once, with all held, and holding ends. */
  closeHoldingAtNextCheckpoint(threadId: string): void {
    if (this.holding.has(threadId)) this.holding.set(threadId, "closing");
  }

  /** Whether the thread's saves are held now. */
  isHolding(threadId: string): boolean {
    return this.holding.has(threadId);
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
    const holding = this.holding.get(save.thread_id);
    if (holding === "closing") this.holding.delete(save.thread_id);
    // Undeclared threads, a run's input and its declared end are written before `put` returns.
    if (holding !== "open" || metadata.source === "input") await this.flush(save.thread_id);
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
    if (save.upsert) this.holding.delete(threadId);
    if (!this.holding.has(threadId)) await this.flush(threadId);
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
      this.holding.delete(threadId);
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
    this.holding.clear();
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
