/**
 * Where a run started through `/mcp` or A2A stands (src/server/runs/external.ts
 * `runView`) and the A2A task it becomes (src/server/a2a-agent.ts `toTask`):
 * every state, from the run rows and the thread's checkpoint values.
 */
import { TaskState } from "@a2a-js/sdk";
import { describe, expect, it } from "vitest";
import type { RunRow } from "../../src/stores/thread-rows.js";
import { toTask } from "../../src/server/a2a-agent.js";
import { runView } from "../../src/server/runs/external.js";

const THREAD = "6b1f0a52-2c1d-4c39-9a43-1f6f5f0e8a11";
const RUN = "0d7c0d52-9b3e-4d6f-8d0e-6e2f0f1b2c33";
const ORIGIN = "http://127.0.0.1:2024";

const row = (status: RunRow["status"], extra: Partial<RunRow> = {}): RunRow => ({
  run_id: RUN,
  thread_id: THREAD,
  assistant_id: "agent",
  owner: "alice",
  tenant: "uni",
  status,
  metadata: {},
  kwargs: { kind: "input" },
  error: null,
  outcome: null,
  cancel_requested: false,
  created_at: new Date(0),
  updated_at: new Date(0),
  ...extra,
});

const ended = (values: Record<string, unknown>, pending: unknown[] = []) =>
  runView({ run: row("success"), latest: row("success"), superseded: false, origin: ORIGIN, values, pending });

describe("runView", () => {
  it("is working while the task's last run is pending or running", () => {
    for (const status of ["pending", "running"] as const)
      expect(runView({ run: row("success"), latest: row(status), superseded: false, origin: ORIGIN }).state).toBe(
        "working",
      );
  });

  it("is completed with the answer and citations when the agent completed or abstained", () => {
    const view = ended({
      status: "completed",
      termination_reason: { code: "final_answer" },
      result: { answer: "A", citations: [{ ref: "E1", source_id: "n1" }, "not an object"], abstained: false },
    });
    expect(view).toMatchObject({ state: "completed", answer: "A", citations: [{ ref: "E1" }], abstained: false });
    expect(ended({ status: "abstained", result: { answer: "no", citations: [], abstained: true } }).state).toBe(
      "completed",
    );
  });

  it("is input_required with the review's links and actions while a review is pending", () => {
    const view = ended({ status: "waiting_approval" }, [
      { action_requests: [{ name: "create_study_event", args: {}, description: "d" }], review_configs: [] },
    ]);
    expect(view).toMatchObject({
      state: "input_required",
      review: {
        url: `${ORIGIN}/reviews/${THREAD}`,
        page_url: `${ORIGIN}/?thread=${THREAD}`,
        actions: [{ name: "create_study_event", description: "d" }],
      },
    });
  });

  it("is auth_required with the servers to authorize for an authorization_required pause", () => {
    const view = ended({ status: "waiting_approval" }, [
      { authorization_required: [{ server: "docs", authorization_url: "https://idp/authorize?x", action_ids: [] }] },
    ]);
    expect(view).toMatchObject({
      state: "auth_required",
      authorization: [{ server: "docs", authorization_url: "https://idp/authorize?x" }],
    });
  });

  it("is failed for a failed run, a stopped agent or needs_human; canceled for a cancelled one", () => {
    const failedRun = runView({
      run: row("success"),
      latest: row("error", { error: { error: "principal_revoked", message: "gone" } }),
      superseded: false,
      origin: ORIGIN,
    });
    expect(failedRun).toMatchObject({ state: "failed", error: { error: "principal_revoked" } });
    for (const status of ["stopped", "failed", "needs_human"]) expect(ended({ status }).state).toBe("failed");
    expect(ended({ status: "cancelled" }).state).toBe("canceled");
    expect(runView({ run: row("success"), latest: row("interrupted"), superseded: false, origin: ORIGIN }).state).toBe(
      "canceled",
    );
  });

  it("reads a superseded task from its last run's outcome, not the thread's newer values", () => {
    const latest = row("success", {
      outcome: { status: "completed", termination_reason: { code: "final_answer" }, pending_review: false },
    });
    const view = runView({ run: row("success"), latest, superseded: true, origin: ORIGIN });
    expect(view).toMatchObject({ state: "completed", status: "completed", answer: null });
  });
});

describe("toTask", () => {
  it("maps each state onto the A2A task state, the answer onto an artifact, the pause onto the status message", () => {
    const completed = toTask(
      ended({ status: "completed", result: { answer: "A", citations: [{ ref: "E1" }], abstained: false } }),
    );
    expect(completed).toMatchObject({ id: `${THREAD}:${RUN}`, contextId: THREAD });
    expect(completed.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(completed.artifacts[0]?.parts.map((part) => part.content?.$case)).toEqual(["text", "data"]);

    const review = toTask(ended({ status: "waiting_approval" }, [{ action_requests: [{ name: "w" }] }]));
    expect(review.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(review.artifacts).toEqual([]);
    const pause = review.status?.message?.parts.find((part) => part.content?.$case === "data")?.content?.value as {
      review: { url: string };
    };
    expect(pause.review.url).toBe(`${ORIGIN}/reviews/${THREAD}`);

    const auth = toTask(ended({}, [{ authorization_required: [{ server: "s", authorization_url: "https://a" }] }]));
    expect(auth.status?.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
    expect(toTask(ended({ status: "stopped" })).status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(toTask(ended({ status: "cancelled" })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });
});
