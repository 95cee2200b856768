/**
 * A read's outcome row commits after `finishSoon` returns
 * (src/stores/ledger-store.ts, checkpointer.ts `defer`): it is held for
 * the thread's next statement. The next intent row carries it in its own
 * statement (links in order, the chain unbroken); ledger reads, saves and
 * audit records send it first; and a failed one fails that operation and
 * drops the pending saves, so the thread continues from what was committed.
 */
import { describe, expect, test } from "vitest";
import type { RunStart } from "../../src/audit/chain.js";
import { backends, compileCounterGraph, sampleLedgerRow, useBackend } from "./support/postgres.js";
import { uniqueThread } from "../support/threads.js";

const SLOW = { timeout: 120_000 };
const succeeded = () => ({
  status: "succeeded" as const,
  error_code: null,
  finished_at: new Date().toISOString(),
  elapsed_ms: 3,
});

describe.each(backends)("background outcome rows on the $name backend", (backend) => {
  const current = useBackend(backend);

  test("a ledger read right after finishSoon sees the outcome", SLOW, async () => {
    const { ledger } = current().database;
    const threadId = uniqueThread("bg");
    await ledger.begin(threadId, sampleLedgerRow("call-1", 1));
    await ledger.finishSoon?.(threadId, "call-1", 1, succeeded());
    expect((await ledger.list(threadId)).map((row) => row.status)).toEqual(["succeeded"]);
    await ledger.finishSoon?.(threadId, "call-1", 1, { ...succeeded(), status: "failed", error_code: "tool_failed" });
    expect((await ledger.latest(threadId, "call-1"))?.status).toBe("failed");
  });

  test("the next intent row waits for it, in order", SLOW, async () => {
    const { ledger } = current().database;
    const threadId = uniqueThread("bg");
    await ledger.begin(threadId, sampleLedgerRow("call-1", 1));
    await ledger.finishSoon?.(threadId, "call-1", 1, succeeded());
    await ledger.begin(threadId, sampleLedgerRow("call-1", 2));
    const rows = (
      await current().database.pool.query<{ attempt: number; status: string }>(
        "select attempt, status from warrant.ledger where thread_id = $1 order by attempt",
        [threadId],
      )
    ).rows;
    expect(rows).toEqual([
      { attempt: 1, status: "succeeded" },
      { attempt: 2, status: "running" },
    ]);
  });

  test("a failed one fails the thread's next ledger read or save with its error, once", SLOW, async () => {
    const { ledger, saver } = current().database;
    const graph = compileCounterGraph(saver);
    const threadId = uniqueThread("bg");
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

  test(
    "the next intent row of the run carries it: one statement, both links in order, the chain verifies",
    SLOW,
    async () => {
      const { ledger, pool } = current().database;
      const threadId = uniqueThread("bg");
      const run: RunStart = {
        thread_id: threadId,
        run_id: `run-${threadId}`,
        owner: "alice",
        request_sha256: "0".repeat(64),
        started_at: new Date().toISOString(),
      };
      const row = (callId: string) => ({ ...sampleLedgerRow(callId, 1), run_id: run.run_id, owner: "alice" });
      await ledger.begin(threadId, row("call-1"), run);
      await ledger.finishSoon?.(threadId, "call-1", 1, succeeded(), run);
      // Nothing is written yet: the row still reads running in the table.
      const before = await pool.query<{ status: string }>("select status from warrant.ledger where thread_id = $1", [
        threadId,
      ]);
      expect(before.rows.map((stored) => stored.status)).toEqual(["running"]);
      const seen: string[] = [];
      const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
      pool.query = ((...args: unknown[]) => {
        const config = args[0] as { text?: string } | string;
        seen.push(typeof config === "string" ? config : (config.text ?? ""));
        return query(...args);
      }) as typeof pool.query;
      try {
        expect(await ledger.beginFirst(threadId, row("call-2"), run)).toBe(true);
      } finally {
        pool.query = query as typeof pool.query;
      }
      expect(seen).toHaveLength(1);
      const stored = await pool.query<{ call_id: string; status: string }>(
        "select call_id, status from warrant.ledger where thread_id = $1 order by call_id",
        [threadId],
      );
      expect(stored.rows).toEqual([
        { call_id: "call-1", status: "succeeded" },
        { call_id: "call-2", status: "running" },
      ]);
      const links = await pool.query<{ subject: string; seq: number }>(
        "select subject, seq from warrant.audit_events where run_id = $1 order by seq",
        [run.run_id],
      );
      expect(links.rows).toEqual([
        { subject: "call-1/1#1", seq: 1 },
        { subject: "call-1/1#2", seq: 2 },
        { subject: "call-2/1#3", seq: 3 },
      ]);
      expect(await current().database.verifyAudit(run.run_id)).toMatchObject({ breaks: [], events: 3, rows: 2 });
      // A call that already has rows: the held outcome is written all the same, the intent row is not.
      await ledger.finishSoon?.(threadId, "call-2", 1, succeeded(), run);
      expect(await ledger.beginFirst(threadId, row("call-2"), run)).toBe(false);
      expect((await ledger.latest(threadId, "call-2"))?.status).toBe("succeeded");
      expect(await current().database.verifyAudit(run.run_id)).toMatchObject({ breaks: [], events: 4, rows: 2 });
    },
  );

  test("an outcome for no such attempt fails the intent row it rides on with the invariant error", SLOW, async () => {
    const { ledger } = current().database;
    const threadId = uniqueThread("bg");
    await ledger.begin(threadId, sampleLedgerRow("call-1", 1));
    await ledger.finishSoon?.(threadId, "call-missing", 1, succeeded());
    await expect(ledger.begin(threadId, sampleLedgerRow("call-2", 1))).rejects.toMatchObject({
      name: "InvariantError",
    });
    expect((await ledger.list(threadId)).map((stored) => stored.call_id)).toEqual(["call-1", "call-2"]);
  });
});
