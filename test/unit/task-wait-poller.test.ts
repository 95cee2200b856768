/**
 * The poller of task waits (src/server/crons/task-waits.ts) against an in-memory store and tool host: a working
 * task is polled again at its server's interval, an ended, forgotten or input-asking one resumes its thread and the
 * wait goes, a wait past its deadline resumes without a look, an unreachable server or a refused resume is tried
 * again, and a cancel asked for sends `tasks/cancel` before the resume.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal.js";
import { ApiError } from "../../src/errors.js";
import type { TaskState } from "../../src/mcp/connection.js";
import type { ToolHost } from "../../src/mcp/tool-host.js";
import { startTaskWaitPoller } from "../../src/server/crons/task-waits.js";
import type { TaskWait, TaskWaitKey, TaskWaitStore } from "../../src/stores/task-wait-store.js";

const PRINCIPAL = { user_id: "alice", tenant: "t1" } as unknown as Principal;

function wait(overrides: Partial<TaskWait> = {}): TaskWait {
  return {
    thread_id: "thread-1",
    call_id: "call-1",
    attempt: 1,
    server: "calendar",
    tool: "create_study_event",
    task_id: "task-1",
    principal: PRINCIPAL,
    assistant_id: "agent",
    next_poll_at: new Date(0),
    deadline: new Date(Date.now() + 60_000),
    ...overrides,
  };
}

/** One due wait, handed out once; what the poller did to it. */
function memoryStore(initial: TaskWait) {
  const due: TaskWait[] = [initial];
  const done = { rescheduled: [] as number[], removed: 0 };
  const store: TaskWaitStore = {
    schedule: async () => undefined,
    claimDue: async () => due.splice(0),
    reschedule: async (_key: TaskWaitKey, at: Date) => {
      done.rescheduled.push(at.getTime() - Date.now());
    },
    remove: async () => {
      done.removed += 1;
    },
    requestCancel: async () => 0,
    forThread: async () => due,
  };
  return { store, done };
}

type Answer = Awaited<ReturnType<NonNullable<ToolHost["taskState"]>>>;

function toolHost(answer: Answer, sent: string[]): ToolHost {
  return {
    async taskState(_server: string, taskId: string, options: { cancel?: boolean }) {
      sent.push(`${options.cancel ? "cancel+get" : "get"} ${taskId}`);
      return answer;
    },
  } as unknown as ToolHost;
}

const task = (status: TaskState["status"], pollIntervalMs?: number): Answer => ({
  ok: true,
  task: { taskId: "task-1", status, ...(pollIntervalMs === undefined ? {} : { pollIntervalMs }) },
});

async function oneTick(initial: TaskWait, answer: Answer, resume: () => Promise<{ run_id: string } | "gone">) {
  const memory = memoryStore(initial);
  const sent: string[] = [];
  const resumed: string[] = [];
  const poller = startTaskWaitPoller({
    store: memory.store,
    tools: async () => toolHost(answer, sent),
    resume: async (wait) => {
      resumed.push(wait.task_id);
      return resume();
    },
    intervalMs: 10,
    log: () => undefined,
  });
  await sleep(60);
  await poller.stop();
  return { ...memory.done, sent, resumed };
}

const started = async () => ({ run_id: "run-2" });

describe("the poller of task waits", () => {
  it("polls a working task again at the server's interval, and does not resume", async () => {
    const result = await oneTick(wait(), task("working", 2_000), started);
    expect(result.sent).toEqual(["get task-1"]);
    expect(result.resumed).toEqual([]);
    expect(result.removed).toBe(0);
    expect(result.rescheduled).toHaveLength(1);
    expect(result.rescheduled[0]).toBeGreaterThan(1_500);
  });

  it.each([["completed"], ["failed"], ["cancelled"], ["input_required"]] as const)(
    "resumes a %s task and drops its wait (input_required: the resumed run asks the owner)",
    async (status) => {
      const result = await oneTick(wait(), task(status), started);
      expect(result).toMatchObject({ sent: ["get task-1"], resumed: ["task-1"], removed: 1, rescheduled: [] });
    },
  );

  it("resumes a task the server forgot (settled as outcome_unknown by the resumed run)", async () => {
    const forgotten: Answer = { ok: false, code: "outcome_unknown", message: "gone" };
    const result = await oneTick(wait(), forgotten, started);
    expect(result).toMatchObject({ resumed: ["task-1"], removed: 1 });
  });

  it("past the deadline resumes without a look", async () => {
    const result = await oneTick(wait({ deadline: new Date(Date.now() - 1) }), task("working"), started);
    expect(result).toMatchObject({ sent: [], resumed: ["task-1"], removed: 1 });
  });

  it("looks again later while the server is unavailable", async () => {
    const down: Answer = { ok: false, code: "server_unavailable", message: "down" };
    const result = await oneTick(wait(), down, started);
    expect(result).toMatchObject({ resumed: [], removed: 0 });
    expect(result.rescheduled).toHaveLength(1);
  });

  it("keeps the wait when the resume is refused (the thread busy), to try again", async () => {
    const result = await oneTick(wait(), task("completed"), async () => {
      throw new ApiError("thread_busy", "the thread's run is still pausing");
    });
    expect(result).toMatchObject({ resumed: ["task-1"], removed: 0 });
    expect(result.rescheduled).toHaveLength(1);
    expect(result.rescheduled[0]).toBeLessThan(1_000);
  });

  it("tries a resume that failed for another reason later (an owner no longer listed)", async () => {
    const result = await oneTick(wait(), task("completed"), async () => {
      throw new Error("principal_revoked");
    });
    expect(result).toMatchObject({ resumed: ["task-1"], removed: 0 });
    expect(result.rescheduled[0]).toBeGreaterThan(20_000);
  });

  it("a cancel asked for sends tasks/cancel, then resumes", async () => {
    const result = await oneTick(wait({ cancel_requested: true }), task("cancelled"), started);
    expect(result).toMatchObject({ sent: ["cancel+get task-1"], resumed: ["task-1"], removed: 1 });
  });
});
