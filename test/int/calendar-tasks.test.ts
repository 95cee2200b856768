/**
 * A write its server runs as an MCP task (the tasks extension on 2026-07-28), end to end in one process: the real
 * calendar server (a child process, `WARRANT_CALENDAR_TASK_MS` making create_study_event a slow task), real
 * Postgres, the agent graph with a scripted planner and an approval. The task id is on the ledger row (state and
 * durable); a host that dies at each moment of the task (before its id was recorded, while polling, after it
 * completed) and a new host with a new calendar process settle the write with exactly one event; a cancel while
 * polling cancels the task at the server; a task the server forgot is reconciled as an unknown outcome.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Command } from "@langchain/langgraph";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildAgent } from "../../graphs/agent.js";
import { createRuntime } from "../../src/bootstrap.js";
import { runOptions } from "../../src/graph/routes.js";
import { readRunTrace } from "../../src/trace/read-trace.js";
import { renderTrace } from "../../src/trace/render.js";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import { loadConfig, type WarrantConfig } from "../../src/policy/config.js";
import type { LedgerRow } from "../../src/state/ledger.js";
import type { State } from "../../src/state.js";
import { calls, proposal, scriptedPlanner } from "../support/scripted-planner.js";
import { useSandbox } from "../support/sandbox.js";
import { agentHarness, principal, settings } from "./support/agent.js";
import { APPROVE, DONE, EVENT, REQUEST, storedCalendarEvents } from "./support/calendar.js";
import { type Moment, serverTasks, taskConfig, WORK_MS } from "./support/calendar-tasks.js";
import { backends, useBackend } from "./support/postgres.js";

const TEST_TIMEOUT_MS = 90_000;
const [serverBackend] = backends;

let shipped: WarrantConfig;
beforeAll(async () => {
  shipped = await loadConfig(settings.configPath);
});

const shape = (rows: readonly LedgerRow[]) =>
  [...rows]
    .sort((left, right) => left.attempt - right.attempt)
    .map((row) => [row.tool, row.attempt, row.status, row.error_code, row.task_id !== undefined]);

describe.runIf(serverBackend)("a write run as an MCP task", () => {
  const opened = useBackend(serverBackend!, TEST_TIMEOUT_MS);
  const fixture = useSandbox("each");
  let dataPath: string;
  const hosts: ToolHost[] = [];
  beforeEach(async () => {
    dataPath = `${await fixture.tempDir("calendar-tasks-")}/calendar.json`;
  });
  afterEach(async () => {
    await Promise.all(hosts.splice(0).map((host) => host.close()));
  });
  const tools = async (switches: Record<string, string> = {}): Promise<ToolHost> => {
    const host = await connectTools(taskConfig(shipped, dataPath, switches));
    hosts.push(host);
    return host;
  };

  it(
    "records the task id on the write's row before polling, and the write's result when the task completes",
    async () => {
      const host = await tools();
      const planner = scriptedPlanner([calls(proposal("create_study_event", EVENT)), DONE]);
      const agent = agentHarness({ database: opened().database, tools: host, planner });
      const { threadId } = await agent.run("alice", REQUEST);
      const state = await agent.resume("alice", threadId, APPROVE);
      planner.assertDone();
      expect(state.status).toBe("completed");
      const durable = await opened().database.ledger.list(threadId);
      expect(shape(durable)).toEqual([["create_study_event", 1, "succeeded", null, true]]);
      expect(shape(state.ledger)).toEqual(shape(durable));
      expect(await serverTasks(dataPath)).toEqual([expect.objectContaining({ status: "completed" })]);
      expect(await storedCalendarEvents(dataPath)).toHaveLength(1);
      // The trace's execution entry names the task, and so does its rendering.
      const runId = String(durable[0]?.run_id);
      const graph = buildAgent(createRuntime(settings, { database: opened().database, tools: host }).host).compile({
        checkpointer: opened().database.saver,
      });
      const trace = await readRunTrace(opened().database, async () => graph, runId);
      const execution = trace?.timeline.find((entry) => entry.kind === "execution");
      expect(execution).toMatchObject({
        tool: "create_study_event",
        status: "succeeded",
        task_id: durable[0]?.task_id,
      });
      expect(trace && renderTrace(trace)).toContain(`task ${durable[0]?.task_id}`);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "the server process dies while the task is polled: once it is back, the task is polled again, one event",
    async () => {
      const host = await tools({ WARRANT_CALENDAR_TASK_EXIT: "1" });
      const planner = scriptedPlanner([calls(proposal("create_study_event", EVENT)), DONE]);
      const agent = agentHarness({ database: opened().database, tools: host, planner });
      const { threadId } = await agent.run("alice", REQUEST);
      const state = await agent.resume("alice", threadId, APPROVE);
      planner.assertDone();
      expect(state.status).toBe("completed");
      // No status check, no second send: the same attempt, settled by its task.
      const durable = await opened().database.ledger.list(threadId);
      expect(shape(durable)).toEqual([["create_study_event", 1, "succeeded", null, true]]);
      expect(await serverTasks(dataPath)).toEqual([expect.objectContaining({ status: "completed" })]);
      expect(await storedCalendarEvents(dataPath)).toHaveLength(1);
    },
    TEST_TIMEOUT_MS,
  );

  /**
   * The first host dies at `moment`; its calendar process goes with it. A second host (and calendar process)
   * continues the thread: the write is settled from the ledger row and the server's task.
   */
  async function dieThenContinue(moment: Moment) {
    const first = await tools();
    const dying: ToolHost = Object.assign(Object.create(first) as ToolHost, {
      async call(...args: Parameters<ToolHost["call"]>) {
        const [tool, toolArgs, options] = args;
        if (tool.name !== "create_study_event" || !options.task) return first.call(...args);
        const { started } = options.task;
        const hooks = {
          resume: options.task.resume,
          async started(taskId: string) {
            if (moment === "before_task_id") throw new Error("host process died");
            await started(taskId);
            if (moment === "while_polling") throw new Error("host process died");
          },
        };
        await first.call(tool, toolArgs, { ...options, task: hooks });
        throw new Error("host process died");
      },
    });
    const planner = scriptedPlanner([calls(proposal("create_study_event", EVENT)), DONE]);
    const agent = agentHarness({ database: opened().database, tools: dying, planner });
    const { threadId } = await agent.run("alice", REQUEST);
    await expect(agent.resume("alice", threadId, APPROVE)).rejects.toThrow("host process died");
    const left = await opened().database.ledger.list(threadId);
    expect(shape(left)).toEqual([["create_study_event", 1, "running", null, moment !== "before_task_id"]]);
    if (moment === "after_completion") expect(await storedCalendarEvents(dataPath)).toHaveLength(1);
    await first.close();

    const second = await tools();
    const runtime = createRuntime(settings, { database: opened().database, tools: second, planner });
    const graph = buildAgent(runtime.host).compile({ checkpointer: opened().database.saver });
    const config = {
      configurable: { thread_id: threadId, langgraph_auth_user: await principal("alice"), warrant_run_bound: {} },
      ...runOptions(settings.budgets),
    };
    await graph.invoke(null, config);
    planner.assertDone();
    // Any task still working finishes in the second calendar process: wait it out before counting events.
    await sleep(WORK_MS + 500);
    return {
      state: (await graph.getState(config)).values as State,
      durable: await opened().database.ledger.list(threadId),
    };
  }

  it.each([["while_polling"], ["after_completion"]] as const)(
    "a host that died %s: the next one polls the recorded task, sends nothing, one event",
    async (moment) => {
      const { state, durable } = await dieThenContinue(moment);
      expect(state.status).toBe("completed");
      expect(shape(durable)).toEqual([["create_study_event", 1, "succeeded", null, true]]);
      expect(await storedCalendarEvents(dataPath)).toHaveLength(1);
      expect(await serverTasks(dataPath)).toEqual([expect.objectContaining({ status: "completed" })]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a host that died before the task id was recorded: reconciled by key (resent with it if not applied), one event",
    async () => {
      const { state, durable } = await dieThenContinue("before_task_id");
      expect(state.status).toBe("completed");
      // Reconciled by key. The new calendar process finishes the first task when it starts: if that came before the
      // status check, the write was applied; else it was sent again with the same key (a second task).
      const applied = durable[0]?.status === "succeeded";
      expect(shape(durable)).toEqual([
        ["create_study_event", 1, applied ? "succeeded" : "failed", applied ? null : "tool_failed", false],
        ["get_write_status", 2, "succeeded", null, false],
        ...(applied ? [] : [["create_study_event", 3, "succeeded", null, true]]),
      ]);
      expect(durable[0]?.reconciled_by).toBe(2);
      expect(new Set(durable.map((row) => row.idempotency_key ?? durable[0]?.idempotency_key)).size).toBe(1);
      expect(await storedCalendarEvents(dataPath)).toHaveLength(1);
      const tasks = (await serverTasks(dataPath)).map((task) => task.status);
      expect(tasks).toEqual(applied ? ["completed"] : ["completed", "completed"]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a cancel while polling cancels the task at the server and records task_cancelled; nothing is written",
    async () => {
      const host = await tools();
      const tool = host.catalog().find((candidate) => candidate.name === "create_study_event");
      if (!tool) throw new Error("create_study_event is not in the catalog");
      const controller = new AbortController();
      const recorded: string[] = [];
      const outcome = await host.call(
        tool,
        { ...EVENT, user_id: "alice", idempotency_key: "cancel-key-1" },
        {
          timeoutMs: 30_000,
          signal: controller.signal,
          principal: await principal("alice"),
          threadId: "thread-cancel",
          task: {
            async started(taskId) {
              recorded.push(taskId);
              setTimeout(() => controller.abort(new Error("run cancelled")), 200);
            },
          },
        },
      );
      expect(outcome).toMatchObject({ ok: false, code: "task_cancelled" });
      expect(recorded).toHaveLength(1);
      await sleep(WORK_MS + 500);
      expect(await serverTasks(dataPath)).toEqual([expect.objectContaining({ status: "cancelled" })]);
      expect(await storedCalendarEvents(dataPath)).toHaveLength(0);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a run cancelled while its write is a task: tasks/cancel at the server, the row failed with task_cancelled",
    async () => {
      const host = await tools();
      const planner = scriptedPlanner([calls(proposal("create_study_event", EVENT))]);
      const agent = agentHarness({ database: opened().database, tools: host, planner });
      const { threadId } = await agent.run("alice", REQUEST);
      const runtime = createRuntime(settings, { database: opened().database, tools: host, planner });
      const graph = buildAgent(runtime.host).compile({ checkpointer: opened().database.saver });
      const controller = new AbortController();
      const config = {
        configurable: { thread_id: threadId, langgraph_auth_user: await principal("alice"), warrant_run_bound: {} },
        ...runOptions(settings.budgets),
        signal: controller.signal,
      };
      const running = graph.invoke(new Command({ resume: APPROVE }), config).then(
        () => "ended",
        () => "cancelled",
      );
      const rows = () => opened().database.ledger.list(threadId);
      // Cancel the run once the task id is on the write's row (the task is working at the server).
      while (!(await rows()).some((row) => row.task_id !== undefined)) await sleep(50);
      controller.abort(new Error("run cancelled"));
      expect(await running).toBe("cancelled");
      // The node settles the attempt it had started: the row ends with what the server says the task became.
      const deadline = Date.now() + 10_000;
      while ((await rows())[0]?.status === "running" && Date.now() < deadline) await sleep(100);
      expect(shape(await rows())).toEqual([["create_study_event", 1, "failed", "task_cancelled", true]]);
      await sleep(WORK_MS + 500);
      expect(await serverTasks(dataPath)).toEqual([expect.objectContaining({ status: "cancelled" })]);
      expect(await storedCalendarEvents(dataPath)).toHaveLength(0);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a task the server no longer knows is outcome_unknown, and polling it again is not a send",
    async () => {
      const host = await tools();
      const tool = host.catalog().find((candidate) => candidate.name === "create_study_event");
      if (!tool) throw new Error("create_study_event is not in the catalog");
      const outcome = await host.call(
        tool,
        { ...EVENT, user_id: "alice", idempotency_key: "gone-key-1" },
        {
          timeoutMs: 30_000,
          principal: await principal("alice"),
          threadId: "thread-forgotten",
          task: { resume: "no-such-task", started: async () => undefined },
        },
      );
      expect(outcome).toMatchObject({ ok: false, code: "outcome_unknown" });
      expect(await storedCalendarEvents(dataPath)).toHaveLength(0);
    },
    TEST_TIMEOUT_MS,
  );
});
