/**
 * A read's outcome row may commit after `finishSoon` returns
 * (src/persistence/ledger-store.ts, checkpointer.ts `background`): the
 * thread's ledger reads, next intent row and checkpoint saves wait for it,
 * and a failed one fails the thread's next step and drops its pending saves,
 * so the thread continues from what its last intent row committed.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, test } from "vitest";
import { backends, compileCounterGraph, sampleLedgerRow, useBackend } from "./support/postgres.js";

const SLOW = { timeout: 120_000 };
const uniqueThread = () => `bg-${randomBytes(4).toString("hex")}`;
const succeeded = () => ({ status: "succeeded" as const, error_code: null, finished_at: new Date().toISOString(), elapsed_ms: 3 });

describe.each(backends)("background outcome rows on the $name backend", (backend) => {
  const current = useBackend(backend);

  test("a ledger read right after finishSoon sees the outcome", SLOW, async () => {
    const { ledger } = current().database;
    const threadId = uniqueThread();
    await ledger.begin(threadId, sampleLedgerRow("call-1", 1));
    await ledger.finishSoon?.(threadId, "call-1", 1, succeeded());
    expect((await ledger.list(threadId)).map((row) => row.status)).toEqual(["succeeded"]);
    await ledger.finishSoon?.(threadId, "call-1", 1, { ...succeeded(), status: "failed", error_code: "tool_failed" });
    expect((await ledger.latest(threadId, "call-1"))?.status).toBe("failed");
  });

  test("the next intent row waits for it, in order", SLOW, async () => {
    const { ledger } = current().database;
    const threadId = uniqueThread();
    await ledger.begin(threadId, sampleLedgerRow("call-1", 1));
    await ledger.finishSoon?.(threadId, "call-1", 1, succeeded());
    await ledger.begin(threadId, sampleLedgerRow("call-1", 2));
    const rows = (await current().database.pool.query<{ attempt: number; status: string }>("select attempt, status from warrant.ledger where thread_id = $1 order by attempt", [threadId])).rows;
    expect(rows).toEqual([
      { attempt: 1, status: "succeeded" },
      { attempt: 2, status: "running" },
    ]);
  });

  test("a failed one fails the thread's next ledger read or save with its error, once", SLOW, async () => {
    const { ledger, saver } = current().database;
    const graph = compileCounterGraph(saver);
    const threadId = uniqueThread();
    const config = { configurable: { thread_id: threadId }, durability: "sync" as const };
    await graph.invoke({ count: 1 }, config);
    // No such attempt: the update changes no row, and that is an invariant broken.
    await ledger.finishSoon?.(threadId, "call-missing", 1, succeeded());
    await expect(ledger.list(threadId)).rejects.toMatchObject({ name: "InvariantError" });
    // Reported once: the thread goes on.
    expect(await ledger.list(threadId)).toEqual([]);
    expect((await graph.getState(config)).values).toEqual({ count: 2 });

    await ledger.finishSoon?.(threadId, "call-missing", 1, succeeded());
    await expect(saver.flush(threadId)).rejects.toMatchObject({ name: "InvariantError" });
    await expect(ledger.begin(threadId, sampleLedgerRow("call-2", 1))).resolves.toBeUndefined();
  });
});
