/**
 * SIGKILL of the host process during a write run as an MCP task (issue 39, item 3), with real processes: the
 * host (test/int/support/task-crash-child.ts, running the agent graph on real Postgres with the real calendar
 * server as its child) approves the write and kills itself before the task id was recorded, while polling, or
 * after the task completed but before the ledger row was updated; its calendar process is killed with it. A new
 * host (and calendar process) continues the thread: exactly one calendar event, the write succeeded, and after
 * the two later moments it polled the recorded task and sent nothing.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import os from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { buildAgent } from "../../graphs/agent.js";
import { createRuntime } from "../../src/bootstrap.js";
import { REPO_ROOT } from "../../src/env.js";
import { runOptions } from "../../src/graph/routes.js";
import { connectTools } from "../../src/mcp/tool-host.js";
import { loadConfig, type WarrantConfig } from "../../src/policy/config.js";
import type { State } from "../../src/state.js";
import { openDatabase } from "../../src/stores/open-database.js";
import { calls, proposal, scriptedPlanner } from "../support/scripted-planner.js";
import { useSandbox } from "../support/sandbox.js";
import { agentHarness, principal, settings } from "./support/agent.js";
import { DONE, EVENT, REQUEST, storedCalendarEvents } from "./support/calendar.js";
import { MOMENTS, serverTasks, taskConfig, WORK_MS } from "./support/calendar-tasks.js";
import { createTestDatabase } from "./support/postgres.js";

const CHILD = fileURLToPath(new URL("./support/task-crash-child.ts", import.meta.url));
const TEST_TIMEOUT_MS = 120_000;

let shipped: WarrantConfig;
beforeAll(async () => {
  shipped = await loadConfig(settings.configPath);
});

describe("SIGKILL of the host process during a write run as a task", () => {
  const fixture = useSandbox("each", TEST_TIMEOUT_MS);

  it.each(MOMENTS)(
    "killed %s: the next host settles the write with exactly one event",
    async (moment) => {
      const testDatabase = await createTestDatabase();
      fixture.add({ cleanup: () => testDatabase.drop() });
      const database = await openDatabase({ databaseUrl: testDatabase.url, dataDir: os.tmpdir() });
      fixture.add({ cleanup: () => database.close() });
      const dataPath = `${await fixture.tempDir("calendar-tasks-crash-")}/calendar.json`;

      // The review is pending: alice asked, the write was proposed.
      const planner = scriptedPlanner([calls(proposal("create_study_event", EVENT)), DONE]);
      const proposing = await connectTools(taskConfig(shipped, dataPath));
      const { threadId } = await agentHarness({ database, tools: proposing, planner }).run("alice", REQUEST);
      await proposing.close();

      // The host that approves it dies at `moment`; its calendar process goes with it (its process group).
      const child = spawn(process.execPath, ["--import", "tsx", CHILD, testDatabase.url, dataPath, threadId, moment], {
        cwd: REPO_ROOT,
        stdio: ["ignore", "ignore", "pipe"],
        detached: true,
      });
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // The group is gone already.
      }
      expect({ code, signal }, stderr).toEqual({ code: null, signal: "SIGKILL" });
      const left = await database.ledger.list(threadId);
      expect(left.map((row) => [row.tool, row.status, row.task_id !== undefined])).toEqual([
        ["create_study_event", "running", moment !== "before_task_id"],
      ]);
      const sentBefore = (await serverTasks(dataPath)).length;
      expect(sentBefore).toBe(1);

      // A new host continues the thread.
      const host = await connectTools(taskConfig(shipped, dataPath));
      fixture.add({ cleanup: () => host.close() });
      const runtime = createRuntime(settings, { database, tools: host, planner });
      const graph = buildAgent(runtime.host).compile({ checkpointer: database.saver });
      const config = {
        configurable: { thread_id: threadId, langgraph_auth_user: await principal("alice"), warrant_run_bound: {} },
        ...runOptions(settings.budgets),
      };
      await graph.invoke(null, config);
      planner.assertDone();
      // Any task still working finishes in the new calendar process: wait it out before counting events.
      await sleep(WORK_MS + 500);
      const state = (await graph.getState(config)).values as State;
      const durable = await database.ledger.list(threadId);
      expect(state.status).toBe("completed");
      expect(await storedCalendarEvents(dataPath)).toHaveLength(1);
      const writes = durable.filter((row) => row.tool === "create_study_event");
      expect(new Set(writes.map((row) => row.idempotency_key)).size).toBe(1);
      expect(writes.at(-1)?.status).toBe("succeeded");
      if (moment !== "before_task_id") {
        // Polled the recorded task: one write row, no status check, no second task.
        expect(durable.map((row) => [row.tool, row.attempt, row.status, row.task_id !== undefined])).toEqual([
          ["create_study_event", 1, "succeeded", true],
        ]);
        expect(await serverTasks(dataPath)).toEqual([expect.objectContaining({ status: "completed" })]);
      } else {
        // Reconciled by key (the status tool), as any unknown outcome; a resend, if any, reused the key.
        expect(durable.some((row) => row.tool === "get_write_status" && row.reconciles === 1)).toBe(true);
      }
    },
    TEST_TIMEOUT_MS,
  );
});
