/**
 * What a thread holds in memory (checkpoint saves a run continues from, a
 * read's outcome held for the next statement: src/checkpoint/checkpointer.ts)
 * is written by a sweep once the thread has been idle for `idleFlushMs`, with
 * nobody touching the thread again: a run stopped between steps does not
 * leave its ledger showing a finished read as running, nor its checkpoints
 * only in this process's memory.
 */
import { END, START, StateGraph, Annotation } from "@langchain/langgraph";
import { describe, expect, test } from "vitest";
import { WarrantSaver } from "../../src/checkpoint/checkpointer.js";
import { createLedgerStore } from "../../src/stores/ledger-store.js";
import { writeAheadOf } from "../../src/checkpoint/write-ahead.js";
import { backends, compileCounterGraph, sampleLedgerRow, useBackend } from "./support/postgres.js";
import { uniqueThread } from "../support/threads.js";

const SLOW = { timeout: 120_000 };
const IDLE_MS = 50;
const succeeded = () => ({
  status: "succeeded" as const,
  error_code: null,
  finished_at: new Date().toISOString(),
  elapsed_ms: 3,
});

/** Polls `read` until it returns `expected` (deep equality) or 10 s pass; returns what it read last. */
async function eventually<T>(read: () => Promise<T>, expected: T): Promise<T> {
  const deadline = Date.now() + 10_000;
  let last = await read();
  while (JSON.stringify(last) !== JSON.stringify(expected) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    last = await read();
  }
  return last;
}

describe.each(backends)("the idle sweep on the $name backend", (backend) => {
  const current = useBackend(backend);

  function sweptStores(lines: string[] = []) {
    const { pool, schema } = current().database;
    const saver = new WarrantSaver(pool, undefined, { idleFlushMs: IDLE_MS, log: (line) => lines.push(line) });
    // The ledger reaches the saver's held saves through its write-ahead unit, explicitly.
    return { saver, ledger: createLedgerStore(pool, schema, { thread: writeAheadOf(saver) }) };
  }

  const statuses = async (threadId: string) =>
    (
      await current().database.pool.query<{ status: string }>(
        "select status from warrant.ledger where thread_id = $1 order by attempt",
        [threadId],
      )
    ).rows.map((row) => row.status);

  test("a read's held outcome is written with nobody touching the thread", SLOW, async () => {
    const { saver, ledger } = sweptStores();
    const threadId = uniqueThread("idle");
    await ledger.begin(threadId, sampleLedgerRow("call-1", 1));
    await ledger.finishSoon?.(threadId, "call-1", 1, succeeded());
    expect(await statuses(threadId)).toEqual(["running"]);
    expect(await eventually(() => statuses(threadId), ["succeeded"])).toEqual(["succeeded"]);
    await saver.close();
  });

  test("a run stopped between steps has the checkpoint it would go on from written", SLOW, async () => {
    const { saver } = sweptStores();
    const State = Annotation.Root({
      count: Annotation<number>({ reducer: (total, increment) => total + increment, default: () => 0 }),
    });
    const stop = new AbortController();
    let reachedSecond: () => void = () => undefined;
    const second = new Promise<void>((resolve) => (reachedSecond = resolve));
    const graph = new StateGraph(State)
      .addNode("first", () => ({ count: 1 }))
      .addNode("second", async () => {
        reachedSecond();
        await new Promise((_resolve, reject) =>
          stop.signal.addEventListener("abort", () => reject(new Error("stopped"))),
        );
        return { count: 1 };
      })
      .addEdge(START, "first")
      .addEdge("first", "second")
      .addEdge("second", END)
      .compile({ checkpointer: saver });
    const threadId = uniqueThread("idle");
    const run = graph.invoke(
      { count: 1 },
      { configurable: { thread_id: threadId }, durability: "sync", signal: stop.signal },
    );
    await second;
    stop.abort();
    await expect(run).rejects.toThrow();
    const checkpoints = async () =>
      (
        await current().database.pool.query<{ step: number }>(
          "select (metadata->>'step')::int as step from checkpoints where thread_id = $1 order by 1",
          [threadId],
        )
      ).rows.map((row) => row.step);
    // The input checkpoint is written at once; the one after `first`, which `second` goes on from, by the sweep.
    expect(await eventually(checkpoints, [-1, 0, 1])).toEqual([-1, 0, 1]);
    await saver.close();
  });

  test(
    "a sweep that fails is reported, fails the thread's next operation with its error, once, and the thread goes on",
    SLOW,
    async () => {
      const lines: string[] = [];
      const { saver, ledger } = sweptStores(lines);
      const threadId = uniqueThread("idle");
      await ledger.begin(threadId, sampleLedgerRow("call-1", 1));
      // No such attempt: the held update changes no row, which the sweep's statement reports as an invariant broken.
      await ledger.finishSoon?.(threadId, "call-missing", 1, succeeded());
      expect(await eventually(async () => lines.length, 1)).toBe(1);
      expect(lines[0]).toContain(threadId);
      // As when the thread's own operation sends it: that operation fails, and what was not committed is gone.
      await expect(ledger.list(threadId)).rejects.toMatchObject({ name: "InvariantError" });
      expect((await ledger.list(threadId)).map((row) => row.status)).toEqual(["running"]);
      await saver.close();
    },
  );

  test(
    "after a failed sweep the thread's next run fails with its error, once, and later runs go on from what is committed",
    SLOW,
    async () => {
      const lines: string[] = [];
      const { saver, ledger } = sweptStores(lines);
      const graph = compileCounterGraph(saver);
      const threadId = uniqueThread("idle");
      const config = { configurable: { thread_id: threadId }, durability: "sync" as const };
      await graph.invoke({ count: 1 }, config);
      await ledger.finishSoon?.(threadId, "call-missing", 1, succeeded());
      expect(await eventually(async () => lines.length, 1)).toBe(1);
      // The thread's next save fails with the sweep's error; after it, runs go on from what is committed.
      await expect(graph.invoke({ count: 1 }, config)).rejects.toMatchObject({ name: "InvariantError" });
      await graph.invoke({ count: 1 }, config);
      expect((await graph.getState(config)).values).toEqual({ count: 4 });
      await saver.close();
    },
  );
});
