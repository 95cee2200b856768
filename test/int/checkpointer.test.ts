/**
 * Warrant's checkpointer (src/persistence/checkpointer.ts) against LangGraph's
 * own PostgresSaver on the same database: the same saves leave the same rows
 * and load back identically, pending writes and interrupts included, on both
 * backends; and a real graph interrupted and resumed on it reads the same.
 */
import { randomBytes } from "node:crypto";
import { Annotation, Command, END, interrupt, START, StateGraph } from "@langchain/langgraph";
import { emptyCheckpoint, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { backends, type OpenedBackend } from "./support/postgres.js";

const SLOW = { timeout: 120_000 };
const uniqueThread = () => `thread-${randomBytes(4).toString("hex")}`;

/** Every stored row of a thread, with the thread id left out so two threads compare. */
async function rowsOf(opened: OpenedBackend, threadId: string): Promise<unknown> {
  const query = async (sql: string) => (await opened.database.pool.query(sql, [threadId])).rows;
  return {
    checkpoints: await query("select checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata from checkpoints where thread_id = $1 order by checkpoint_id"),
    blobs: await query("select checkpoint_ns, channel, version, type, blob from checkpoint_blobs where thread_id = $1 order by channel, version"),
    writes: await query("select checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob from checkpoint_writes where thread_id = $1 order by checkpoint_id, task_id, idx"),
  };
}

function sampleCheckpoint(id: string, values: Record<string, unknown>, versions: Record<string, string>): Checkpoint {
  return { ...emptyCheckpoint(), id, ts: "2025-01-02T03:04:05.678Z", channel_values: values, channel_versions: versions, versions_seen: { plan: { messages: "1" } } };
}

describe.each(backends)("checkpointer on the $name backend", (backend) => {
  let opened: OpenedBackend;
  beforeAll(async () => {
    opened = await backend.open();
  }, 60_000);
  afterAll(async () => {
    await opened?.cleanup();
  });

  test("stores exactly what PostgresSaver stores and loads it back identically", SLOW, async () => {
    const reference = new PostgresSaver(opened.database.pool);
    const ours = opened.database.saver;
    const saves = async (saver: PostgresSaver, threadId: string) => {
      const root = { configurable: { thread_id: threadId, checkpoint_ns: "" } };
      const first = sampleCheckpoint("1ef0000a-0000-6000-8000-000000000001", { messages: ["hello"], count: 3, nested: { a: [1, { b: "\u00e9" }] } }, { messages: "1", count: "1", nested: "1", gone: "1" });
      const firstConfig = await saver.put(root, first, { source: "input", step: -1, parents: {} }, first.channel_versions);
      await saver.putWrites(firstConfig, [["messages", "w1"], ["count", 4], ["messages", "w2"]], "task-a");
      // Special channels have fixed indexes and replace an earlier write; ordinary ones are never replaced.
      await saver.putWrites(firstConfig, [["__interrupt__", [{ value: { question: "approve?" }, id: "i1" }]]], "task-b");
      await saver.putWrites(firstConfig, [["__interrupt__", [{ value: { question: "approve again?" }, id: "i2" }]]], "task-b");
      await saver.putWrites(firstConfig, [["messages", "not stored"]], "task-a");
      await saver.putWrites(firstConfig, [["__resume__", { decisions: [{ type: "approve" }] }], ["__error__", { message: "x" }]], "task-c");
      const second = sampleCheckpoint("1ef0000a-0000-6000-8000-000000000002", { messages: ["hello", "w1", "w2"], count: 4 }, { messages: "2", count: "2", nested: "1" });
      await saver.put(firstConfig, second, { source: "loop", step: 0, parents: {} }, { messages: "2", count: "2" });
      await saver.putWrites({ configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: second.id } }, [], "task-empty");
    };
    const [theirs, mine] = [uniqueThread(), uniqueThread()];
    await saves(reference, theirs);
    await saves(ours, mine);

    expect(await rowsOf(opened, mine)).toEqual(await rowsOf(opened, theirs));
    const tuple = async (saver: PostgresSaver, threadId: string, checkpointId?: string) => {
      const loaded = await saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: "", ...(checkpointId ? { checkpoint_id: checkpointId } : {}) } });
      return { checkpoint: loaded?.checkpoint, metadata: loaded?.metadata, pendingWrites: loaded?.pendingWrites, parent: loaded?.parentConfig?.configurable?.checkpoint_id };
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
    expect(firstMine.checkpoint?.channel_values).toEqual({ messages: ["hello"], count: 3, nested: { a: [1, { b: "\u00e9" }] } });
    const latest = await tuple(ours, mine);
    expect(latest).toEqual(await tuple(reference, theirs));
    expect(latest.checkpoint?.channel_values).toEqual({ messages: ["hello", "w1", "w2"], count: 4, nested: { a: [1, { b: "\u00e9" }] } });
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
      .compile({ checkpointer: opened.database.saver });
    const config = { configurable: { thread_id: uniqueThread() }, durability: "sync" as const };
    await graph.invoke({ log: ["start"] }, config);
    const paused = await graph.getState(config);
    expect(paused.next).toEqual(["ask"]);
    expect(paused.tasks.flatMap((task) => task.interrupts.map((item) => item.value))).toEqual([{ question: "go?" }]);
    // A second handle on the same storage sees the same interrupt and can resume it.
    const again = new StateGraph(State)
      .addNode("ask", () => ({ log: [`answer:${String(interrupt({ question: "go?" }))}`] }))
      .addNode("after", () => ({ log: ["after"] }))
      .addEdge(START, "ask")
      .addEdge("ask", "after")
      .addEdge("after", END)
      .compile({ checkpointer: await opened.reopen().then((database) => database.saver) });
    await again.invoke(new Command({ resume: "yes" }), config);
    expect((await again.getState(config)).values).toEqual({ log: ["start", "answer:yes", "after"] });
  });
});
