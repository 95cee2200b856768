/**
 * A task wait outlives the instance that started it (issue 39, item 3): server A, a real `npm start` process with the
 * calendar in task mode, starts the write as a task and pauses the thread on it; A's whole process group (its
 * calendar process too) is SIGKILLed while the task works. Server B, a new process on the same Postgres and the same
 * calendar data, finishes the wait from the row in Postgres with `tasks/get` only: one task at the server (never a
 * second call), one event, the row `succeeded` with its task id, the thread idle with the final answer.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/policy/config.js";
import type { LedgerRow } from "../../src/state/ledger.js";
import { useSandbox } from "../support/sandbox.js";
import { finalReply } from "../support/scripted-model.js";
import { settings } from "./support/agent.js";
import { APPROVE, storedCalendarEvents } from "./support/calendar.js";
import { serverTasks, taskConfig } from "./support/calendar-tasks.js";
import { startFakeOpenAI } from "./support/fake-openai.js";
import { backends } from "./support/postgres.js";
import { createServerSandbox } from "./support/server-process.js";
import { BOOKING_REQUEST } from "./support/server.js";

const TEST_TIMEOUT_MS = 240_000;
const [serverBackend] = backends;
const BOOKING_ARGS = {
  title: "Attention study block",
  start: "2026-12-01T18:00:00+01:00",
  end: "2026-12-01T19:00:00+01:00",
  timezone: "Europe/Berlin",
  calendar: "study",
};

describe.runIf(serverBackend)("a task wait after its instance was killed", () => {
  const fixture = useSandbox("each");

  it(
    "a second server process finishes the wait: tasks/get only, one task, one event",
    async () => {
      const model = fixture.add(await startFakeOpenAI());
      const box = fixture.add(await createServerSandbox());
      const config = path.join(box.dataDir, "task-wait.config.json");
      const shipped = await loadConfig(settings.configPath);
      await writeFile(
        config,
        JSON.stringify(taskConfig(shipped, box.calendarPath, { WARRANT_CALENDAR_TASK_MS: "6000" })),
      );
      const env = {
        WARRANT_PLANNER: "model",
        // A priced model name (the config check refuses an unpriced one); the fake server answers for any.
        WARRANT_MODEL: "gpt-4o-mini",
        OPENAI_BASE_URL: model.baseUrl,
        WARRANT_CONFIG: config,
        WARRANT_TASK_POLL_MS: "200",
      };
      const first = await box.start(env);
      const alice = await box.client(first, "alice");
      const thread = await alice.threads.create();
      model.enqueue({
        kind: "completion",
        tool_calls: [{ id: "call_task_1", name: "create_study_event", arguments: JSON.stringify(BOOKING_ARGS) }],
        finish_reason: "tool_calls",
        usage: { prompt_tokens: 50, completion_tokens: 20 },
      });
      await alice.runs.wait(thread.thread_id, "agent", {
        input: { messages: [{ role: "user", content: BOOKING_REQUEST }] },
      });
      await alice.runs.wait(thread.thread_id, "agent", { command: { resume: APPROVE } });
      expect((await alice.threads.get(thread.thread_id)).status).toBe("interrupted");
      expect(await serverTasks(box.calendarPath)).toEqual([expect.objectContaining({ status: "working" })]);

      await first.kill();
      model.enqueue(finalReply("Booked."));
      const second = await box.start(env);
      const onSecond = await box.client(second, "alice");
      const deadline = Date.now() + 60_000;
      while ((await onSecond.threads.get(thread.thread_id)).status !== "idle" && Date.now() < deadline)
        await sleep(250);
      const state = await onSecond.threads.getState<{ ledger: LedgerRow[]; result?: { answer: string } }>(
        thread.thread_id,
      );
      expect(state.values.ledger.map((row) => [row.tool, row.attempt, row.status, row.task_id !== undefined])).toEqual([
        ["create_study_event", 1, "succeeded", true],
      ]);
      expect(state.values.result?.answer).toBe("Booked.");
      expect(await serverTasks(box.calendarPath)).toEqual([expect.objectContaining({ status: "completed" })]);
      expect(await storedCalendarEvents(box.calendarPath)).toHaveLength(1);
      expect(second.stderr()).toContain("resumed by run");
    },
    TEST_TIMEOUT_MS,
  );
});
