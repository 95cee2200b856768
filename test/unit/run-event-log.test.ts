/**
 * The executing process's log and what other instances read from the table
 * behind it: the same ids and the same wire JSON, from any Last-Event-ID,
 * deltas rebuilt; the end marker never sent; a run whose process died ends
 * with its row's error. The table is an in-memory stand-in here (the
 * Postgres store is exercised by test/int/multi-instance.test.ts).
 */
import { describe, expect, it } from "vitest";
import type { RunEventStore, StoredEvent } from "../../src/stores/run-events-store.js";
import type { RunRow } from "../../src/stores/thread-rows.js";
import { EventLog } from "../../src/server/events.js";
import { readStoredEvents, type SentEvent } from "../../src/server/runs/event-reader.js";
import { RunEventWriter } from "../../src/server/runs/event-writer.js";
import { RunEmitter } from "../../src/server/runs/emission.js";
import { collect } from "../support/streams.js";

function memoryStore(): RunEventStore & { rows: StoredEvent[] } {
  const rows: StoredEvent[] = [];
  return {
    rows,
    async append(_runId, events) {
      for (const event of events) if (!rows.some((row) => row.seq === event.seq)) rows.push(event);
    },
    async read(_runId, afterSeq, options) {
      const bases = options.withBases ? rows.filter((row) => row.seq <= afterSeq && row.chain !== null) : [];
      return [...bases, ...rows.filter((row) => row.seq > afterSeq).slice(0, options.limit)];
    },
    async purge() {
      return 0;
    },
  };
}

const eventsOf = (events: AsyncIterable<SentEvent>) =>
  collect(events, { pick: (event): SentEvent => ({ id: event.id, event: event.event, json: event.json }) });

const endedRun = (error: RunRow["error"]) => ({ status: error ? "error" : "success", error }) as RunRow;

function read(store: RunEventStore, afterId: number | undefined, ended: () => Promise<RunRow | undefined>) {
  return readStoredEvents({
    store,
    runId: "r",
    afterId,
    ended,
    unstored: async () => [{ id: undefined, event: "values", json: "{}" }],
    pollMs: 5,
  });
}

/** A run's worth of events: values snapshots over a growing transcript and a streamed message. */
function emitRun(emitter: RunEmitter): void {
  const transcript: { type: string; id: string; content: string }[] = [];
  emitter.push("metadata", { run_id: "r", attempt: 1 });
  for (let step = 0; step < 5; step += 1) {
    transcript.push({ type: "ai", id: `m${step}`, content: `step ${step} `.repeat(50) });
    emitter.push("updates", { plan: { step } });
    emitter.push("values", { messages: [...transcript], status: `s${step}` });
  }
  let text = "";
  for (const piece of ["Self", "-attention ", "relates ", "positions"]) {
    text += piece;
    emitter.push("messages/partial", [{ type: "AIMessageChunk", id: "c1", content: text }]);
  }
}

describe("run events across instances", () => {
  it("serves the same ids and data from the table as from memory, from any Last-Event-ID, storing deltas", async () => {
    const store = memoryStore();
    const log = new EventLog();
    const emitter = new RunEmitter(log, new RunEventWriter(store, "r", () => undefined), [
      "values",
      "updates",
      "messages",
    ]);
    emitRun(emitter);
    await emitter.stored();
    await emitter.close();

    const local = await eventsOf(log.read(undefined));
    const ended = async () => endedRun(null);
    expect(await eventsOf(read(store, undefined, ended))).toEqual(local);
    for (const after of [0, 3, 7, 12, local.length - 1]) {
      expect(await eventsOf(read(store, after, ended))).toEqual(local.filter((event) => (event.id ?? -1) > after));
    }
    // Deltas: the stored values and partials are far smaller than what was sent.
    const sent = local.filter((event) => event.event === "values").reduce((sum, event) => sum + event.json.length, 0);
    const stored = store.rows.filter((row) => row.event === "values").reduce((sum, row) => sum + row.data.length, 0);
    expect(store.rows.filter((row) => row.delta).map((row) => row.event)).toEqual([
      ...Array(4).fill("values"),
      ...Array(3).fill("messages/partial"),
    ]);
    expect(stored).toBeLessThan(sent / 2);
    expect(store.rows.at(-1)).toMatchObject({ seq: local.length, event: "$end" });
  });

  it("stores the state that tasks, checkpoints and debug events repeat once, and serves them whole", async () => {
    const store = memoryStore();
    const log = new EventLog();
    const emitter = new RunEmitter(log, new RunEventWriter(store, "r", () => undefined), [
      "tasks",
      "checkpoints",
      "debug",
    ]);
    const messages: { id: string; content: string }[] = [];
    for (let step = 0; step < 4; step += 1) {
      messages.push({ id: `m${step}`, content: `step ${step} `.repeat(80) });
      const state = { messages: [...messages], status: `s${step}` };
      emitter.push("tasks", { id: `t${step}`, name: "plan", input: state, triggers: ["branch:to:plan"] });
      emitter.push("tasks", { id: `t${step}`, name: "plan", result: { status: `s${step}` }, interrupts: [] });
      emitter.push("checkpoints", {
        config: { configurable: { checkpoint_id: `c${step}` } },
        values: state,
        next: ["authorize"],
      });
      emitter.push("debug", { step, type: "checkpoint", payload: { values: state } });
    }
    await emitter.close();
    const local = await eventsOf(log.read(undefined));
    expect(await eventsOf(read(store, undefined, async () => endedRun(null)))).toEqual(local);
    expect(await eventsOf(read(store, 9, async () => endedRun(null)))).toEqual(
      local.filter((event) => (event.id ?? -1) > 9),
    );
    const sent = local.reduce((sum, event) => sum + event.json.length, 0);
    const stored = store.rows.reduce((sum, row) => sum + row.data.length, 0);
    expect(stored).toBeLessThan(sent / 2);
  });

  it("follows a run while it goes on, and ends a run whose process died with its row's error, without an id", async () => {
    const store = memoryStore();
    const log = new EventLog();
    const emitter = new RunEmitter(log, new RunEventWriter(store, "r", () => undefined), ["updates"]);
    let dead = false;
    const reading = eventsOf(
      read(store, undefined, async () => (dead ? endedRun({ error: "server_restarted", message: "gone" }) : undefined)),
    );
    emitter.push("metadata", {});
    await new Promise((resolve) => setTimeout(resolve, 20));
    emitter.push("updates", { plan: {} });
    await emitter.stored();
    // The process dies: no end marker; the run row is marked when its lease expires.
    dead = true;
    expect(await reading).toEqual([
      { id: 0, event: "metadata", json: "{}" },
      { id: 1, event: "updates", json: '{"plan":{}}' },
      { id: undefined, event: "error", json: '{"error":"server_restarted","message":"gone"}' },
    ]);
    // Reconnecting after the last id it saw, a client gets only the ending.
    expect(
      await eventsOf(read(store, 1, async () => endedRun({ error: "server_restarted", message: "gone" }))),
    ).toEqual([{ id: undefined, event: "error", json: '{"error":"server_restarted","message":"gone"}' }]);
  });

  it("answers a run with nothing stored with what the caller gives for it", async () => {
    expect(await eventsOf(read(memoryStore(), undefined, async () => endedRun(null)))).toEqual([
      { id: undefined, event: "values", json: "{}" },
    ]);
  });
});
