/**
 * A cancel waits for a write's whole step, not only for its ledger row: the
 * row leaves `running` when the call ends (say `outcome_unknown` at its
 * timeout), but the execute node then reconciles it and hands its result to
 * LangGraph. A cancel that stopped the run there left the thread with a
 * write its checkpoint did not know of (the next run: `thread_unfinished`).
 */
import { describe, expect, it } from "vitest";
import type { LedgerRow } from "../../src/state/ledger.js";
import { settlingWrite, whileSettlingWrite } from "../../src/execution/writes-in-flight.js";
import type { RunRow } from "../../src/stores/thread-rows.js";
import { safePointCancel, type ExecutionContext } from "../../src/server/runs/execution.js";

const THREAD = "7d1c2f0e-6a4b-4c8e-9f10-3b2a1c0d9e8f";
const run = { run_id: "run-1", thread_id: THREAD } as RunRow;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A write of this run as its ledger row stands. */
const writeRow = (status: LedgerRow["status"]): Partial<LedgerRow> => ({
  risk: "write_reversible",
  status,
  started_at: new Date().toISOString(),
});

/** Asks to cancel the run while the ledger shows `rows()` (read at every poll); the run's abort signal. */
function cancelWhile(rows: () => Partial<LedgerRow>[]): AbortSignal {
  const controller = new AbortController();
  const context = { ledger: { list: async () => rows() } } as unknown as ExecutionContext;
  safePointCancel(context, run, controller)();
  return controller.signal;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

describe("safePointCancel", () => {
  it("waits while the execute step settles a write whose row is no longer running, and stops once it ends", async () => {
    const reconciled = deferred();
    const step = whileSettlingWrite(THREAD, () => reconciled.promise);
    const signal = cancelWhile(() => [writeRow("outcome_unknown")]);
    await sleep(350);
    expect(signal.aborted).toBe(false);
    reconciled.resolve();
    await step;
    await sleep(250);
    expect(signal.aborted).toBe(true);
    expect(settlingWrite(THREAD)).toBe(false);
  });

  it("waits while the write's row is running, also with no step marked in this process", async () => {
    const row = writeRow("running");
    const signal = cancelWhile(() => [row]);
    await sleep(250);
    expect(signal.aborted).toBe(false);
    row.status = "succeeded";
    await sleep(250);
    expect(signal.aborted).toBe(true);
  });

  it("stops at once when nothing is in flight", async () => {
    const signal = cancelWhile(() => []);
    await sleep(50);
    expect(signal.aborted).toBe(true);
  });
});

describe("whileSettlingWrite", () => {
  it("marks the thread until a turn of the event loop after the step, nested steps counted", async () => {
    const thread = "0b9e7a5c-1d2f-4e3a-8b6c-5d4e3f2a1b0c";
    const outer = deferred();
    const inner = deferred();
    const first = whileSettlingWrite(thread, () => outer.promise);
    const second = whileSettlingWrite(thread, () => inner.promise);
    expect(settlingWrite(thread)).toBe(true);
    inner.resolve();
    await second;
    await new Promise((resolve) => setImmediate(resolve));
    expect(settlingWrite(thread)).toBe(true);
    outer.resolve();
    await first;
    // Still marked in the promise callbacks right after the step (where LangGraph commits its writes).
    await Promise.resolve();
    expect(settlingWrite(thread)).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(settlingWrite(thread)).toBe(false);
  });

  it("clears the mark when the step throws", async () => {
    const thread = "5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d";
    await expect(whileSettlingWrite(thread, async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    await new Promise((resolve) => setImmediate(resolve));
    expect(settlingWrite(thread)).toBe(false);
  });
});
