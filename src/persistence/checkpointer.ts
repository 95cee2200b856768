/**
 * Warrant's checkpointer: LangGraph's `PostgresSaver` (same tables, same
 * reads, same serializer) that writes less often and in fewer statements.
 *
 * Fewer statements: PostgresSaver 1.0.5 sends BEGIN, one INSERT per changed
 * channel, the checkpoint and COMMIT for every checkpoint, and the same per
 * write for every task's writes (75 statements per tool step, measured).
 * Here any number of checkpoints with their blobs and writes is one statement
 * of data-modifying CTEs (`checkpoint-sql.ts`), and the saves a ledger intent
 * row must commit with ride on that row's own statement.
 *
 * Fewer round trips: a save only has to be durable before something outside
 * the process depends on it. So a checkpoint the run continues from (a node
 * is triggered) and ordinary task writes wait in memory (`CheckpointBuffer`)
 * until one of these writes the thread's saves, in order:
 * - `transact`: a ledger intent row, in the SAME statement, so before any
 *   external effect starts the checkpoint its run resumes from is committed
 *   with the row (src/persistence/ledger-store.ts), together with the
 *   outcome of the thread's previous read, held back for it (`defer`);
 * - a held-back outcome sent on its own (a ledger read, an audit record, a
 *   flush), which carries them;
 * - a checkpoint nothing continues from (the run's end), a run's input
 *   checkpoint, and writes to special channels (interrupt, resume, error):
 *   at once, before `put`/`putWrites` returns;
 * - any read of the thread (`getTuple`, `list`, `getDeltaChannelHistory`),
 *   its deletion, `flushAll`, and `close` (the database's close);
 * - failing all of these, a sweep once the thread has been idle for
 *   `idleFlushMs` (a run cancelled between steps, a client gone): what a
 *   thread holds is in the database within seconds, and the ledger does not
 *   show a finished read as running until someone next touches the thread.
 * A process killed in between loses only saves made after the last effect
 * started: the run resumes from the checkpoint committed with that effect's
 * ledger row (or the run's input), re-runs plan/authorize/observe, which have
 * no external effects, and execute finds the effect's row and reconciles it,
 * never repeating it.
 *
 * Less data: the growing fields of the state are `DeltaChannel`s
 * (src/state.ts), which store each step's writes instead of the whole value;
 * `getDeltaChannelHistory` reads what rebuilds them in one recursive query.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  compareChannelVersions,
  WRITES_IDX_MAP,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type ChannelVersions,
  type DeltaChannelHistory,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import type pg from "pg";
import { CheckpointBuffer } from "./checkpoint-buffer.js";
import { IDLE_FLUSH_MS, IdleSweep } from "./idle-sweep.js";
import { isPlainJson, WarrantSerializer } from "./serde.js";
import type { DeferredStatement, MergedStatement, ThreadStatements } from "./ledger-store.js";
import { statement as queryConfig } from "./prepared.js";
import {
  deltaHistoryStatement,
  savesStatement,
  withSaves,
  writesReplace,
  type BlobRow,
  type CheckpointSave,
  type DeltaHistoryRow,
  type Statement,
  type WriteRow,
  type WritesSave,
} from "./checkpoint-sql.js";

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
  /** Idle time after which a thread's held saves and outcomes are written by a sweep (default IDLE_FLUSH_MS). */
  idleFlushMs?: number;
  /** Where a sweep's failure is reported (default: stderr). */
  log?: (line: string) => void;
}

export class WarrantSaver extends PostgresSaver implements ThreadStatements {
  private readonly buffer = new CheckpointBuffer();
  /** Statements held back per thread (reads' outcomes), in order: `defer`. */
  private readonly deferred = new Map<string, DeferredStatement[]>();
  /** Writes what idle threads hold (idle-sweep.ts). */
  private readonly sweep: IdleSweep;
  /** A sweep's failure that dropped a thread's saves: the thread's next operation fails with it, once. */
  private readonly lost = new Map<string, unknown>();

  private readonly named: boolean;

  constructor(
    private readonly connections: pg.Pool,
    serde?: SerializerProtocol,
    options: WarrantSaverOptions = {},
  ) {
    super(connections, serde ?? new WarrantSerializer());
    this.named = options.namedStatements ?? false;
    const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
    this.sweep = new IdleSweep(options.idleFlushMs ?? IDLE_FLUSH_MS, {
      holds: (threadId) => this.buffer.has(threadId) || this.deferred.has(threadId),
      write: (threadId) => this.flushHeld(threadId, true),
      failed: (threadId, error) =>
        log(
          `checkpointer: writing what thread ${threadId} held failed: ${error instanceof Error ? error.message : String(error)}`,
        ),
    });
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const save = await this.checkpointSave(config, checkpoint, metadata, newVersions);
    this.raiseLoss(save.thread_id);
    this.buffer.add(save.thread_id, { checkpoint: save });
    this.sweep.touch(save.thread_id);
    if (metadata.source === "input" || !runContinuesFrom(checkpoint)) await this.flush(save.thread_id);
    return {
      configurable: { thread_id: save.thread_id, checkpoint_ns: save.checkpoint_ns, checkpoint_id: checkpoint.id },
    };
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    const save = await this.writesSave(config, writes, taskId);
    if (save.rows.length === 0) return;
    const threadId = save.rows[0]?.[0] ?? "";
    this.raiseLoss(threadId);
    this.buffer.add(threadId, { writes: save });
    this.sweep.touch(threadId);
    // Interrupts, resumes and errors end or restart a run: a client (or another server) reads them next.
    if (save.upsert) await this.flush(threadId);
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    await this.flushFor(config);
    return super.getTuple(config);
  }

  override async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    await this.flushFor(config);
    yield* super.list(config, options);
  }

  override async deleteThread(threadId: string): Promise<void> {
    await this.locked(threadId, async () => {
      this.buffer.discard(threadId);
      this.lost.delete(threadId);
      // Ledger rows outlive the thread's checkpoints: a read's deferred outcome is still written.
      await this.sendDeferred(threadId);
      await super.deleteThread(threadId);
    });
  }

  /**
   * Holds `deferred` (a call's outcome row: ledger-store.ts says why nothing
   * needs it sooner) for the thread's next statement: the next intent row
   * folds it into its own statement when it can (`transact`), and any other
   * save, read or flush of the thread sends it first, carrying the pending
   * saves. If it fails (or its `check` throws), that operation fails with its
   * error and the thread's pending saves are dropped: the thread then
   * continues from what its last committed statement saved, as after a crash.
   */
  defer(threadId: string, deferred: DeferredStatement): void {
    const queue = this.deferred.get(threadId);
    if (queue) queue.push(deferred);
    else this.deferred.set(threadId, [deferred]);
    this.sweep.touch(threadId);
  }

  /** Sends the thread's deferred statements; throws if one failed. */
  async settle(threadId: string): Promise<void> {
    await this.locked(threadId, async () => {
      this.raiseLoss(threadId);
      await this.sendDeferred(threadId);
    });
  }

  /**
   * Runs the statement `intent` gives (a ledger intent write) with the
   * thread's pending saves in front of it as CTEs: one statement, one round
   * trip, committed or rolled back as one (checkpoint-sql.ts `withSaves`).
   * The thread's deferred statements are folded in by `merge` when it takes
   * them all, else sent before it. Runs after any flush of the thread
   * already under way. Returns the rows the intent wrote.
   */
  async transact(
    threadId: string,
    intent: () => Statement,
    merge?: (deferred: readonly DeferredStatement[]) => MergedStatement | undefined,
  ): Promise<number> {
    return this.locked(threadId, async () => {
      this.raiseLoss(threadId);
      const waiting = this.deferred.get(threadId);
      const merged = waiting && merge ? merge(waiting) : undefined;
      if (merged) this.deferred.delete(threadId);
      else await this.sendDeferred(threadId);
      const saves = this.buffer.take(threadId);
      let result: pg.QueryResult;
      try {
        const combined = withSaves(merged ? merged.statement : intent(), saves);
        result = await this.connections.query(queryConfig(combined.text, combined.values, this.named));
      } catch (error) {
        this.buffer.restore(threadId, saves);
        if (merged && waiting) this.deferred.set(threadId, [...waiting, ...(this.deferred.get(threadId) ?? [])]);
        throw error;
      }
      return merged ? merged.read(result) : (result.rowCount ?? 0);
    });
  }

  /** Writes a thread's deferred statements and pending saves now: the saves ride on the first deferred one, else go alone. */
  async flush(threadId: string): Promise<void> {
    await this.flushHeld(threadId);
  }

  /**
   * `flush`. In the `background` (the sweep, a flush of every thread) nobody
   * of the thread waits on it: a failure that drops its pending saves is kept
   * for the thread's next operation instead.
   */
  private async flushHeld(threadId: string, background = false): Promise<void> {
    await this.locked(threadId, async () => {
      if (!background) this.raiseLoss(threadId);
      await this.sendDeferred(threadId, background);
      const saves = this.buffer.take(threadId);
      const query = savesStatement(saves);
      if (!query) return;
      await this.connections.query(queryConfig(query.text, query.values, this.named)).catch((error: unknown) => {
        this.buffer.restore(threadId, saves);
        throw error;
      });
    });
  }

  /** Writes every thread's deferred statements and pending saves. */
  async flushAll(): Promise<void> {
    for (const threadId of new Set([...this.buffer.threads(), ...this.buffer.busyThreads(), ...this.deferred.keys()]))
      await this.flushHeld(threadId, true);
  }

  /**
   * The thread's deferred statements, in order, the first carrying its
   * pending saves. Call under the thread's lock. A failure drops the pending
   * saves and is thrown; `keepLoss` also keeps it for the thread's next
   * operation (nobody waits on a sweep), so a run never goes on from saves
   * whose parents were dropped.
   */
  private async sendDeferred(threadId: string, keepLoss = false): Promise<void> {
    const queue = this.deferred.get(threadId);
    if (!queue) return;
    this.deferred.delete(threadId);
    let saves = this.buffer.take(threadId);
    try {
      for (const entry of queue) {
        const statement = withSaves(entry.statement(), saves);
        saves = { checkpoints: [], writes: [] };
        entry.check(await this.connections.query(queryConfig(statement.text, statement.values, this.named)));
      }
    } catch (error) {
      // As after a crash: what is not committed is gone, and the thread goes on from what is.
      this.buffer.discard(threadId);
      if (keepLoss) this.lost.set(threadId, error);
      throw error;
    }
  }

  /** Stops the idle sweep for good and writes what every thread holds: the database's close, before its pool ends. */
  async close(): Promise<void> {
    this.sweep.stop();
    await this.flushAll();
  }

  /** Throws, once, the failure of a sweep that dropped the thread's pending saves. */
  private raiseLoss(threadId: string): void {
    if (!this.lost.has(threadId)) return;
    const error = this.lost.get(threadId);
    this.lost.delete(threadId);
    throw error;
  }

  /** `work` under the thread's lock, after its earlier holders. */
  private async locked<T>(threadId: string, work: () => Promise<T>): Promise<T> {
    return this.buffer.exclusive(threadId, work);
  }

  /**
   * What a `DeltaChannel` (src/state.ts) needs to rebuild its value at a
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
    const {
      thread_id: threadId,
      checkpoint_ns: namespace = "",
      checkpoint_id: checkpointId,
    } = (config.configurable ?? {}) as Record<string, string | undefined>;
    if (typeof threadId !== "string") throw new Error(`Missing "thread_id" in "config.configurable"`);
    await this.flush(threadId);
    const query = deltaHistoryStatement(threadId, namespace, checkpointId, channels);
    const { rows } = await this.connections.query<DeltaHistoryRow>(queryConfig(query.text, query.values, this.named));
    const history: Record<string, DeltaChannelHistory> = Object.fromEntries(
      channels.map((channel) => [channel, { writes: [] }]),
    );
    for (const row of rows) {
      const entry = history[row.channel];
      if (!entry) continue;
      const value = await this.serde.loadsTyped(row.type, row.blob ?? new Uint8Array());
      if (row.kind === "seed") entry.seed = value;
      else entry.writes.push([row.task_id ?? "", row.channel, value]);
    }
    return history;
  }

  private async flushFor(config: RunnableConfig | undefined): Promise<void> {
    const threadId: unknown = config?.configurable?.thread_id;
    if (typeof threadId === "string") await this.flush(threadId);
    else await this.flushAll();
  }

  /**
   * A value serialized once: a node's write and the channel value it becomes
   * are the same object (a last-value channel keeps the written value), and
   * `putWrites` serializes it before `put` stores it as the channel's blob,
   * in the same superstep, with no node running in between.
   */
  private readonly serialized = new WeakMap<object, [string, Uint8Array]>();

  private dumpOnce(value: unknown): [string, Uint8Array] | Promise<[string, Uint8Array]> {
    const key = typeof value === "object" && value !== null ? value : undefined;
    const known = key && this.serialized.get(key);
    if (known) return known;
    const remember = ([type, bytes]: [string, Uint8Array]): [string, Uint8Array] => {
      // The serializer's own buffer: nothing writes to it (PostgresSaver copies it anyway).
      const dumped: [string, Uint8Array] = [type, bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)];
      if (key) this.serialized.set(key, dumped);
      return dumped;
    };
    // Warrant's serializer answers at once; another (a test's) may not.
    if (this.serde instanceof WarrantSerializer) return remember(this.serde.dumpsTypedSync(value));
    return this.serde.dumpsTyped(value).then(remember);
  }

  /** As PostgresSaver's (same rows), each value serialized once (`dumpOnce`). */
  protected override async _dumpBlobs(
    threadId: string,
    namespace: string,
    values: Record<string, unknown>,
    versions: ChannelVersions,
  ): Promise<BlobRow[]> {
    const rows: (BlobRow | Promise<BlobRow>)[] = Object.entries(versions).map(([channel, version]) => {
      if (!(channel in values)) return [threadId, namespace, channel, version.toString(), "empty", undefined];
      const row = (dumped: [string, Uint8Array]): BlobRow => [
        threadId,
        namespace,
        channel,
        version.toString(),
        dumped[0],
        dumped[1],
      ];
      const dumped = this.dumpOnce(values[channel]);
      return Array.isArray(dumped) ? row(dumped) : dumped.then(row);
    });
    return rows.some((row) => row instanceof Promise) ? Promise.all(rows) : (rows as BlobRow[]);
  }

  /** As PostgresSaver's (same rows), each value serialized once (`dumpOnce`). */
  protected override async _dumpWrites(
    threadId: string,
    namespace: string,
    checkpointId: string,
    taskId: string,
    writes: [string, unknown][],
  ): Promise<WriteRow[]> {
    const rows: (WriteRow | Promise<WriteRow>)[] = writes.map(([channel, value], index) => {
      const row = (dumped: [string, Uint8Array]): WriteRow => [
        threadId,
        namespace,
        checkpointId,
        taskId,
        WRITES_IDX_MAP[channel] ?? index,
        channel,
        dumped[0],
        dumped[1],
      ];
      const dumped = this.dumpOnce(value);
      return Array.isArray(dumped) ? row(dumped) : dumped.then(row);
    });
    return rows.some((row) => row instanceof Promise) ? Promise.all(rows) : (rows as WriteRow[]);
  }

  /** What `put` stores, serialized as PostgresSaver serializes it. */
  protected async checkpointSave(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<CheckpointSave> {
    if (config.configurable === undefined) throw new Error(`Missing "configurable" field in "config" param`);
    const {
      thread_id: threadId,
      checkpoint_ns: namespace = "",
      checkpoint_id: parentId,
    } = config.configurable as Record<string, string | undefined>;
    if (typeof threadId !== "string") throw new Error(`Missing "thread_id" in "config.configurable"`);
    const blobs = await this._dumpBlobs(threadId, namespace, checkpoint.channel_values, newVersions);
    // PostgresSaver stores its serializer's JSON of the metadata (NULs taken out); for plain data that is JSON.stringify's.
    const metadataJson = isPlainJson(metadata)
      ? JSON.stringify(metadata)
      : JSON.stringify(await this._dumpMetadata(metadata));
    return {
      thread_id: threadId,
      checkpoint_ns: namespace,
      checkpoint_id: checkpoint.id,
      parent_checkpoint_id: parentId,
      checkpoint: this._dumpCheckpoint(checkpoint),
      metadata_json: metadataJson,
      blobs,
    };
  }

  /** What `putWrites` stores, serialized as PostgresSaver serializes it. */
  protected async writesSave(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<WritesSave> {
    const {
      thread_id: threadId,
      checkpoint_ns: namespace = "",
      checkpoint_id: checkpointId,
    } = (config.configurable ?? {}) as Record<string, string | undefined>;
    if (typeof threadId !== "string" || typeof checkpointId !== "string")
      throw new Error(`Missing "thread_id" or "checkpoint_id" in "config.configurable"`);
    return {
      rows: await this._dumpWrites(threadId, namespace, checkpointId, taskId, writes),
      upsert: writesReplace(writes),
    };
  }
}
