import type { StateSnapshot } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { assertRunnable } from "../../src/server/run-checks.js";

function snapshot(next: string[], interrupts: string[][] = []): StateSnapshot {
  return {
    values: {},
    next,
    tasks: interrupts.map((ids, index) => ({ id: `task-${index}`, name: "human_review", interrupts: ids.map((id) => ({ id, value: { approvals: [] } })) })),
    config: { configurable: { thread_id: "t", checkpoint_id: "c" } },
    metadata: undefined,
    createdAt: undefined,
    parentConfig: undefined,
  } as unknown as StateSnapshot;
}

const codeOf = (run: () => void): string => {
  try {
    run();
    return "ok";
  } catch (error) {
    return (error as { code: string }).code;
  }
};

describe("assertRunnable", () => {
  const idle = snapshot([]);
  const stopped = snapshot(["execute"]);
  const waiting = snapshot(["human_review"], [["i1"]]);
  const waitingTwice = snapshot(["human_review"], [["i1"], ["i2"]]);

  it("takes new input only on a finished, idle thread", () => {
    expect(codeOf(() => assertRunnable(idle, undefined, true))).toBe("ok");
    expect(codeOf(() => assertRunnable(stopped, undefined, true))).toBe("thread_unfinished");
    expect(codeOf(() => assertRunnable(waiting, undefined, true))).toBe("thread_busy");
  });

  it("continues (input null) only a run that stopped part-way", () => {
    expect(codeOf(() => assertRunnable(stopped, undefined, false))).toBe("ok");
    expect(codeOf(() => assertRunnable(idle, undefined, false))).toBe("nothing_to_run");
    expect(codeOf(() => assertRunnable(waiting, undefined, false))).toBe("thread_busy");
  });

  it("resumes only a pending interrupt; several need a map keyed by every interrupt id", () => {
    const approve = { decisions: [{ type: "approve" }] };
    expect(codeOf(() => assertRunnable(waiting, { resume: approve }, false))).toBe("ok");
    expect(codeOf(() => assertRunnable(idle, { resume: approve }, false))).toBe("no_pending_interrupt");
    expect(codeOf(() => assertRunnable(stopped, { resume: approve }, false))).toBe("no_pending_interrupt");
    expect(codeOf(() => assertRunnable(waitingTwice, { resume: approve }, false))).toBe("invalid_request");
    expect(codeOf(() => assertRunnable(waitingTwice, { resume: { i1: approve } }, false))).toBe("invalid_request");
    expect(codeOf(() => assertRunnable(waitingTwice, { resume: [approve, approve] }, false))).toBe("invalid_request");
    // An inherited key is not an answer.
    expect(codeOf(() => assertRunnable(waitingTwice, { resume: Object.assign(Object.create({ i2: approve }), { i1: approve }) }, false))).toBe("invalid_request");
    expect(codeOf(() => assertRunnable(waitingTwice, { resume: { i1: approve, i2: approve } }, false))).toBe("ok");
  });
});
