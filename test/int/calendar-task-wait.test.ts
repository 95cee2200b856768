/**
 * A write run as an MCP task waited for without holding a worker (issue 39, item 3), through the real API server
 * (the SDK client), real Postgres and the real calendar server process in task mode: once the task id is on the
 * ledger row and a first poll found it working, the run ends with the thread `interrupted` on a `task_wait`
 * interrupt and no run active; the poller (any instance's) polls the task in Postgres and resumes the thread when
 * it ends: one event, the row `succeeded` with its task id, the thread idle with the final answer. A client may
 * not resume the wait itself (`task_waiting`); a second instance finishes a wait the first one started (one task,
 * one event); a cancel of the paused run cancels the task at the server (`task_cancelled`, no event). A task that
 * asks for input once it worked (`input_required`): the poller resumes the thread, the resumed run asks alice and
 * answers with `tasks/update`, then waits for the task: one event, the question on the row.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Client } from "@langchain/langgraph-sdk";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig, type WarrantConfig } from "../../src/policy/config.js";
import type { LedgerRow } from "../../src/state/ledger.js";
import { useSandbox } from "../support/sandbox.js";
import { settings } from "./support/agent.js";
import { APPROVE, storedCalendarEvents } from "./support/calendar.js";
import { serverTasks, taskConfig } from "./support/calendar-tasks.js";
import { backends } from "./support/postgres.js";
import { BOOKING_REQUEST, startTestServer, type TestServer } from "./support/server.js";

const TEST_TIMEOUT_MS = 120_000;
/**
 * How long a thread may take to settle after the task ended or the run was cancelled: a poller tick, the resumed run,
 * and on a loaded machine a resume the poller retries after 30 s.
 */
const SETTLE_MS = 90_000;
/** Long enough to see the thread paused before the task ends. */
const TASK_MS = "4000";
const [serverBackend] = backends;

let shipped: WarrantConfig;
beforeAll(async () => {
  shipped = await loadConfig(settings.configPath);
});

const shape = (rows: readonly LedgerRow[]) =>
  [...rows]
    .sort((left, right) => left.attempt - right.attempt)
    .map((row) => [row.tool, row.attempt, row.status, row.error_code, row.task_id !== undefined]);

describe.runIf(serverBackend)("a task write waited for by the poller, not by a run", () => {
  const fixture = useSandbox("each");

  /**
   * A server on the calendar in task mode (its data at `dataPath`, `switches` added), polling task waits every
   * 200 ms; with switches, the calendar may ask users.
   */
  async function serve(
    dataPath: string,
    shared?: TestServer,
    switches: Record<string, string> = {},
  ): Promise<TestServer> {
    const directory = path.dirname(dataPath);
    const file = path.join(directory, `task-wait-${shared ? "second" : "first"}.config.json`);
    const config = taskConfig(shipped, dataPath, { WARRANT_CALENDAR_TASK_MS: TASK_MS, ...switches });
    const calendar = config.servers["calendar"];
    if (calendar && Object.keys(switches).length > 0) calendar.elicitation = true;
    await writeFile(file, JSON.stringify(config));
    const server = await startTestServer({
      settings: { WARRANT_CONFIG: file, WARRANT_TASK_POLL_MS: "200" },
      ...(shared ? { database: shared.database } : {}),
    });
    fixture.defer(() => server.close());
    return server;
  }

  /** alice books a block and approves it: the run that executes the write ends on the task wait. */
  async function bookAndApprove(alice: Client): Promise<string> {
    const thread = await alice.threads.create();
    await alice.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: BOOKING_REQUEST }] },
    });
    await alice.runs.wait(thread.thread_id, "agent", { command: { resume: APPROVE } });
    return thread.thread_id;
  }

  async function expectPausedOnTask(server: TestServer, alice: Client, threadId: string): Promise<void> {
    const paused = await alice.threads.get(threadId);
    expect(paused.status).toBe("interrupted");
    const state = await alice.threads.getState(threadId);
    const interrupts = state.tasks.flatMap((task) => task.interrupts.map((item) => item.value));
    expect(interrupts).toEqual([
      expect.objectContaining({
        kind: "task_wait",
        tasks: [expect.objectContaining({ tool: "create_study_event", server: "calendar" })],
      }),
    ]);
    // No run holds a worker while the task works.
    const runs = await alice.runs.list(threadId);
    expect(runs.filter((run) => run.status === "running" || run.status === "pending")).toEqual([]);
    // The write's row is durable, still running, with its task id: the poller's business now.
    expect(await durableRows(server, threadId)).toEqual([
      { tool: "create_study_event", status: "running", task: true },
    ]);
  }

  async function durableRows(server: TestServer, threadId: string) {
    const client = new pg.Client({ connectionString: server.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query(
        "select tool, status, task_id is not null as task from warrant.ledger where thread_id = $1 order by attempt",
        [threadId],
      );
      return rows;
    } finally {
      await client.end();
    }
  }

  async function untilIdle(alice: Client, threadId: string): Promise<void> {
    const deadline = Date.now() + SETTLE_MS;
    while ((await alice.threads.get(threadId)).status !== "idle" && Date.now() < deadline) await sleep(200);
  }

  it(
    "the run pauses on the task; the poller completes it: one event, the row succeeded, the final answer",
    async () => {
      const dataPath = path.join(await fixture.tempDir("task-wait-"), "calendar.json");
      const server = await serve(dataPath);
      const alice = await server.client("alice");
      const threadId = await bookAndApprove(alice);
      await expectPausedOnTask(server, alice, threadId);
      // Only the poller resumes a task wait.
      const refused = await server.fetch(`/threads/${threadId}/runs/wait`, {
        user: "alice",
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "agent", command: { resume: APPROVE } }),
      });
      expect(refused.status).toBe(409);
      expect(await refused.json()).toMatchObject({ error: "task_waiting" });
      await untilIdle(alice, threadId);
      const state = await alice.threads.getState<{
        ledger: LedgerRow[];
        result?: { answer: string };
        usage?: { tool_calls?: number };
      }>(threadId);
      expect(shape(state.values.ledger)).toEqual([["create_study_event", 1, "succeeded", null, true]]);
      expect(state.values.result?.answer).toBe("Booked.");
      // The send counts once against the run's tool calls, though the node that made it paused.
      expect(state.values.usage?.tool_calls).toBe(1);
      expect(await storedCalendarEvents(dataPath)).toHaveLength(1);
      expect(await serverTasks(dataPath)).toEqual([expect.objectContaining({ status: "completed" })]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a second instance finishes polling a task the first one started: one task, one event",
    async () => {
      const dataPath = path.join(await fixture.tempDir("task-wait-"), "calendar.json");
      const first = await serve(dataPath);
      const alice = await first.client("alice");
      const threadId = await bookAndApprove(alice);
      await expectPausedOnTask(first, alice, threadId);
      // The first instance goes (its calendar process with it) while the task works.
      await first.server.close({ drainMs: 1_000 });
      const second = await serve(dataPath, first);
      const aliceOnSecond = await second.client("alice");
      await untilIdle(aliceOnSecond, threadId);
      const state = await aliceOnSecond.threads.getState<{ ledger: LedgerRow[] }>(threadId);
      expect(shape(state.values.ledger)).toEqual([["create_study_event", 1, "succeeded", null, true]]);
      // One task at the server: the second instance sent tasks/get only, never the call again.
      expect(await serverTasks(dataPath)).toEqual([expect.objectContaining({ status: "completed" })]);
      expect(await storedCalendarEvents(dataPath)).toHaveLength(1);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a cancel of the paused run cancels the task at the server: the row task_cancelled, no event",
    async () => {
      const dataPath = path.join(await fixture.tempDir("task-wait-"), "calendar.json");
      const server = await serve(dataPath);
      const alice = await server.client("alice");
      const threadId = await bookAndApprove(alice);
      await expectPausedOnTask(server, alice, threadId);
      const [paused] = await alice.runs.list(threadId, { limit: 1 });
      if (!paused) throw new Error("no run");
      await alice.runs.cancel(threadId, paused.run_id);
      const deadline = Date.now() + SETTLE_MS;
      const rows = async () =>
        ((await alice.threads.getState<{ ledger?: LedgerRow[] }>(threadId)).values.ledger ?? []) as LedgerRow[];
      while (!(await rows()).some((row) => row.status !== "running") && Date.now() < deadline) await sleep(200);
      expect(shape(await rows())).toEqual([["create_study_event", 1, "failed", "task_cancelled", true]]);
      await sleep(Number(TASK_MS) + 500);
      expect(await serverTasks(dataPath)).toEqual([expect.objectContaining({ status: "cancelled" })]);
      expect(await storedCalendarEvents(dataPath)).toHaveLength(0);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a task that asks once it worked: the poller resumes the thread, the run asks alice, one event after her answer",
    async () => {
      const dataPath = path.join(await fixture.tempDir("task-wait-"), "calendar.json");
      const switches = { WARRANT_CALENDAR_CONFIRM: "1", WARRANT_CALENDAR_TASK_ASK: "late" };
      const server = await serve(dataPath, undefined, switches);
      const alice = await server.client("alice");
      const threadId = await bookAndApprove(alice);
      await expectPausedOnTask(server, alice, threadId);
      // The task asks (input_required); the poller resumes the thread and the resumed run asks alice.
      const pending = async () => {
        const client = new pg.Client({ connectionString: server.databaseUrl });
        await client.connect();
        try {
          const { rows } = await client.query(
            "select elicitation_id from warrant.elicitations where thread_id = $1 and status = 'pending'",
            [threadId],
          );
          return rows as Array<{ elicitation_id: string }>;
        } finally {
          await client.end();
        }
      };
      const deadline = Date.now() + SETTLE_MS;
      while ((await pending()).length === 0 && Date.now() < deadline) await sleep(200);
      const [question] = await pending();
      if (!question) throw new Error("alice was not asked");
      expect(await storedCalendarEvents(dataPath)).toHaveLength(0);
      const answered = await server.fetch(`/threads/${threadId}/elicitations/${question.elicitation_id}`, {
        user: "alice",
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ action: "accept", content: { confirm: true } }),
      });
      expect(answered.status).toBe(200);
      await untilIdle(alice, threadId);
      const state = await alice.threads.getState<{ ledger: LedgerRow[] }>(threadId);
      expect(shape(state.values.ledger)).toEqual([["create_study_event", 1, "succeeded", null, true]]);
      expect(state.values.ledger[0]?.elicitation).toEqual([{ id: question.elicitation_id, outcome: "accept" }]);
      expect(await storedCalendarEvents(dataPath)).toHaveLength(1);
      expect(await serverTasks(dataPath)).toEqual([expect.objectContaining({ status: "completed" })]);
    },
    TEST_TIMEOUT_MS,
  );
});
