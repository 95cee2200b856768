/**
 * Multi round-trip writes and broken streams (issue 39, item 2), on both revisions: the real calendar server (a
 * child process with its test switches), real Postgres, the agent graph with a strict scripted planner and an
 * approval resume. The server speaks 2026-07-28 or 2025-11-25 as the config pins it.
 * - `WARRANT_CALENDAR_CONFIRM=1`: create_study_event asks the owner to confirm. On 2026-07-28 it answers
 *   `input_required` and the SDK client re-sends the call with the answer; on 2025-11-25 it elicits. Either way
 *   one ledger row, attempt 1, and the server saw the host's idempotency key on every request it received (two
 *   requests on 2026-07-28, one on 2025-11-25); a decline writes nothing and the row fails `tool_failed`.
 * - The server process dies after applying the write (plain, or the re-sent call of a confirmed one), before
 *   answering: neither the host nor its SDK client sends the write again (the server's call log); the row is
 *   `outcome_unknown` until the status tool reconciles it.
 * - The server process dies before applying: the status tool finds nothing, and the write is sent once more with
 *   the same key (as after a timeout that applied nothing on 2025-11-25).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ElicitationBroker } from "../../src/elicitation/client.js";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import { loadConfig, type WarrantConfig } from "../../src/policy/config.js";
import { calls, proposal, scriptedPlanner } from "../support/scripted-planner.js";
import { useSandbox } from "../support/sandbox.js";
import { agentHarness, settings } from "./support/agent.js";
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
import { scriptedOwner as owner } from "./support/elicitation.js";
import { backends, useBackend } from "./support/postgres.js";

const WRITE_TIMEOUT_MS = 5_000;
const TEST_TIMEOUT_MS = 60_000;
const REVISIONS = ["2026-07-28", "2025-11-25"] as const;
const [serverBackend] = backends;

let shipped: WarrantConfig;
beforeAll(async () => {
  shipped = await loadConfig(settings.configPath);
});

describe.runIf(serverBackend).each(REVISIONS)("a calendar write on %s", (revision) => {
  const opened = useBackend(serverBackend!, TEST_TIMEOUT_MS);
  const each = useSandbox("each");
  let dataPath: string;
  let callLog: string;

  beforeEach(async () => {
    dataPath = await calendarDataPath(each, "calendar-round-trips-");
    callLog = path.join(path.dirname(dataPath), "calls.jsonl");
  });

  /** The calendar alone, pinned to `revision`, allowed to ask the owner, with `switches` and the call log. */
  async function tools(switches: Record<string, string>, broker?: ElicitationBroker, mayAsk = true): Promise<ToolHost> {
    const config = calendarConfig(shipped, dataPath, { ...switches, WARRANT_CALENDAR_CALL_LOG: callLog }, 0);
    const server = config.servers["calendar"];
    if (server?.transport !== "stdio") throw new Error("no stdio calendar");
    const create = config.tools["create_study_event"];
    if (!create) throw new Error("no create_study_event contract");
    const pinned: WarrantConfig = {
      ...config,
      servers: { calendar: { ...server, protocol: revision, elicitation: mayAsk } },
      tools: { ...config.tools, create_study_event: { ...create, timeout_ms: WRITE_TIMEOUT_MS } },
    };
    const host = each.add(await connectTools(pinned, undefined, broker ? { elicitation: broker } : {}));
    expect(host.revision?.("calendar")).toBe(revision);
    return host;
  }

  /** The create_study_event requests the server received: [idempotency key, carried inputResponses]. */
  async function serverCalls(): Promise<Array<[string, boolean]>> {
    const text = await readFile(callLog, "utf8").catch(() => "");
    return text
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as { idempotency_key: string; input_responses: boolean })
      .map((call) => [call.idempotency_key, call.input_responses]);
  }

  /** alice asks, the planner proposes the write, alice approves; the state after the resume and the durable rows. */
  async function approvedWrite(host: ToolHost) {
    const planner = scriptedPlanner([calls(proposal("create_study_event", EVENT)), DONE]);
    const agent = agentHarness({ database: opened().database, tools: host, planner });
    const { threadId, state: paused } = await agent.run("alice", REQUEST);
    expect(paused.status).toBe("waiting_approval");
    const state = await agent.resume("alice", threadId, APPROVE);
    planner.assertDone();
    return { state, durable: await opened().database.ledger.list(threadId) };
  }

  it(
    "asks the owner to confirm; confirmed, the write applies once on one row, attempt 1, with one key",
    async () => {
      const broker = owner({ action: "accept", content: { confirm: true } });
      const { state, durable } = await approvedWrite(await tools({ WARRANT_CALENDAR_CONFIRM: "1" }, broker));
      expect(state.status).toBe("completed");
      expect(broker.asked).toHaveLength(1);
      const events = await storedCalendarEvents(dataPath);
      expect(events).toHaveLength(1);
      const expected = [["create_study_event", 1, "succeeded", null, null, null]];
      expect(ledgerShape(durable)).toEqual(expected);
      expect(ledgerShape(state.ledger)).toEqual(expected);
      // The question's outcome is on the run state's row (the elicitations table holds it durably).
      expect(state.ledger[0]?.elicitation).toEqual([{ id: null, outcome: "accept" }]);
      const key = String(durable[0]?.idempotency_key);
      expect(events[0]?.["idempotency_key"]).toBe(key);
      // 2026-07-28: the input_required answer, then the same call re-sent with the answer; 2025-11-25: one call.
      const expectedCalls =
        revision === "2026-07-28"
          ? [
              [key, false],
              [key, true],
            ]
          : [[key, false]];
      expect(await serverCalls()).toEqual(expectedCalls);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "the owner declines: nothing is written and the write's one row fails tool_failed",
    async () => {
      const broker = owner({ action: "decline" });
      const { state, durable } = await approvedWrite(await tools({ WARRANT_CALENDAR_CONFIRM: "1" }, broker));
      expect(state.status).toBe("completed");
      expect(await storedCalendarEvents(dataPath)).toHaveLength(0);
      expect(ledgerShape(durable)).toEqual([["create_study_event", 1, "failed", "tool_failed", null, null]]);
      expect(state.ledger[0]?.elicitation).toEqual([{ id: null, outcome: "decline" }]);
      expect(toolCodes(state)).toEqual(["tool_failed"]);
      const key = String(durable[0]?.idempotency_key);
      expect(await serverCalls()).toEqual(
        revision === "2026-07-28"
          ? [
              [key, false],
              [key, true],
            ]
          : [[key, false]],
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a server not allowed to ask users: the host declines without asking the owner, nothing is written",
    async () => {
      const broker = owner({ action: "accept", content: { confirm: true } });
      const { state, durable } = await approvedWrite(await tools({ WARRANT_CALENDAR_CONFIRM: "1" }, broker, false));
      expect(broker.asked).toHaveLength(0);
      expect(await storedCalendarEvents(dataPath)).toHaveLength(0);
      expect(ledgerShape(durable)).toEqual([["create_study_event", 1, "failed", "tool_failed", null, null]]);
      expect(state.ledger[0]?.elicitation).toEqual([{ id: null, outcome: "refused" }]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "the server dies after applying, before answering: not resent, reconciled by the status tool, one event",
    async () => {
      const { state, durable } = await approvedWrite(await tools({ WARRANT_CALENDAR_FAIL: "lose_response" }));
      expect(state.status).toBe("completed");
      expect(await storedCalendarEvents(dataPath)).toHaveLength(1);
      const expected = [
        ["create_study_event", 1, "succeeded", null, null, 2],
        ["get_write_status", 2, "succeeded", null, 1, null],
      ];
      expect(ledgerShape(durable)).toEqual(expected);
      expect(ledgerShape(state.ledger)).toEqual(expected);
      expect(toolCodes(state)).toEqual(["ok"]);
      // Neither the host nor its SDK client sent the write again after the stream broke.
      expect(await serverCalls()).toEqual([[String(durable[0]?.idempotency_key), false]]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "the server dies after applying the confirmed write: the answered call is reconciled, not sent a third time",
    async () => {
      const broker = owner({ action: "accept", content: { confirm: true } });
      const switches = { WARRANT_CALENDAR_CONFIRM: "1", WARRANT_CALENDAR_FAIL: "lose_response" };
      const { state, durable } = await approvedWrite(await tools(switches, broker));
      expect(state.status).toBe("completed");
      expect(broker.asked).toHaveLength(1);
      expect(await storedCalendarEvents(dataPath)).toHaveLength(1);
      expect(ledgerShape(durable)).toEqual([
        ["create_study_event", 1, "succeeded", null, null, 2],
        ["get_write_status", 2, "succeeded", null, 1, null],
      ]);
      const key = String(durable[0]?.idempotency_key);
      expect(await serverCalls()).toEqual(
        revision === "2026-07-28"
          ? [
              [key, false],
              [key, true],
            ]
          : [[key, false]],
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "the server dies before applying: the status tool finds nothing, the write is sent once more, same key",
    async () => {
      const marker = path.join(path.dirname(dataPath), "failed-once");
      const host = await tools({ WARRANT_CALENDAR_FAIL: "exit_before_apply", WARRANT_CALENDAR_FAIL_ONCE: marker });
      const { state, durable } = await approvedWrite(host);
      expect(state.status).toBe("completed");
      const events = await storedCalendarEvents(dataPath);
      expect(events).toHaveLength(1);
      const expected = [
        ["create_study_event", 1, "failed", "server_unavailable", null, 2],
        ["get_write_status", 2, "succeeded", null, 1, null],
        ["create_study_event", 3, "succeeded", null, null, null],
      ];
      expect(ledgerShape(durable)).toEqual(expected);
      expect(ledgerShape(state.ledger)).toEqual(expected);
      const key = String(durable[0]?.idempotency_key);
      expect(durable[2]?.idempotency_key).toBe(key);
      expect(events[0]?.["idempotency_key"]).toBe(key);
      expect(await serverCalls()).toEqual([
        [key, false],
        [key, false],
      ]);
    },
    TEST_TIMEOUT_MS,
  );
});
