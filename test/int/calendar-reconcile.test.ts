/**
 * Reconciling calendar writes whose outcome is unknown, end to end: the real
 * calendar MCP server (a child process with its test switches), real
 * Postgres (server and embedded), the agent graph with a strict scripted
 * planner and an approval resume. Assertions are on the events in the
 * calendar's store file, the ledger rows (state and durable) and codes.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { buildAgent } from "../../graphs/agent.js";
import { createRuntime } from "../../src/bootstrap.js";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import { loadConfig, type WarrantConfig } from "../../src/policy/config.js";
import { runOptions } from "../../src/graph/routes.js";
import type { State } from "../../src/state.js";
import { calls, proposal, scriptedPlanner, type ScriptStep } from "../support/scripted-planner.js";
import { agentHarness, principal, settings } from "./support/agent.js";
import { backends, useBackend } from "./support/postgres.js";
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

/** The write's timeout in these tests: short, so the timeout cases stay quick. */
const WRITE_TIMEOUT_MS = 1_500;
const TEST_TIMEOUT_MS = 60_000;

let shipped: WarrantConfig;
beforeAll(async () => {
  shipped = await loadConfig(settings.configPath);
});

describe.each(backends)("reconciling calendar writes on $name Postgres", (backend) => {
  let dataPath: string;

  const opened = useBackend(backend, TEST_TIMEOUT_MS);
  const each = useSandbox("each");
  beforeEach(async () => {
    dataPath = await calendarDataPath(each, "calendar-reconcile-");
  });

  async function tools(switches: Record<string, string> = {}): Promise<ToolHost> {
    return each.add(await connectTools(calendarConfig(shipped, dataPath, switches, WRITE_TIMEOUT_MS)));
  }

  const storedEvents = () => storedCalendarEvents(dataPath);

  /** alice asks, the planner proposes the write, alice approves; returns the state after the resume. */
  async function approvedWrite(host: ToolHost, steps: ScriptStep[]) {
    const planner = scriptedPlanner([calls(proposal("create_study_event", EVENT)), ...steps]);
    const agent = agentHarness({ database: opened().database, tools: host, planner });
    const { threadId, state: paused } = await agent.run("alice", REQUEST);
    expect(paused.status).toBe("waiting_approval");
    expect(await storedEvents()).toHaveLength(0);
    const state = await agent.resume("alice", threadId, APPROVE);
    planner.assertDone();
    return { state, durable: await opened().database.ledger.list(threadId) };
  }

  it.each([["lose_response"], ["timeout_after_apply"]])(
    "reconciles an applied write whose response was lost (%s) into one event and a succeeded write",
    async (mode) => {
      const { state, durable } = await approvedWrite(await tools({ WARRANT_CALENDAR_FAIL: mode }), [DONE]);
      expect(state.status).toBe("completed");
      expect(await storedEvents()).toHaveLength(1);
      const expected = [
        ["create_study_event", 1, "succeeded", null, null, 2],
        ["get_write_status", 2, "succeeded", null, 1, null],
      ];
      expect(ledgerShape(state.ledger)).toEqual(expected);
      expect(ledgerShape(durable)).toEqual(expected);
      // The status check asked about the write's own key.
      expect(new Set(durable.map((row) => row.call_id)).size).toBe(1);
      expect(toolCodes(state)).toEqual(["ok"]);
      expect(state.usage.tool_calls).toBe(2);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "retries a write that timed out without applying exactly once, with the same key: one event",
    async () => {
      const { state, durable } = await approvedWrite(
        await tools({ WARRANT_CALENDAR_FAIL: "timeout", WARRANT_CALENDAR_FAIL_COUNT: "1" }),
        [DONE],
      );
      expect(state.status).toBe("completed");
      const events = await storedEvents();
      expect(events).toHaveLength(1);
      const expected = [
        ["create_study_event", 1, "failed", "tool_timeout", null, 2],
        ["get_write_status", 2, "succeeded", null, 1, null],
        ["create_study_event", 3, "succeeded", null, null, null],
      ];
      expect(ledgerShape(state.ledger)).toEqual(expected);
      expect(ledgerShape(durable)).toEqual(expected);
      const keys = durable.filter((row) => row.tool === "create_study_event").map((row) => row.idempotency_key);
      expect(keys[0]).toBeTruthy();
      expect(keys).toEqual([keys[0], keys[0]]);
      expect(events[0]?.["idempotency_key"]).toBe(keys[0]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "leaves the write outcome_unknown and stops for a human when the status tool fails; no second create",
    async () => {
      // A second create would succeed here (the timeout applies to the first call only): it must not be sent.
      const host = await tools({
        WARRANT_CALENDAR_FAIL: "timeout",
        WARRANT_CALENDAR_FAIL_COUNT: "1",
        WARRANT_CALENDAR_STATUS_FAIL: "error",
      });
      const { state, durable } = await approvedWrite(host, []);
      expect(await storedEvents()).toHaveLength(0);
      const expected = [
        ["create_study_event", 1, "outcome_unknown", "tool_timeout", null, null],
        ["get_write_status", 2, "failed", "transient_error", 1, null],
        ["get_write_status", 3, "failed", "transient_error", 1, null],
      ];
      expect(ledgerShape(state.ledger)).toEqual(expected);
      expect(ledgerShape(durable)).toEqual(expected);
      expect(toolCodes(state)).toEqual(["outcome_unknown"]);
      expect(state.status).toBe("needs_human");
      expect(state.termination_reason?.code).toBe("needs_human");
      expect(state.termination_reason?.detail.startsWith("outcome_unknown:")).toBe(true);
    },
    TEST_TIMEOUT_MS,
  );

  describe("after the host died during the write", () => {
    /**
     * The first process: the write is sent (or not) and the host dies before
     * recording its outcome, leaving the ledger row `running`. The second
     * process continues the same thread with a healthy host.
     */
    async function crashThenContinue(applyBeforeCrash: boolean) {
      const real = await tools();
      const crashing: ToolHost = Object.assign(Object.create(real) as ToolHost, {
        async call(...args: Parameters<ToolHost["call"]>) {
          if (args[0].name === "create_study_event" && applyBeforeCrash) await real.call(...args);
          throw new Error("host process died");
        },
      });
      const planner = scriptedPlanner([calls(proposal("create_study_event", EVENT)), DONE]);
      const first = agentHarness({ database: opened().database, tools: crashing, planner });
      const { threadId } = await first.run("alice", REQUEST);
      await expect(first.resume("alice", threadId, APPROVE)).rejects.toThrow("host process died");
      expect((await opened().database.ledger.list(threadId)).map((row) => row.status)).toEqual(["running"]);

      const runtime = createRuntime(settings, { database: opened().database, tools: real, planner });
      const graph = buildAgent(runtime.host).compile({ checkpointer: opened().database.saver });
      const config = {
        configurable: { thread_id: threadId, langgraph_auth_user: await principal("alice"), warrant_run_bound: {} },
        ...runOptions(settings.budgets),
      };
      await graph.invoke(null, config);
      planner.assertDone();
      return {
        state: (await graph.getState(config)).values as State,
        durable: await opened().database.ledger.list(threadId),
      };
    }

    it(
      "asks the status tool instead of resending an applied write: one event",
      async () => {
        const { state, durable } = await crashThenContinue(true);
        expect(state.status).toBe("completed");
        expect(await storedEvents()).toHaveLength(1);
        expect(ledgerShape(durable)).toEqual([
          ["create_study_event", 1, "succeeded", null, null, 2],
          ["get_write_status", 2, "succeeded", null, 1, null],
        ]);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      "resends once with the same key when the write never reached the server: one event",
      async () => {
        const { state, durable } = await crashThenContinue(false);
        expect(state.status).toBe("completed");
        expect(await storedEvents()).toHaveLength(1);
        expect(ledgerShape(durable)).toEqual([
          ["create_study_event", 1, "failed", "tool_failed", null, 2],
          ["get_write_status", 2, "succeeded", null, 1, null],
          ["create_study_event", 3, "succeeded", null, null, null],
        ]);
        expect(durable[2]?.idempotency_key).toBe(durable[0]?.idempotency_key);
      },
      TEST_TIMEOUT_MS,
    );
  });
});
