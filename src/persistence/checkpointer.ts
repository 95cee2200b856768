/**
 * Warrant's checkpointer: LangGraph's `PostgresSaver` (same tables, same
 * reads, same serializer) whose saves are one statement each. PostgresSaver
 * 1.0.5 sends BEGIN, one INSERT per changed channel, the checkpoint and
 * COMMIT for every checkpoint, and BEGIN, one INSERT per write and COMMIT for
 * every task's writes; measured, that was 75 statements per tool step. Here a
 * checkpoint with its blobs is one statement and a task's writes another
 * (`checkpoint-sql.ts`): each is atomic on its own, and durable when `put`
 * or `putWrites` returns, exactly as before.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import type { Checkpoint, CheckpointMetadata, ChannelVersions, PendingWrite, SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import type pg from "pg";
import { checkpointsStatement, writesReplace, writesStatements, type CheckpointSave, type WritesSave } from "./checkpoint-sql.js";

export class WarrantSaver extends PostgresSaver {
  constructor(
    private readonly connections: pg.Pool,
    serde?: SerializerProtocol,
  ) {
    super(connections, serde);
  }

  override async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    const save = await this.checkpointSave(config, checkpoint, metadata, newVersions);
    const statement = checkpointsStatement([save]);
    await this.connections.query(statement.text, statement.values);
    return { configurable: { thread_id: save.thread_id, checkpoint_ns: save.checkpoint_ns, checkpoint_id: checkpoint.id } };
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    const save = await this.writesSave(config, writes, taskId);
    for (const statement of writesStatements([save])) await this.connections.query(statement.text, statement.values);
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
