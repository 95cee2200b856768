/**
 * How soon a reader on another instance sees a run's events, by the two
 * ways of learning that new rows are stored: polling the table, and a
 * `LISTEN` notification from the insert (with a slow poll behind it). Real
 * Postgres; writer and reader are in one process here, each with its own
 * connections as two instances would have. Prints the figures the README
 * quotes (`npx vitest run test/int/multi-instance-latency.test.ts`); asserts
 * delivery (every event, in order, once) and that notifications, not the
 * 1 s fallback poll, woke the reader.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { openDatabase, type Database } from "../../src/stores/open-database.js";
import type { RunEventListener } from "../../src/stores/run-events-listener.js";
import { EventLog } from "../../src/server/events.js";
import { readStoredEvents } from "../../src/server/runs/event-reader.js";
import { RunEventWriter } from "../../src/server/runs/event-writer.js";
import { RunEmitter } from "../../src/server/runs/emission.js";
import { createTestDatabase } from "./support/postgres.js";

const EVENTS = 150;
const GAP_MS = 20;
const owner = { tenant: "uni", user_id: "alice" };

let writing: Database;
let reading: Database;
let listener: RunEventListener;
const fixture = useSandbox();
beforeAll(async () => {
  const testDatabase = fixture.add(await createTestDatabase());
  writing = fixture.add(await openDatabase({ databaseUrl: testDatabase.url, dataDir: "/nonexistent" }));
  reading = fixture.add(await openDatabase({ databaseUrl: testDatabase.url, dataDir: "/nonexistent" }));
  listener = fixture.add(await reading.listenForRunEvents(() => undefined));
}, 60_000);

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

/** Emits EVENTS events GAP_MS apart on the writing side; returns each event's delay until the reading side had it. */
async function delivery(pollMs: number, notified: boolean): Promise<{ latencies: number[]; ids: number[] }> {
  const threadId = randomUUID();
  const runId = randomUUID();
  await writing.threads.create(owner, { thread_id: threadId, metadata: {} });
  await writing.threads.createRun(owner, {
    run_id: runId,
    thread_id: threadId,
    assistant_id: "agent",
    status: "running",
    metadata: {},
    kwargs: {},
  });
  const emitter = new RunEmitter(new EventLog(), new RunEventWriter(writing.runEvents, runId, () => undefined), [
    "updates",
  ]);
  const sentAt: number[] = [];
  const latencies: number[] = [];
  const ids: number[] = [];
  const stop = new AbortController();
  const reader = (async () => {
    const events = readStoredEvents({
      store: reading.runEvents,
      runId,
      afterId: undefined,
      signal: stop.signal,
      pollMs,
      ended: async () => undefined,
      unstored: async () => [],
      ...(notified ? { wake: (signal: AbortSignal) => listener.next(runId, signal) } : {}),
    });
    for await (const event of events) {
      latencies.push(performance.now() - sentAt[event.id!]!);
      ids.push(event.id!);
      if (ids.length === EVENTS) return;
    }
  })();
  for (let index = 0; index < EVENTS; index += 1) {
    sentAt.push(performance.now());
    emitter.push("updates", { step: index, text: "x".repeat(200) });
    await new Promise((resolve) => setTimeout(resolve, GAP_MS));
  }
  await Promise.race([reader, new Promise((resolve) => setTimeout(resolve, 30_000))]);
  stop.abort();
  return { latencies, ids };
}

describe("run events reach another instance", () => {
  it("by polling every 100 ms, and by LISTEN/NOTIFY with a 1 s fallback poll", async () => {
    const polled = await delivery(100, false);
    const notified = await delivery(1_000, true);
    for (const [label, result] of [
      ["poll 100 ms", polled],
      ["NOTIFY + 1 s poll", notified],
    ] as const) {
      const p50 = quantile(result.latencies, 0.5).toFixed(1);
      const p95 = quantile(result.latencies, 0.95).toFixed(1);
      console.log(
        `remote delivery, ${label}: p50 ${p50} ms, p95 ${p95} ms (n=${result.latencies.length}, one event every ${GAP_MS} ms)`,
      );
      expect(result.ids).toEqual(Array.from({ length: EVENTS }, (_unused, index) => index));
    }
    // Woken by notifications: the fallback poll alone would leave the median near 500 ms.
    expect(quantile(notified.latencies, 0.5)).toBeLessThan(250);
  }, 120_000);
});
