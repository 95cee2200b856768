/**
 * Warrant's checkpointer (src/checkpoint/checkpointer.ts) against LangGraph's
 * own PostgresSaver on the same database: the same saves leave the same rows
 * and load back identically, pending writes and interrupts included, on both
 * backends; and a real graph interrupted and resumed on it reads the same.
 */
import os from "node:os";
import { Annotation, Command, END, interrupt, START, StateGraph } from "@langchain/langgraph";
import { emptyCheckpoint, type BaseCheckpointSaver, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { describe, expect, test } from "vitest";
import { openDatabase, type Database } from "../../src/stores/open-database.js";
import { backends, createTestDatabase, sampleLedgerRow, type OpenedBackend, useBackend } from "./support/postgres.js";
import { uniqueThread } from "../support/threads.js";

const SLOW = { timeout: 120_000 };

/** Every stored row of a thread, with the thread id left out so two threads compare. */
async function rowsOf(opened: OpenedBackend, threadId: string): Promise<unknown> {
  const query = async (sql: string) => (await opened.database.pool.query(sql, [threadId])).rows;
  return {
    checkpoints: await query(
      "select checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata " +
        "from checkpoints where thread_id = $1 order by checkpoint_id",
    ),
    blobs: await query(
      "select checkpoint_ns, channel, version, type, blob from checkpoint_blobs where thread_id = $1 order by channel, version",
    ),
    writes: await query(
      "select checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob " +
        "from checkpoint_writes where thread_id = $1 order by checkpoint_id, task_id, idx",
    ),
  };
}

function sampleCheckpoint(id: string, values: Record<string, unknown>, versions: Record<string, string>): Checkpoint {
  return {
    ...emptyCheckpoint(),
    id,
    ts: "2025-01-02T03:04:05.678Z",
    channel_values: values,
    channel_versions: versions,
    versions_seen: { plan: { messages: "1" } },
  };
}

describe.each(backends)("checkpointer on the $name backend", (backend) => {
  const opened = useBackend(backend);

  test("stores exactly what PostgresSaver stores and loads it back identically", SLOW, async () => {
    const reference = new PostgresSaver(opened().database.pool);
    const ours = opened().database.saver;
    const saves = async (saver: BaseCheckpointSaver, threadId: string) => {
      const root = { configurable: { thread_id: threadId, checkpoint_ns: "" } };
      const first = sampleCheckpoint(
        "1ef0000a-0000-6000-8000-000000000001",
        { messages: ["hello"], count: 3, nested: { a: [1, { b: "\u00e9" }] } },
        { messages: "1", count: "1", nested: "1", gone: "1" },
      );
      const firstConfig = await saver.put(
        root,
        first,
        { source: "input", step: -1, parents: {} },
        first.channel_versions,
      );
      await saver.putWrites(
        firstConfig,
        [
          ["messages", "w1"],
          ["count", 4],
          ["messages", "w2"],
        ],
        "task-a",
      );
      // Special channels have fixed indexes and replace an earlier write; ordinary ones are never replaced.
      await saver.putWrites(
        firstConfig,
        [["__interrupt__", [{ value: { question: "approve?" }, id: "i1" }]]],
        "task-b",
      );
      await saver.putWrites(
        firstConfig,
        [["__interrupt__", [{ value: { question: "approve again?" }, id: "i2" }]]],
        "task-b",
      );
      await saver.putWrites(firstConfig, [["messages", "not stored"]], "task-a");
      await saver.putWrites(
        firstConfig,
        [
          ["__resume__", { decisions: [{ type: "approve" }] }],
          ["__error__", { message: "x" }],
        ],
        "task-c",
      );
      const second = sampleCheckpoint(
        "1ef0000a-0000-6000-8000-000000000002",
        { messages: ["hello", "w1", "w2"], count: 4 },
        { messages: "2", count: "2", nested: "1" },
      );
      await saver.put(firstConfig, second, { source: "loop", step: 0, parents: {} }, { messages: "2", count: "2" });
      await saver.putWrites(
        { configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: second.id } },
        [],
        "task-empty",
      );
    };
    const [theirs, mine] = [uniqueThread(), uniqueThread()];
    await saves(reference, theirs);
    await saves(ours, mine);

    expect(await rowsOf(opened(), mine)).toEqual(await rowsOf(opened(), theirs));
    const tuple = async (saver: BaseCheckpointSaver, threadId: string, checkpointId?: string) => {
      const loaded = await saver.getTuple({
        configurable: {
          thread_id: threadId,
          checkpoint_ns: "",
          ...(checkpointId ? { checkpoint_id: checkpointId } : {}),
        },
      });
      return {
        checkpoint: loaded?.checkpoint,
        metadata: loaded?.metadata,
        pendingWrites: loaded?.pendingWrites,
        parent: loaded?.parentConfig?.configurable?.checkpoint_id,
      };
    };
    const firstMine = await tuple(ours, mine, "1ef0000a-0000-6000-8000-000000000001");
    expect(firstMine).toEqual(await tuple(reference, theirs, "1ef0000a-0000-6000-8000-000000000001"));
    expect(firstMine.pendingWrites).toEqual([
      ["task-a", "messages", "w1"],
      ["task-a", "count", 4],
      ["task-a", "messages", "w2"],
      ["task-b", "__interrupt__", [{ value: { question: "approve again?" }, id: "i2" }]],
      // Ordered by index: the resume's fixed index is below the error's.
      ["task-c", "__resume__", { decisions: [{ type: "approve" }] }],
      ["task-c", "__error__", { message: "x" }],
    ]);
    expect(firstMine.checkpoint?.channel_values).toEqual({
      messages: ["hello"],
      count: 3,
      nested: { a: [1, { b: "\u00e9" }] },
    });
    const latest = await tuple(ours, mine);
    expect(latest).toEqual(await tuple(reference, theirs));
    expect(latest.checkpoint?.channel_values).toEqual({
      messages: ["hello", "w1", "w2"],
      count: 4,
      nested: { a: [1, { b: "\u00e9" }] },
    });
    expect(latest.parent).toBe("1ef0000a-0000-6000-8000-000000000001");
  });

  test("a graph interrupted on it resumes from what it stored", SLOW, async () => {
    const State = Annotation.Root({
      log: Annotation<string[]>({ reducer: (current, update) => [...current, ...update], default: () => [] }),
    });
    const graph = new StateGraph(State)
      .addNode("ask", () => ({ log: [`answer:${String(interrupt({ question: "go?" }))}`] }))
      .addNode("after", () => ({ log: ["after"] }))
      .addEdge(START, "ask")
      .addEdge("ask", "after")
      .addEdge("after", END)
      .compile({ checkpointer: opened().database.saver });
    const config = { configurable: { thread_id: uniqueThread() }, durability: "sync" as const };
    await graph.invoke({ log: ["start"] }, config);
    // Durable when invoke returns: LangGraph's own saver, which has no buffer to flush, reads it from the tables.
    const plain = await new PostgresSaver(opened().database.pool).getTuple(config);
    expect(plain?.pendingWrites?.filter(([, channel]) => channel === "__interrupt__").length).toBe(1);
    const paused = await graph.getState(config);
    expect(paused.next).toEqual(["ask"]);
    expect(paused.tasks.flatMap((task) => task.interrupts.map((item) => item.value))).toEqual([{ question: "go?" }]);
    // A second handle on the same storage sees the same interrupt and can resume it.
    let reopened: Database | undefined;
    const again = new StateGraph(State)
      .addNode("ask", () => ({ log: [`answer:${String(interrupt({ question: "go?" }))}`] }))
      .addNode("after", () => ({ log: ["after"] }))
      .addEdge(START, "ask")
      .addEdge("ask", "after")
      .addEdge("after", END)
      .compile({ checkpointer: (reopened = await opened().reopen()).saver });
    await again.invoke(new Command({ resume: "yes" }), config);
    // The run's last checkpoint is in the tables when invoke returns (read before anything could flush it).
    const ended = reopened ? await new PostgresSaver(reopened.pool).getTuple(config) : undefined;
    expect(ended?.checkpoint.channel_values).toMatchObject({ log: ["start", "answer:yes", "after"] });
    expect((await again.getState(config)).values).toEqual({ log: ["start", "answer:yes", "after"] });
  });
});

/** A gate a node waits at, and a signal that it got there. */
function gate() {
  let open: () => void = () => undefined;
  let arrived: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const reached = new Promise<void>((resolve) => (arrived = resolve));
  return {
    open,
    reached,
    wait: () => {
      arrived();
      return opened;
    },
  };
}

describe("checkpointer: a process killed between a buffered save and its flush", () => {
  test("resumes from the checkpoint committed with the last ledger intent row, and finds that row", SLOW, async () => {
    const scratch = await createTestDatabase();
    const first = await openDatabase({ databaseUrl: scratch.url, dataDir: os.tmpdir() });
    let second: Database | undefined;
    try {
      const threadId = uniqueThread();
      const State = Annotation.Root({
        log: Annotation<string[]>({ reducer: (current, update) => [...current, ...update], default: () => [] }),
      });
      const build = (database: Database, afterEffect: () => Promise<void>) =>
        new StateGraph(State)
          .addNode("before", () => {
            // As Warrant's graphs declare (src/graph/save-holding.ts): each node opens holding, the last declares the end.
            database.saver.openHolding(threadId);
            return { log: ["before"] };
          })
          .addNode("effect", async () => {
            database.saver.openHolding(threadId);
            // The intent row commits the thread's buffered saves with it; the "effect" would start after.
            const fresh = await database.ledger.beginFirst(threadId, sampleLedgerRow("call-1", 1));
            return { log: [fresh ? "effect" : "effect found its row"] };
          })
          .addNode("after", async () => {
            database.saver.openHolding(threadId);
            await afterEffect();
            database.saver.closeHoldingAtNextCheckpoint(threadId);
            return { log: ["after"] };
          })
          .addEdge(START, "before")
          .addEdge("before", "effect")
          .addEdge("effect", "after")
          .addEdge("after", END)
          .compile({ checkpointer: database.saver });
      const config = { configurable: { thread_id: threadId }, durability: "sync" as const };
      const stuck = gate();
      // The first process gets past the effect and is "killed" (never resumed) inside `after`:
      // effect's writes and the checkpoint after it are still in its memory only.
      void build(first, stuck.wait)
        .invoke({ log: ["start"] }, config)
        .catch(() => undefined);
      await stuck.reached;

      second = await openDatabase({ databaseUrl: scratch.url, dataDir: os.tmpdir() });
      const restarted = build(second, async () => undefined);
      const durable = await restarted.getState(config);
      expect(durable.values).toEqual({ log: ["start", "before"] });
      expect(durable.next).toEqual(["effect"]);
      expect((await second.ledger.list(threadId)).map((row) => `${row.call_id}#${row.attempt}:${row.status}`)).toEqual([
        "call-1#1:running",
      ]);

      await restarted.invoke(null, config);
      // The declared end was written before invoke returned: nothing is left held.
      expect(second.saver.holds(threadId)).toBe(false);
      expect(second.saver.isHolding(threadId)).toBe(false);
      expect((await new PostgresSaver(second.pool).getTuple(config))?.checkpoint.channel_values).toMatchObject({
        log: ["start", "before", "effect found its row", "after"],
      });
      expect((await restarted.getState(config)).values).toEqual({
        log: ["start", "before", "effect found its row", "after"],
      });
    } finally {
      await second?.close();
      await first.close().catch(() => undefined);
      await scratch.drop();
    }
  });
});

describe("checkpointer: declared holding", () => {
  test(
    "a run's final checkpoint is committed, seen from another pool, when the run ends; undeclared runs hold nothing",
    SLOW,
    async () => {
      const scratch = await createTestDatabase();
      const database = await openDatabase({ databaseUrl: scratch.url, dataDir: os.tmpdir() });
      const other = new pg.Pool({ connectionString: scratch.url, max: 1 });
      try {
        const State = Annotation.Root({
          log: Annotation<string[]>({ reducer: (current, update) => [...current, ...update], default: () => [] }),
        });
        const build = (declare: boolean) =>
          new StateGraph(State)
            .addNode("first", () => {
              if (declare) database.saver.openHolding(threadOf.current);
              return { log: ["first"] };
            })
            .addNode("last", () => {
              if (declare) database.saver.closeHoldingAtNextCheckpoint(threadOf.current);
              return { log: ["last"] };
            })
            .addEdge(START, "first")
            .addEdge("first", "last")
            .addEdge("last", END)
            .compile({ checkpointer: database.saver });
        const threadOf = { current: "" };
        const committedSteps = async (threadId: string) =>
          (
            await other.query<{ step: number }>(
              "select (metadata->>'step')::int as step from checkpoints where thread_id = $1 order by 1",
              [threadId],
            )
          ).rows.map((row) => row.step);

        threadOf.current = uniqueThread("declared");
        const declared = threadOf.current;
        await build(true).invoke({ log: [] }, { configurable: { thread_id: declared }, durability: "sync" });
        // Read on another connection, never through the saver (a read would flush).
        expect(await committedSteps(declared)).toEqual([-1, 0, 1, 2]);
        expect(database.saver.holds(declared)).toBe(false);

        threadOf.current = uniqueThread("plain");
        const plain = threadOf.current;
        let seenMidRun: number[] = [];
        const graph = new StateGraph(State)
          .addNode("first", () => ({ log: ["first"] }))
          .addNode("last", async () => {
            seenMidRun = await committedSteps(plain);
            return { log: ["last"] };
          })
          .addEdge(START, "first")
          .addEdge("first", "last")
          .addEdge("last", END)
          .compile({ checkpointer: database.saver });
        await graph.invoke({ log: [] }, { configurable: { thread_id: plain }, durability: "sync" });
        // Undeclared: the checkpoint `last` runs from was already committed while it ran.
        expect(seenMidRun).toEqual([-1, 0, 1]);
        expect(await committedSteps(plain)).toEqual([-1, 0, 1, 2]);
      } finally {
        await other.end();
        await database.close();
        await scratch.drop();
      }
    },
  );
});
