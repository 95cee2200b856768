/**
 * Warrant's checkpointer: LangGraph's `PostgresSaver` (same tables, same
 * reads, same serializer) that writes less often and in fewer statements.
 *
 * Fewer statements: PostgresSaver 1.0.5 sends BEGIN, one INSERT per changed
 * channel, the checkpoint and COMMIT for every checkpoint, and the same per
 * write for every task's writes (75 statements per tool step, measured).
 * Here any number of checkpoints with their blobs is one statement, and any
 * number of writes another (`checkpoint-sql.ts`).
 *
 * Fewer round trips: a save only has to be durable before something outside
 * the process depends on it. So a checkpoint the run continues from (a node
 * is triggered) and ordinary task writes wait in memory (`CheckpointBuffer`)
 * until one of these writes the thread's saves, in order:
 * - `transact`: a ledger intent row, in the SAME transaction, so before any
 *   external effect starts the checkpoint its run resumes from is committed
 *   with the row (src/persistence/ledger-store.ts);
 * - a checkpoint nothing continues from (the run's end), a run's input
 *   checkpoint, and writes to special channels (interrupt, resume, error):
 *   at once, before `put`/`putWrites` returns;
 * - any read of the thread (`getTuple`, `list`), its deletion, and `flushAll`
 *   (the database's close).
 * A process killed in between loses only saves made after the last effect
 * started: the run resumes from the checkpoint committed with that effect's
 * ledger row (or the run's input), re-runs plan/authorize/observe, which have
 * no external effects, and execute finds the effect's row and reconciles it,
 * never repeating it.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { compareChannelVersions, type Checkpoint, type CheckpointListOptions, type CheckpointMetadata, type CheckpointTuple, type ChannelVersions, type PendingWrite, type SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import type pg from "pg";
import { CheckpointBuffer, noSaves, type PendingSaves } from "./checkpoint-buffer.js";
import { checkpointsStatement, writesReplace, writesStatements, type CheckpointSave, type Statement, type WritesSave } from "./checkpoint-sql.js";
import type { Queryable } from "./ledger-store.js";

/** StateGraph's trigger channels: `branch:to:<node>`. */
const TRIGGER_PREFIX = "branch:to:";

/**
 * Whether some node is triggered by this checkpoint (a trigger channel that
 * holds a value, newer than what that node has seen), i.e. the run goes on
 * from it. A trigger its node consumed is empty (and gets a newer version
 * all the same, so the value is what tells). Anything else (no StateGraph
 * triggers at all, say) counts as an end and is written at once.
 */
export function runContinuesFrom(checkpoint: Pick<Checkpoint, "channel_versions" | "versions_seen" | "channel_values">): boolean {
  return Object.entries(checkpoint.channel_versions).some(([channel, version]) => {
    if (!channel.startsWith(TRIGGER_PREFIX) || !Object.hasOwn(checkpoint.channel_values, channel)) return false;
    const node = channel.slice(TRIGGER_PREFIX.length);
    const seen = Object.hasOwn(checkpoint.versions_seen, node) ? checkpoint.versions_seen[node]?.[channel] : undefined;
    return seen === undefined || compareChannelVersions(version, seen) > 0;
  });
}

export class WarrantSaver extends PostgresSaver {
  private readonly buffer = new CheckpointBuffer();

  constructor(
    private readonly connections: pg.Pool,
    serde?: SerializerProtocol,
  ) {
    super(connections, serde);
  }

  override async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    const save = await this.checkpointSave(config, checkpoint, metadata, newVersions);
    this.buffer.add(save.thread_id, { checkpoint: save });
    if (metadata.source === "input" || !runContinuesFrom(checkpoint)) await this.flush(save.thread_id);
    return { configurable: { thread_id: save.thread_id, checkpoint_ns: save.checkpoint_ns, checkpoint_id: checkpoint.id } };
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    const save = await this.writesSave(config, writes, taskId);
    if (save.rows.length === 0) return;
    const threadId = save.rows[0]?.[0] ?? "";
    this.buffer.add(threadId, { writes: save });
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
    await this.buffer.exclusive(threadId, async () => {
      this.buffer.discard(threadId);
      await super.deleteThread(threadId);
    });
  }

  /**
   * Runs `work` (a ledger intent write) in one transaction with the thread's
   * pending saves, after any flush of the thread already under way. Nothing
   * pending: `work` runs alone on the pool, as it would without this.
   */
  async transact<T>(threadId: string, work: (client: Queryable) => Promise<T>): Promise<T> {
    return this.buffer.exclusive(threadId, async () => {
      const saves = this.buffer.take(threadId);
      if (noSaves(saves)) return work(this.connections);
      return this.inTransaction(threadId, saves, work);
    });
  }

  /** Writes a thread's pending saves now. */
  async flush(threadId: string): Promise<void> {
    await this.buffer.exclusive(threadId, async () => {
      const saves = this.buffer.take(threadId);
      if (noSaves(saves)) return;
      const statements = statementsFor(saves);
      const only = statements.length === 1 ? statements[0] : undefined;
      if (only) {
        await this.connections.query(only.text, only.values).catch((error: unknown) => {
          this.buffer.restore(threadId, saves);
          throw error;
        });
        return;
      }
      await this.inTransaction(threadId, saves, async () => undefined);
    });
  }

  /** Writes every thread's pending saves (before the pool closes). */
  async flushAll(): Promise<void> {
    for (const threadId of this.buffer.threads()) await this.flush(threadId);
  }

  private async flushFor(config: RunnableConfig | undefined): Promise<void> {
    const threadId: unknown = config?.configurable?.thread_id;
    if (typeof threadId === "string") await this.flush(threadId);
    else await this.flushAll();
  }

  /** `saves`, then `work`, in one transaction; on failure the saves go back to the buffer. */
  private async inTransaction<T>(threadId: string, saves: PendingSaves, work: (client: Queryable) => Promise<T>): Promise<T> {
    const client = await this.connections.connect();
    let broken: Error | undefined;
    try {
      await client.query("begin");
      for (const statement of statementsFor(saves)) await client.query(statement.text, statement.values);
      const result = await work(client);
      await client.query("commit");
      return result;
    } catch (error) {
      this.buffer.restore(threadId, saves);
      await client.query("rollback").catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
      throw error;
    } finally {
      // A client whose rollback failed is in an unknown state: the pool destroys it.
      client.release(broken);
    }
  }

  /** What `put` stores, serialized as PostgresSaver serializes it. */
  protected async checkpointSave(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<CheckpointSave> {
    if (config.configurable === undefined) throw new Error(`Missing "configurable" field in "config" param`);
    const { thread_id: threadId, checkpoint_ns: namespace = "", checkpoint_id: parentId } = config.configurable as Record<string, string | undefined>;
    if (typeof threadId !== "string") throw new Error(`Missing "thread_id" in "config.configurable"`);
    const [blobs, serializedMetadata] = await Promise.all([
      this._dumpBlobs(threadId, namespace, checkpoint.channel_values, newVersions),
      this._dumpMetadata(metadata) as Promise<unknown>,
    ]);
    return {
      thread_id: threadId,
      checkpoint_ns: namespace,
      checkpoint_id: checkpoint.id,
      parent_checkpoint_id: parentId,
      checkpoint: this._dumpCheckpoint(checkpoint),
      metadata: serializedMetadata,
      blobs,
    };
  }

  /** What `putWrites` stores, serialized as PostgresSaver serializes it. */
  protected async writesSave(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<WritesSave> {
    const { thread_id: threadId, checkpoint_ns: namespace = "", checkpoint_id: checkpointId } = (config.configurable ?? {}) as Record<string, string | undefined>;
    if (typeof threadId !== "string" || typeof checkpointId !== "string") throw new Error(`Missing "thread_id" or "checkpoint_id" in "config.configurable"`);
    return { rows: await this._dumpWrites(threadId, namespace, checkpointId, taskId, writes), upsert: writesReplace(writes) };
  }
}

/** The statements that write `saves`: checkpoints with their blobs, then writes. */
function statementsFor(saves: PendingSaves): Statement[] {
  return [...(saves.checkpoints.length > 0 ? [checkpointsStatement(saves.checkpoints)] : []), ...writesStatements(saves.writes)];
}
