import type { StateSnapshot } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { AIMessage } from "@langchain/core/messages";
import type { LedgerRow } from "../../src/state/ledger.js";
import { assertRunnable } from "../../src/server/runs/checks.js";

function snapshot(next: string[], interrupts: string[][] = []): StateSnapshot {
  return {
    values: {},
    next,
    tasks: interrupts.map((ids, index) => ({
      id: `task-${index}`,
      name: "human_review",
      interrupts: ids.map((id) => ({ id, value: { approvals: [] } })),
    })),
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

const input = { kind: "input" as const, placeholders: [] };

function write(fields: Partial<LedgerRow>): LedgerRow {
  return {
    call_id: "call_w",
    attempt: 1,
    tool: "create_study_event",
    server: "calendar",
    risk: "write_reversible",
    fingerprint: "0".repeat(64),
    idempotency_key: "k",
    status: "succeeded",
    error_code: null,
    started_at: "2026-12-01T00:00:00.000Z",
    finished_at: null,
    elapsed_ms: null,
    ...fields,
  };
}

describe("assertRunnable", () => {
  const idle = snapshot([]);
  const stopped = snapshot(["execute"]);
  const waiting = snapshot(["human_review"], [["i1"]]);
  const waitingTwice = snapshot(["human_review"], [["i1"], ["i2"]]);

  it("takes new input on an idle thread, and on a stopped one by closing the stopped run", () => {
    expect(assertRunnable(idle, input)).toEqual({ closeStopped: false });
    expect(assertRunnable(stopped, input)).toEqual({ closeStopped: true });
    expect(codeOf(() => assertRunnable(waiting, input))).toBe("review_pending");
  });

  it("refuses new input on a stopped run whose write may have taken effect; a settled write is no obstacle", () => {
    expect(codeOf(() => assertRunnable(stopped, input, [write({ status: "running" })]))).toBe("thread_unfinished");
    expect(codeOf(() => assertRunnable(stopped, input, [write({ status: "outcome_unknown" })]))).toBe(
      "thread_unfinished",
    );
    expect(assertRunnable(stopped, input, [write({ status: "outcome_unknown", reconciled_by: 2 })])).toEqual({
      closeStopped: true,
    });
    expect(
      assertRunnable(stopped, input, [
        write({ status: "outcome_unknown" }),
        write({ status: "succeeded", attempt: 2 }),
      ]),
    ).toEqual({ closeStopped: true });
    // A read left running is abandoned, never a doubt about an effect.
    expect(assertRunnable(stopped, input, [write({ status: "running", risk: "read" })])).toEqual({
      closeStopped: true,
    });
  });

  it("names the pending action (tool and action_id) when a review is pending", () => {
    const pending = {
      ...waiting,
      tasks: [
        {
          id: "t",
          name: "human_review",
          interrupts: [
            {
              id: "i1",
              value: {
                action_requests: [{ name: "create_study_event", args: {} }],
                approvals: [{ action_id: "act-1" }],
              },
            },
          ],
        },
      ],
    } as unknown as StateSnapshot;
    for (const ask of [input, { kind: "continue" as const }, { kind: "end" as const }]) {
      try {
        assertRunnable(pending, ask);
        expect.unreachable();
      } catch (error) {
        expect((error as { code: string }).code).toBe("review_pending");
        expect((error as Error).message).toContain("create_study_event (action_id act-1)");
      }
    }
    expect(codeOf(() => assertRunnable(idle, { kind: "end" }))).toBe("no_pending_interrupt");
  });

  it("accepts tool placeholders only for tool calls of the thread that have no result", () => {
    const dangling = {
      ...stopped,
      values: {
        messages: [new AIMessage({ content: "", tool_calls: [{ id: "call_1", name: "read_note", args: {} }] })],
      },
    } as unknown as StateSnapshot;
    expect(assertRunnable(dangling, { kind: "input", placeholders: [{ tool_call_id: "call_1" }] })).toEqual({
      closeStopped: true,
    });
    expect(codeOf(() => assertRunnable(dangling, { kind: "input", placeholders: [{ tool_call_id: "call_2" }] }))).toBe(
      "invalid_request",
    );
    expect(codeOf(() => assertRunnable(idle, { kind: "input", placeholders: [{ tool_call_id: "call_1" }] }))).toBe(
      "invalid_request",
    );
  });

  it("continues (input null) only a run that stopped part-way", () => {
    expect(codeOf(() => assertRunnable(stopped, { kind: "continue" }))).toBe("ok");
    expect(codeOf(() => assertRunnable(idle, { kind: "continue" }))).toBe("nothing_to_run");
    expect(codeOf(() => assertRunnable(waiting, { kind: "continue" }))).toBe("review_pending");
  });

  it("resumes only a pending interrupt; several need a map keyed by every interrupt id", () => {
    const approve = { decisions: [{ type: "approve" }] };
    expect(codeOf(() => assertRunnable(waiting, { kind: "resume", value: approve }))).toBe("ok");
    expect(codeOf(() => assertRunnable(idle, { kind: "resume", value: approve }))).toBe("no_pending_interrupt");
    expect(codeOf(() => assertRunnable(stopped, { kind: "resume", value: approve }))).toBe("no_pending_interrupt");
    expect(codeOf(() => assertRunnable(waitingTwice, { kind: "resume", value: approve }))).toBe("invalid_request");
    expect(codeOf(() => assertRunnable(waitingTwice, { kind: "resume", value: { i1: approve } }))).toBe(
      "invalid_request",
    );
    expect(codeOf(() => assertRunnable(waitingTwice, { kind: "resume", value: [approve, approve] }))).toBe(
      "invalid_request",
    );
    // An inherited key is not an answer.
    expect(
      codeOf(() =>
        assertRunnable(waitingTwice, {
          kind: "resume",
          value: Object.assign(Object.create({ i2: approve }), { i1: approve }),
        }),
      ),
    ).toBe("invalid_request");
    expect(codeOf(() => assertRunnable(waitingTwice, { kind: "resume", value: { i1: approve, i2: approve } }))).toBe(
      "ok",
    );
  });
});

describe("a thread waiting for a write's MCP task", () => {
  const waiting = {
    ...snapshot(["execute"]),
    tasks: [
      {
        id: "task-0",
        name: "execute",
        interrupts: [
          {
            id: "i-1",
            value: {
              kind: "task_wait",
              tasks: [
                {
                  call_id: "call_w",
                  attempt: 1,
                  server: "calendar",
                  tool: "create_study_event",
                  task_id: "task-1",
                  poll_after: "2026-12-01T00:00:01.000Z",
                  deadline: "2026-12-01T00:00:30.000Z",
                },
              ],
            },
          },
        ],
      },
    ],
  } as unknown as StateSnapshot;

  it("is resumed by the server's poller only: a client's resume, input or continue is task_waiting", () => {
    expect(codeOf(() => assertRunnable(waiting, { kind: "resume", value: { kind: "task_wait_over" } }))).toBe(
      "task_waiting",
    );
    expect(codeOf(() => assertRunnable(waiting, input))).toBe("task_waiting");
    expect(codeOf(() => assertRunnable(waiting, { kind: "continue" }))).toBe("task_waiting");
  });

  it("a review is still resumable", () => {
    expect(codeOf(() => assertRunnable(snapshot(["human_review"], [["i-1"]]), { kind: "resume", value: {} }))).toBe(
      "ok",
    );
  });
});
