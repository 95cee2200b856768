/**
 * Which saves the checkpointer holds is declared, never inferred
 * (checkpointer.ts `SaveHolding`): an undeclared thread writes every save
 * before the call returns; an open thread holds them until a write-ahead
 * step, a read or its declared end; special writes (interrupt, resume,
 * error) go at once. A recording pool counts the statements each call sends.
 */
import { emptyCheckpoint, type Checkpoint, type PendingWrite } from "@langchain/langgraph-checkpoint";
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { writesReplace } from "../../src/checkpoint/checkpoint-sql.js";
import { WarrantSaver } from "../../src/checkpoint/checkpointer.js";

/** A saver over a pool that only records the statements it is sent. */
function recordingSaver() {
  const sent: string[] = [];
  const pool = {
    query: async (query: string | { text: string }) => {
      sent.push(typeof query === "string" ? query : query.text);
      return { rows: [], rowCount: 0 };
    },
  } as unknown as pg.Pool;
  return { saver: new WarrantSaver(pool), sent };
}

let counter = 0;
function checkpoint(): Checkpoint {
  counter += 1;
  return {
    ...emptyCheckpoint(),
    id: `1ef0000-0000-6000-8000-${String(counter).padStart(12, "0")}`,
    channel_values: {},
  };
}

const config = (threadId: string) => ({ configurable: { thread_id: threadId, checkpoint_ns: "" } });

async function step(saver: WarrantSaver, threadId: string, source: "input" | "loop" = "loop", writes?: PendingWrite[]) {
  const saved = await saver.put(config(threadId), checkpoint(), { source, step: counter, parents: {} }, {});
  if (writes) await saver.putWrites(saved, writes, "task-1");
  return saved;
}

describe("save holding", () => {
  it("writes every put and putWrites of an undeclared thread before the call returns", async () => {
    const { saver, sent } = recordingSaver();
    await step(saver, "plain");
    expect(sent).toHaveLength(1);
    await step(saver, "plain", "loop", [["messages", "hi"]]);
    expect(sent).toHaveLength(3);
    expect(saver.holds("plain")).toBe(false);
    expect(saver.isHolding("plain")).toBe(false);
  });

  it("holds an open thread's saves until its declared end, which writes them all in one statement", async () => {
    const { saver, sent } = recordingSaver();
    await step(saver, "run", "input");
    expect(sent).toHaveLength(1);
    saver.openHolding("run");
    await step(saver, "run", "loop", [["messages", "a"]]);
    const last = await step(saver, "run", "loop", [["messages", "b"]]);
    expect(sent).toHaveLength(1);
    expect(saver.holds("run")).toBe(true);
    saver.closeHoldingAtNextCheckpoint("run");
    // The end's node writes before its checkpoint: still held, and written with it.
    await saver.putWrites(last, [["messages", "c"]], "task-2");
    expect(sent).toHaveLength(1);
    await step(saver, "run");
    expect(sent).toHaveLength(2);
    expect(saver.holds("run")).toBe(false);
    expect(saver.isHolding("run")).toBe(false);
    // After the end the thread is undeclared again.
    await step(saver, "run");
    expect(sent).toHaveLength(3);
  });

  it("writes a run's input checkpoint at once even while holding", async () => {
    const { saver, sent } = recordingSaver();
    saver.openHolding("again");
    await step(saver, "again", "input");
    expect(sent).toHaveLength(1);
    expect(saver.isHolding("again")).toBe(true);
  });

  it("writes interrupts, resumes and errors at once and ends holding", async () => {
    for (const channel of ["__interrupt__", "__error__", "__resume__"]) {
      const { saver, sent } = recordingSaver();
      saver.openHolding("stops");
      const saved = await step(saver, "stops");
      expect(sent).toHaveLength(0);
      await saver.putWrites(saved, [[channel, { value: 1 }]], "task-1");
      expect(sent).toHaveLength(1);
      expect(saver.isHolding("stops")).toBe(false);
    }
  });

  it("declaring the end of a thread never opened holds nothing", async () => {
    const { saver, sent } = recordingSaver();
    saver.closeHoldingAtNextCheckpoint("never");
    expect(saver.isHolding("never")).toBe(false);
    await step(saver, "never");
    expect(sent).toHaveLength(1);
  });

  it("a read, deleteThread and close write or end what a thread holds", async () => {
    const { saver, sent } = recordingSaver();
    saver.openHolding("read");
    await step(saver, "read");
    await saver.getTuple(config("read"));
    expect(sent).toHaveLength(2);
    expect(saver.isHolding("read")).toBe(true);
    saver.openHolding("gone");
    await step(saver, "gone");
    await saver.deleteThread("gone");
    expect(saver.isHolding("gone")).toBe(false);
    expect(saver.holds("gone")).toBe(false);
    saver.openHolding("closed");
    await step(saver, "closed");
    await saver.close();
    expect(saver.holds("closed")).toBe(false);
    expect(saver.isHolding("closed")).toBe(false);
  });
});

describe("writesReplace", () => {
  it("replaces only batches of special channels", () => {
    expect(writesReplace([["__interrupt__", 1]])).toBe(true);
    expect(
      writesReplace([
        ["__resume__", 1],
        ["__error__", 2],
      ]),
    ).toBe(true);
    expect(
      writesReplace([
        ["__interrupt__", 1],
        ["messages", 2],
      ]),
    ).toBe(false);
    expect(writesReplace([["constructor", 1]])).toBe(false);
  });
});
