/**
 * Where a run that streamed to its end left its thread, read from its stream
 * (`RunEmitter.ending`, `inspectEnding`) instead of the checkpoint: the last
 * `values` are the thread's, an interrupt after them pauses the thread, and
 * whatever the stream did not say sends the caller back to the checkpoint.
 */
import { describe, expect, it } from "vitest";
import { EventLog } from "../../src/server/events.js";
import { RunEmitter } from "../../src/server/runs/emission.js";
import type { RunEventWriter } from "../../src/server/runs/event-writer.js";
import { inspectEnding } from "../../src/server/runs/outcome.js";

const writer = { write: () => undefined, flush: async () => undefined, close: async () => undefined };
const emitter = () => new RunEmitter(new EventLog(), writer as unknown as RunEventWriter, ["values"]);

const planned = { status: "planning", messages: [] };
const done = {
  status: "completed",
  termination_reason: { code: "final_answer", detail: "answered", turn: 2 },
  result: { answer: "A", citations: [], abstained: false },
  run: { run_id: "w-1" },
  messages: [],
};

describe("a run's ending, from its stream", () => {
  it("is the last values when no interrupt came after them", () => {
    const run = emitter();
    run.chunk("values", planned);
    run.chunk("values", done);
    expect(run.ending()).toEqual({ values: done, interrupted: false });
  });

  it("is interrupted when an interrupt with interrupts came after the last values", () => {
    const run = emitter();
    run.chunk("values", planned);
    run.chunk("values", { __interrupt__: [{ id: "i-1", value: { kind: "review" } }] });
    expect(run.ending()).toEqual({ values: planned, interrupted: true });
  });

  it("is unknown without values, after an interrupt without interrupts, or for a chunk that is not a state", () => {
    expect(emitter().ending()).toBeUndefined();
    const first = emitter();
    first.chunk("values", { __interrupt__: [{ id: "i-1", value: {} }] });
    expect(first.ending()).toBeUndefined();
    const empty = emitter();
    empty.chunk("values", planned);
    empty.chunk("values", { __interrupt__: [] });
    expect(empty.ending()).toBeUndefined();
    const odd = emitter();
    odd.chunk("values", planned);
    odd.chunk("values", ["not", "a", "state"]);
    // Once unknown, later values do not make it known again.
    odd.chunk("values", done);
    expect(odd.ending()).toBeUndefined();
  });

  it("ignores the other modes", () => {
    const run = emitter();
    run.chunk("values", done);
    run.chunk("updates", { plan: { status: "x" } });
    expect(run.ending()).toEqual({ values: done, interrupted: false });
  });

  it("gives the inspection a read of the checkpoint would give", () => {
    expect(inspectEnding(done, false, "api-1")).toEqual({
      thread: "idle",
      outcome: {
        status: "completed",
        termination_reason: done.termination_reason,
        pending_review: false,
        warrant_run_id: "w-1",
      },
      values: { status: "completed", termination_reason: done.termination_reason, result: done.result },
      last: { run_id: "api-1", ended: true },
    });
    const paused = inspectEnding({ status: "awaiting_review" }, true, "api-2");
    expect(paused.thread).toBe("interrupted");
    expect(paused.outcome).toEqual({ status: "awaiting_review", termination_reason: null, pending_review: true });
    expect(paused.values).toEqual({ status: "awaiting_review", termination_reason: null, result: null });
  });
});
