/**
 * Checkpoints to rows and back, for the checkpointer (checkpointer.ts): the
 * rows PostgresSaver 1.0.5 stores (the blobs' and writes' types and bytes
 * from the serializer, the checkpoint without its values, the metadata as
 * the serializer's JSON), read back as it reads them, so either can read
 * what the other wrote. Each value is serialized once (`dumpOnce`).
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  maxChannelVersion,
  TASKS,
  WRITES_IDX_MAP,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { writesReplace, type BlobRow, type CheckpointSave, type WriteRow, type WritesSave } from "./checkpoint-sql.js";
import type { CheckpointRow } from "./checkpoint-tables.js";
import { isPlainJson, WarrantSerializer } from "./serde.js";

type Dumped = [string, Uint8Array];

const decoder = new TextDecoder();
const text = (bytes: Uint8Array) => decoder.decode(bytes);

/** A config's thread, namespace and checkpoint id. */
export function configIds(config: RunnableConfig | undefined): {
  threadId: string | undefined;
  namespace: string;
  checkpointId: string | undefined;
} {
  const configurable = (config?.configurable ?? {}) as Record<string, unknown>;
  const { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: checkpointId } = configurable;
  return {
    threadId: typeof threadId === "string" ? threadId : undefined,
    namespace: typeof namespace === "string" ? namespace : "",
    checkpointId: typeof checkpointId === "string" ? checkpointId : undefined,
  };
}

export class CheckpointRows {
  /**
   * A value serialized once: a node's write and the channel value it becomes
   * are the same object (a last-value channel keeps the written value), and
   * `putWrites` serializes it before `put` stores it as the channel's blob,
   * in the same superstep, with no node running in between.
   */
  private readonly serialized = new WeakMap<object, Dumped>();

  constructor(
    private readonly serde: SerializerProtocol,
    /** The saver's next channel version (for checkpoints of format v < 4, read back). */
    private readonly nextVersion: (current: undefined) => string | number,
  ) {}

  private dumpOnce(value: unknown): Dumped | Promise<Dumped> {
    const key = typeof value === "object" && value !== null ? value : undefined;
    const known = key && this.serialized.get(key);
    if (known) return known;
    const remember = ([type, bytes]: Dumped): Dumped => {
      // The serializer's own buffer: nothing writes to it.
      const dumped: Dumped = [type, bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)];
      if (key) this.serialized.set(key, dumped);
      return dumped;
    };
    // Warrant's serializer answers plain data at once; anything else (and another serializer, a test's) may not.
    const fast = this.serde instanceof WarrantSerializer ? this.serde.dumpsTypedSync(value) : undefined;
    if (fast) return remember(fast);
    return this.serde.dumpsTyped(value).then(remember);
  }

  /** One blob row per new channel version; a channel without a value is `empty`. */
  private async blobs(
    threadId: string,
    namespace: string,
    values: Record<string, unknown>,
    versions: ChannelVersions,
  ): Promise<BlobRow[]> {
    const rows: (BlobRow | Promise<BlobRow>)[] = Object.entries(versions).map(([channel, version]) => {
      if (!(channel in values)) return [threadId, namespace, channel, version.toString(), "empty", undefined];
      const row = (dumped: Dumped): BlobRow => [threadId, namespace, channel, version.toString(), dumped[0], dumped[1]];
      const dumped = this.dumpOnce(values[channel]);
      return Array.isArray(dumped) ? row(dumped) : dumped.then(row);
    });
    return rows.some((row) => row instanceof Promise) ? Promise.all(rows) : (rows as BlobRow[]);
  }

  /** One write row per write; special channels take their fixed index (WRITES_IDX_MAP). */
  private async writes(
    threadId: string,
    namespace: string,
    checkpointId: string,
    taskId: string,
    writes: PendingWrite[],
  ): Promise<WriteRow[]> {
    const rows: (WriteRow | Promise<WriteRow>)[] = writes.map(([channel, value], index) => {
      const row = (dumped: Dumped): WriteRow => [
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

  /** What `put` stores. */
  async checkpointSave(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<CheckpointSave> {
    if (config.configurable === undefined) throw new Error(`Missing "configurable" field in "config" param`);
    const { threadId, namespace, checkpointId: parentId } = configIds(config);
    if (threadId === undefined) throw new Error(`Missing "thread_id" in "config.configurable"`);
    const blobs = await this.blobs(threadId, namespace, checkpoint.channel_values, newVersions);
    // The serializer's JSON of the metadata (NULs taken out); for plain data that is JSON.stringify's.
    const metadataJson = isPlainJson(metadata)
      ? JSON.stringify(metadata)
      : JSON.stringify(await this.metadataJson(metadata));
    const { channel_values: _values, ...stored } = checkpoint;
    return {
      thread_id: threadId,
      checkpoint_ns: namespace,
      checkpoint_id: checkpoint.id,
      parent_checkpoint_id: parentId,
      checkpoint: stored,
      metadata_json: metadataJson,
      blobs,
    };
  }

  /** What `putWrites` stores. */
  async writesSave(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<WritesSave> {
    const { threadId, namespace, checkpointId } = configIds(config);
    if (threadId === undefined || checkpointId === undefined)
      throw new Error(`Missing "thread_id" or "checkpoint_id" in "config.configurable"`);
    return {
      rows: await this.writes(threadId, namespace, checkpointId, taskId, writes),
      upsert: writesReplace(writes),
    };
  }

  private async metadataJson(metadata: CheckpointMetadata): Promise<unknown> {
    const [, bytes] = await this.serde.dumpsTyped(metadata);
    return JSON.parse(text(bytes).replace(/\0/g, ""));
  }

  /** A stored value back (the serializer's reader). */
  load(type: string, bytes: Uint8Array | null | undefined): Promise<unknown> {
    return this.serde.loadsTyped(type, bytes ?? new Uint8Array());
  }

  /** A row as a tuple; `ids` name its config (getTuple keeps the caller's thread and namespace). */
  async tuple(row: CheckpointRow, ids: { threadId: string; namespace: string }): Promise<CheckpointTuple> {
    const { threadId, namespace } = ids;
    const config = (checkpointId: string) => ({
      configurable: { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: checkpointId },
    });
    const stored = row.checkpoint as unknown as Checkpoint;
    const values = (row.channel_values ?? []).filter(([, type]) => text(type) !== "empty");
    const channelValues = Object.fromEntries(
      await Promise.all(
        values.map(async ([channel, type, blob]) => [text(channel), await this.load(text(type), blob)]),
      ),
    );
    const [metadataType, metadataBytes] = await this.serde.dumpsTyped(row.metadata);
    const pendingWrites = await Promise.all(
      (row.pending_writes ?? []).map(
        async ([task, channel, type, blob]) =>
          [text(task), text(channel), await this.load(text(type), blob)] as [string, string, unknown],
      ),
    );
    return {
      config: config(row.checkpoint_id),
      checkpoint: {
        ...stored,
        channel_versions: stored.channel_versions ?? {},
        versions_seen: stored.versions_seen ?? {},
        channel_values: channelValues,
      },
      metadata: (await this.serde.loadsTyped(metadataType, metadataBytes)) as CheckpointMetadata,
      parentConfig: row.parent_checkpoint_id ? config(row.parent_checkpoint_id) : undefined,
      pendingWrites,
    };
  }

  /**
   * A checkpoint of format v < 4 kept its sends as writes to `TASKS` of its
   * parent: they become its `TASKS` value, at a version above every other
   * (as PostgresSaver reads them).
   */
  async migratePendingSends(sends: [Uint8Array, Uint8Array][], row: CheckpointRow): Promise<void> {
    const loaded = await Promise.all(sends.map(([type, blob]) => this.load(text(type), blob)));
    const [type, blob] = await this.serde.dumpsTyped(loaded);
    const encoder = new TextEncoder();
    row.channel_values ??= [];
    row.channel_values.push([encoder.encode(TASKS), encoder.encode(type), blob]);
    row.checkpoint.channel_versions ??= {};
    const versions = row.checkpoint.channel_versions;
    const existing = Object.values(versions);
    versions[TASKS] = existing.length > 0 ? maxChannelVersion(...existing) : this.nextVersion(undefined);
  }
}
