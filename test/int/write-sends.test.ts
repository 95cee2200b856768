/**
 * A send is counted only when it may have been received (issue 46, item 1).
 * A write's ledger row says whether its request left the process
 * (`sent: false` from the intent row, `true` just before the call): an
 * execution that dies between the two never reached the server, and its
 * continuation sends the write again with the same key without spending the
 * write's two sends. When the sends are spent and the server says the write
 * was never applied, the thread ends `needs_human` naming the write, never
 * `completed`. The real calendar MCP server, real Postgres (server and
 * embedded), the agent graph with a scripted planner.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { buildAgent } from "../../graphs/agent.js";
import { createRuntime } from "../../src/bootstrap.js";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import { loadConfig, type WarrantConfig } from "../../src/policy/config.js";
import type { LedgerRow } from "../../src/state/ledger.js";
import type { LedgerStore } from "../../src/ports.js";
import { runOptions } from "../../src/graph/routes.js";
import type { Database } from "../../src/stores/open-database.js";
import type { State } from "../../src/state.js";
import { calls, proposal, scriptedPlanner } from "../support/scripted-planner.js";
import { agentHarness, principal, settings } from "./support/agent.js";
import {
  APPROVE,
  calendarConfig,
  calendarDataPath,
  DONE,
  EVENT,
  ledgerShape,
  REQUEST,
  storedCalendarEvents,
  toolCodes,
} from "./support/calendar.js";
import { backends, useBackend } from "./support/postgres.js";

const WRITE_TIMEOUT_MS = 1_500;
const TEST_TIMEOUT_MS = 90_000;
const DIED = "host process died";

let shipped: WarrantConfig;
beforeAll(async () => {
  shipped = await loadConfig(settings.configPath);
});

/**
 * The ledger of a process that dies right after a write's intent row is
 * durable and before its request leaves, the first `stops` times: the row is
 * written (by the real store), then the execution throws.
 */
function stoppingAfterIntent(real: LedgerStore, stops: { left: number }): LedgerStore {
  const stopAfter = async <T>(row: LedgerRow, write: () => Promise<T>): Promise<T> => {
    const written = await write();
    // Only once the row is in (beginFirst answers false when the call already has rows, and writes nothing).
    if (written !== false && row.risk !== "read" && row.status === "running" && stops.left > 0) {
      stops.left -= 1;
      throw new Error(DIED);
    }
    return written;
  };
  return Object.assign(Object.create(real) as LedgerStore, {
    begin: (threadId: string, row: LedgerRow, ...rest: unknown[]) =>
      stopAfter(row, () => (real.begin as (...args: unknown[]) => Promise<void>).call(real, threadId, row, ...rest)),
    beginFirst: (threadId: string, row: LedgerRow, ...rest: unknown[]) =>
      stopAfter(row, () =>
        (real.beginFirst as (...args: unknown[]) => Promise<boolean>).call(real, threadId, row, ...rest),
      ),
  });
}

describe.each(backends)("counting a write's sends on $name Postgres", (backend) => {
  let dataPath: string;

  const opened = useBackend(backend, TEST_TIMEOUT_MS);
  const each = useSandbox("each");
  beforeEach(async () => {
    dataPath = await calendarDataPath(each, "write-sends-");
  });

  async function tools(switches: Record<string, string> = {}): Promise<ToolHost> {
    return each.add(await connectTools(calendarConfig(shipped, dataPath, switches, WRITE_TIMEOUT_MS)));
  }

  it(
    "two stops between the intent row and the send: one event, final_answer, no send counted",
    async () => {
      const real = await tools();
      const stops = { left: 2 };
      const database: Database = { ...opened().database, ledger: stoppingAfterIntent(opened().database.ledger, stops) };
      const planner = scriptedPlanner([calls(proposal("create_study_event", EVENT)), DONE]);
      const first = agentHarness({ database, tools: real, planner });
      const { threadId, state: paused } = await first.run("alice", REQUEST);
      expect(paused.status).toBe("waiting_approval");
      // The approval's execution dies after the intent row, before the send.
      await expect(first.resume("alice", threadId, APPROVE)).rejects.toThrow(DIED);

      // Each later process continues the thread (input null); the second dies at the same point.
      const runtime = createRuntime(settings, { database, tools: real, planner });
      const graph = buildAgent(runtime.host).compile({ checkpointer: opened().database.saver });
      const config = {
        configurable: { thread_id: threadId, langgraph_auth_user: await principal("alice"), warrant_run_bound: {} },
        ...runOptions(settings.budgets),
      };
      await expect(graph.invoke(null, config)).rejects.toThrow(DIED);
      expect(stops.left).toBe(0);
      expect(await storedCalendarEvents(dataPath)).toHaveLength(0);
      await graph.invoke(null, config);
      planner.assertDone();

      const state = (await graph.getState(config)).values as State;
      const durable = await opened().database.ledger.list(threadId);
      expect(await storedCalendarEvents(dataPath)).toHaveLength(1);
      expect(state.status).toBe("completed");
      expect(state.termination_reason?.code).toBe("final_answer");
      // The two intents that never left are abandoned, not failed; no status check was needed.
      expect(ledgerShape(durable)).toEqual([
        ["create_study_event", 1, "abandoned", null, null, null],
        ["create_study_event", 2, "abandoned", null, null, null],
        ["create_study_event", 3, "succeeded", null, null, null],
      ]);
      expect(durable.map((row) => row.sent)).toEqual([false, false, true]);
      expect(durable.some((row) => row.status === "failed")).toBe(false);
      const keys = new Set(durable.map((row) => row.idempotency_key));
      expect(keys.size).toBe(1);
      expect((await storedCalendarEvents(dataPath))[0]?.["idempotency_key"]).toBe([...keys][0]);
      expect(toolCodes(state)).toEqual(["ok"]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "both sends found not applied: the thread ends needs_human naming the write, never completed",
    async () => {
      // Both creates time out without applying; each status check says not applied.
      const host = await tools({ WARRANT_CALENDAR_FAIL: "timeout", WARRANT_CALENDAR_FAIL_COUNT: "2" });
      // No planner step after the proposal: the run must stop without asking the planner again.
      const planner = scriptedPlanner([calls(proposal("create_study_event", EVENT))]);
      const agent = agentHarness({ database: opened().database, tools: host, planner });
      const { threadId } = await agent.run("alice", REQUEST);
      const state = await agent.resume("alice", threadId, APPROVE);
      planner.assertDone();
      expect(await storedCalendarEvents(dataPath)).toHaveLength(0);
      expect(ledgerShape(await opened().database.ledger.list(threadId))).toEqual([
        ["create_study_event", 1, "failed", "tool_timeout", null, 2],
        ["get_write_status", 2, "succeeded", null, 1, null],
        ["create_study_event", 3, "failed", "tool_timeout", null, 4],
        ["get_write_status", 4, "succeeded", null, 3, null],
      ]);
      expect(state.status).toBe("needs_human");
      expect(state.termination_reason?.code).toBe("needs_human");
      expect(state.result).toBeNull();
      const detail = state.termination_reason?.detail ?? "";
      expect(detail.startsWith("unfinished write: create_study_event (")).toBe(true);
      // Named by what it would have done.
      expect(detail).toContain("Revise attention");
    },
    TEST_TIMEOUT_MS,
  );
});
