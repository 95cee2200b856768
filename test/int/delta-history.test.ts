/**
 * Growing state fields are DeltaChannels (src/state.ts): a checkpoint stores
 * each step's writes, and a read rebuilds the value. Checked on both
 * backends: WarrantSaver's one-query history (checkpointer.ts) returns what
 * LangGraph's reference walk over `getTuple` returns, full copies (seeds)
 * included; a thread rebuilt after the database is reopened equals the
 * value the run produced; and what a step adds to the tables does not grow
 * with the thread.
 */
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { DeltaChannel, END, START, StateGraph, Annotation } from "@langchain/langgraph";
import { describe, expect, test } from "vitest";
import { appendTranscript, type TranscriptWrite } from "../../src/runtime/transcript.js";
import { backends, useBackend, type OpenedBackend } from "./support/postgres.js";
import { uniqueThread } from "../support/threads.js";

const SLOW = { timeout: 120_000 };

/** A loop that appends one AI message per step; full copies every 4 writes so seeds are exercised. */
function counterGraph(snapshotFrequency: number) {
  const State = Annotation.Root({
    messages: new DeltaChannel<BaseMessage[], TranscriptWrite>(appendTranscript, {
      snapshotFrequency,
      initialValueFactory: () => [],
    }),
    left: Annotation<number>,
  });
  return new StateGraph(State)
    .addNode("step", (state: typeof State.State) => ({
      messages: [new AIMessage(`step ${state.left}`)],
      left: state.left - 1,
    }))
    .addEdge(START, "step")
    .addConditionalEdges("step", (state: typeof State.State) => (state.left > 0 ? "step" : END));
}

async function threadBytes(opened: OpenedBackend, threadId: string): Promise<number> {
  const { rows } = await opened.database.pool.query<{ bytes: string }>(
    `select (select coalesce(sum(octet_length(checkpoint::text) + octet_length(metadata::text)), 0) from checkpoints where thread_id = $1)
          + (select coalesce(sum(octet_length(blob)), 0) from checkpoint_blobs where thread_id = $1)
          + (select coalesce(sum(octet_length(blob)), 0) from checkpoint_writes where thread_id = $1) as bytes`,
    [threadId],
  );
  return Number(rows[0]?.bytes ?? 0);
}

describe.each(backends)("delta channels on the $name backend", (backend) => {
  const current = useBackend(backend);

  test("the one-query history equals LangGraph's reference walk, at every checkpoint", SLOW, async () => {
    const saver = current().database.saver;
    const graph = counterGraph(4).compile({ checkpointer: saver });
    const threadId = uniqueThread("delta");
    const config = { configurable: { thread_id: threadId }, durability: "sync" as const };
    await graph.invoke({ messages: [new HumanMessage({ content: "start", id: "h1" })], left: 9 }, config);
    const checkpoints = [];
    for await (const tuple of saver.list({ configurable: { thread_id: threadId } })) checkpoints.push(tuple.config);
    expect(checkpoints.length).toBeGreaterThan(10);
    let seeds = 0;
    for (const at of checkpoints) {
      const options = { config: at, channels: ["messages", "absent"] };
      const ours = await saver.getDeltaChannelHistory(options);
      const reference = await BaseCheckpointSaver.prototype.getDeltaChannelHistory.call(saver, options);
      expect(ours).toEqual(reference);
      if (ours["messages"]?.seed !== undefined) seeds += 1;
    }
    // Full copies every 4 writes: some checkpoints rebuild from one.
    expect(seeds).toBeGreaterThan(0);
    // The latest checkpoint's history, without a checkpoint id, is the latest's.
    expect(
      await saver.getDeltaChannelHistory({ config: { configurable: { thread_id: threadId } }, channels: ["messages"] }),
    ).toEqual(await saver.getDeltaChannelHistory({ config: checkpoints[0]!, channels: ["messages"] }));
  });

  test("a thread read back equals what the run produced, ids included", SLOW, async () => {
    const graph = counterGraph(4).compile({ checkpointer: current().database.saver });
    const threadId = uniqueThread("delta");
    const config = { configurable: { thread_id: threadId }, durability: "sync" as const };
    const produced = (await graph.invoke({ messages: [new HumanMessage("no id given")], left: 7 }, config)) as {
      messages: BaseMessage[];
    };
    expect(produced.messages).toHaveLength(8);
    expect(new Set(produced.messages.map((message) => message.id)).size).toBe(8);
    const reread = (await graph.getState(config)).values as { messages: BaseMessage[] };
    expect(reread.messages.map((message) => [message.id, message.content])).toEqual(
      produced.messages.map((message) => [message.id, message.content]),
    );
    // A later run on the thread continues from the rebuilt transcript.
    const next = (await graph.invoke(
      { messages: [new HumanMessage({ content: "again", id: "h2" })], left: 1 },
      config,
    )) as { messages: BaseMessage[] };
    expect(next.messages.slice(0, 8).map((message) => message.id)).toEqual(
      produced.messages.map((message) => message.id),
    );
    expect(next.messages).toHaveLength(10);
  });

  test("what one more step stores does not grow with the thread", SLOW, async () => {
    // No full copy within these threads: the cost of a step is only its own writes and checkpoint.
    const graph = counterGraph(1_000).compile({ checkpointer: current().database.saver });
    const sized = async (steps: number) => {
      const threadId = uniqueThread("delta");
      await graph.invoke(
        { messages: [new HumanMessage({ content: "x".repeat(400), id: "h" })], left: steps },
        { configurable: { thread_id: threadId }, durability: "sync", recursionLimit: 100 },
      );
      return threadBytes(current(), threadId);
    };
    const [at10, at11, at40, at41] = [await sized(10), await sized(11), await sized(40), await sized(41)];
    // A step adds the same bytes at step 41 as at step 11 (give or take the digits of a counter).
    expect(Math.abs(at41 - at40 - (at11 - at10))).toBeLessThan(64);
  });
});
