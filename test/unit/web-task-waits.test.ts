/** The chat page's reading of a `task_wait` interrupt (web/src/read.ts): tasks to show, never a review to decide. */
import { describe, expect, it } from "vitest";
import { approvalOf, taskWaitsOf } from "../../web/src/read.js";

const WAIT = {
  kind: "task_wait",
  tasks: [
    {
      call_id: "call-1",
      attempt: 1,
      server: "calendar",
      tool: "create_study_event",
      task_id: "task-1",
      poll_after: "2026-12-06T08:00:00.000Z",
      deadline: "2026-12-06T08:00:30.000Z",
    },
  ],
};

describe("a task wait in the chat page", () => {
  it("shows the task and offers no review", () => {
    expect(taskWaitsOf(WAIT)).toEqual([{ server: "calendar", tool: "create_study_event", task_id: "task-1" }]);
    expect(approvalOf(WAIT)).toBeNull();
  });

  it("reads nothing from a review, a malformed wait or no interrupt", () => {
    expect(taskWaitsOf({ action_requests: [], approvals: [] })).toEqual([]);
    expect(taskWaitsOf({ kind: "task_wait", tasks: [{ server: 1 }] })).toEqual([]);
    expect(taskWaitsOf(undefined)).toEqual([]);
  });
});
