/**
 * A task that asks for input (issue 39, item 3): the real calendar server on 2026-07-28 (a child process) with its
 * tasks and its confirmation on (`WARRANT_CALENDAR_TASK_MS`, `WARRANT_CALENDAR_CONFIRM=1`), real Postgres, the agent
 * graph with a scripted planner and an approval. The task starts `input_required` with the confirmation in its
 * `inputRequests`; the host asks the owner through the same elicitation handler a plain call's question takes (the
 * row's `elicitation` entry), then answers with `tasks/update` on the same task: one `tools/call`, one
 * `tasks/update`, one ledger row, attempt 1. Confirmed, the task writes once; declined, nothing is written and the
 * row fails `tool_failed`, as a plain call's refusal does; a server not allowed to ask users is declined unasked.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ElicitationAnswer } from "../../src/elicitation/client.js";
import { connectTools } from "../../src/mcp/tool-host.js";
import { loadConfig, type WarrantConfig } from "../../src/policy/config.js";
import type { LedgerRow } from "../../src/state/ledger.js";
import { calls, proposal, scriptedPlanner } from "../support/scripted-planner.js";
import { useSandbox } from "../support/sandbox.js";
import { agentHarness, settings } from "./support/agent.js";
import { APPROVE, DONE, EVENT, REQUEST, storedCalendarEvents, toolCodes } from "./support/calendar.js";
import { serverTasks, taskConfig } from "./support/calendar-tasks.js";
import { scriptedOwner } from "./support/elicitation.js";
import { backends, useBackend } from "./support/postgres.js";

const TEST_TIMEOUT_MS = 60_000;
const [serverBackend] = backends;

let shipped: WarrantConfig;
beforeAll(async () => {
  shipped = await loadConfig(settings.configPath);
});

const shape = (rows: readonly LedgerRow[]) =>
  rows.map((row) => [row.tool, row.attempt, row.status, row.error_code, row.task_id !== undefined]);

describe.runIf(serverBackend)("a task that asks for input (input_required, tasks/update)", () => {
  const opened = useBackend(serverBackend!, TEST_TIMEOUT_MS);
  const each = useSandbox("each");
  let dataPath: string;
  let callLog: string;

  beforeEach(async () => {
    const directory = await each.tempDir("calendar-task-input-");
    dataPath = path.join(directory, "calendar.json");
    callLog = path.join(directory, "calls.jsonl");
  });

  /** The requests that could write, as the server received them: [method, idempotency key, carried answers]. */
  async function serverCalls(): Promise<Array<[string, string, boolean]>> {
    const text = await readFile(callLog, "utf8").catch(() => "");
    return text
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as { method: string; idempotency_key: string; input_responses: boolean })
      .map((call) => [call.method, call.idempotency_key, call.input_responses]);
  }

  /** alice asks, approves the write; the owner answers the task's question with `answer` (if the server may ask). */
  async function approvedTaskWrite(answer: ElicitationAnswer, mayAsk = true) {
    const config = taskConfig(shipped, dataPath, { WARRANT_CALENDAR_CONFIRM: "1", WARRANT_CALENDAR_CALL_LOG: callLog });
    const server = config.servers["calendar"];
    if (server?.transport !== "stdio") throw new Error("no stdio calendar");
    const broker = scriptedOwner(answer);
    const pinned = { ...config, servers: { calendar: { ...server, elicitation: mayAsk } } };
    const host = each.add(await connectTools(pinned, undefined, { elicitation: broker }));
    expect(host.revision?.("calendar")).toBe("2026-07-28");
    const planner = scriptedPlanner([calls(proposal("create_study_event", EVENT)), DONE]);
    const agent = agentHarness({ database: opened().database, tools: host, planner });
    const { threadId, state: paused } = await agent.run("alice", REQUEST);
    expect(paused.status).toBe("waiting_approval");
    const state = await agent.resume("alice", threadId, APPROVE);
    planner.assertDone();
    const durable = await opened().database.ledger.list(threadId);
    const key = String(durable[0]?.idempotency_key);
    // One tools/call (answered as a task), one tasks/update with the answer; the call is never re-sent.
    expect(await serverCalls()).toEqual([
      ["tools/call", key, false],
      ["tasks/update", key, true],
    ]);
    expect(broker.asked).toHaveLength(mayAsk ? 1 : 0);
    if (mayAsk)
      expect(broker.asked[0]?.call).toMatchObject({ server: "calendar", tool: "create_study_event", threadId });
    return { state, durable };
  }

  it(
    "the owner confirms: the task works and writes once; one row, attempt 1, succeeded with its task id",
    async () => {
      const { state, durable } = await approvedTaskWrite({ action: "accept", content: { confirm: true } });
      expect(state.status).toBe("completed");
      expect(shape(durable)).toEqual([["create_study_event", 1, "succeeded", null, true]]);
      expect(shape(state.ledger)).toEqual(shape(durable));
      expect(state.ledger[0]?.elicitation).toEqual([{ id: null, outcome: "accept" }]);
      const events = await storedCalendarEvents(dataPath);
      expect(events).toHaveLength(1);
      expect(events[0]?.["idempotency_key"]).toBe(durable[0]?.idempotency_key);
      expect(await serverTasks(dataPath)).toEqual([expect.objectContaining({ status: "completed" })]);
      expect(toolCodes(state)).toEqual(["ok"]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "the owner declines: nothing is written; the row fails tool_failed, with its task id",
    async () => {
      const { state, durable } = await approvedTaskWrite({ action: "decline" });
      expect(state.status).toBe("completed");
      expect(shape(durable)).toEqual([["create_study_event", 1, "failed", "tool_failed", true]]);
      expect(state.ledger[0]?.elicitation).toEqual([{ id: null, outcome: "decline" }]);
      expect(toolCodes(state)).toEqual(["tool_failed"]);
      expect(await storedCalendarEvents(dataPath)).toHaveLength(0);
      expect(await serverTasks(dataPath)).toEqual([expect.objectContaining({ status: "completed" })]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a server not allowed to ask users: the host declines the task's question unasked, nothing is written",
    async () => {
      const { state, durable } = await approvedTaskWrite({ action: "accept", content: { confirm: true } }, false);
      expect(shape(durable)).toEqual([["create_study_event", 1, "failed", "tool_failed", true]]);
      expect(state.ledger[0]?.elicitation).toEqual([{ id: null, outcome: "refused" }]);
      expect(await storedCalendarEvents(dataPath)).toHaveLength(0);
    },
    TEST_TIMEOUT_MS,
  );
});
