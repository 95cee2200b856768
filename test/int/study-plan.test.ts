/**
 * Study plans end to end with no model: the rules planner drives the real
 * graph on real Postgres with the real notes, schedule and calendar MCP
 * servers (child processes). A plan becomes one review of one
 * `create_study_event` per day; only approved actions write; the final
 * answer lists what the calendar created and cites the notes read.
 * Assertions are on interrupt payloads, events listed by the calendar,
 * ledger rows and citations.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import type { Database } from "../../src/stores/open-database.js";
import { createRulesPlanner } from "../../src/domains/rules-planner.js";
import { loadConfig, type WarrantConfig } from "../../src/policy/config.js";
import type { State } from "../../src/state.js";
import { agentHarness, principal, settings, type AgentHarness } from "./support/agent.js";
import { openTestDatabase } from "./support/postgres.js";

const TIMEOUT_MS = 60_000;

const plan = (date: string) =>
  "Use my notes to plan 120 minutes of attention study over 3 days, at most 60 minutes a day, " +
  `starting ${date} at 18:00 UTC, and put it in my calendar`;

interface Payload {
  action_requests: { name: string; args: Record<string, unknown> }[];
  approvals: { action_id: string; fingerprint: string; version: number; expires_at: string }[];
}

let tools: ToolHost;
let database: Database;
let directory: string;
let agent: AgentHarness;

/** The shipped config without CaseOps (not needed here), the calendar storing into a fresh file. */
async function studyConfig(dataPath: string): Promise<WarrantConfig> {
  const shipped = await loadConfig(settings.configPath);
  const calendar = shipped.servers["calendar"];
  if (calendar?.transport !== "stdio") throw new Error("the shipped config has no stdio calendar server");
  const servers = {
    notes: shipped.servers["notes"],
    schedule: shipped.servers["schedule"],
    calendar: { ...calendar, env: { ...calendar.env, WARRANT_CALENDAR_DATA: dataPath } },
  };
  const tools = Object.fromEntries(
    Object.entries(shipped.tools).filter(([, contract]) => contract.server !== "caseops"),
  );
  return { ...shipped, servers: servers as WarrantConfig["servers"], tools };
}

beforeAll(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), "study-plan-"));
  tools = await connectTools(await studyConfig(path.join(directory, "calendar.json")));
  database = await openTestDatabase();
  agent = agentHarness({ database, tools, planner: createRulesPlanner() });
}, TIMEOUT_MS);
afterAll(async () => {
  await tools?.close();
  await database?.close();
  if (directory) await rm(directory, { recursive: true, force: true });
});

/** alice's events in a window, as the calendar's own `list_events` reports them. */
async function eventsBetween(from: string, to: string): Promise<Record<string, unknown>[]> {
  const listEvents = tools.catalog().find((tool) => tool.name === "list_events");
  if (!listEvents) throw new Error("list_events is not in the catalog");
  const result = await tools.call(
    listEvents,
    { user_id: "alice", from, to },
    { timeoutMs: 5_000, principal: await principal("alice"), threadId: "study-plan-test" },
  );
  if (!result.ok) throw new Error(`list_events failed: ${result.code}`);
  return (result.structured as { events: Record<string, unknown>[] }).events;
}

async function pausedPlan(date: string): Promise<{ threadId: string; payload: Payload; state: State }> {
  const { threadId, state } = await agent.run("alice", plan(date));
  expect(state.status).toBe("waiting_approval");
  const interrupts = (await agent.interrupts(threadId)) as Payload[];
  expect(interrupts).toHaveLength(1);
  return { threadId, payload: interrupts[0] as Payload, state };
}

const writes = (state: State) => state.ledger.filter((row) => row.tool === "create_study_event");

describe("a study plan into the calendar, reviewed once", () => {
  it(
    "pauses once for three sessions; approving all creates exactly three events and the answer lists them with citations",
    async () => {
      const { threadId, payload } = await pausedPlan("2026-12-02");
      expect(payload.action_requests.map((request) => request.name)).toEqual([
        "create_study_event",
        "create_study_event",
        "create_study_event",
      ]);
      expect(
        payload.action_requests.map((request) => [
          request.args["calendar"],
          request.args["start"],
          request.args["end"],
          request.args["timezone"],
        ]),
      ).toEqual([
        ["study", "2026-12-02T18:00:00+00:00", "2026-12-02T18:40:00+00:00", "UTC"],
        ["study", "2026-12-03T18:00:00+00:00", "2026-12-03T18:40:00+00:00", "UTC"],
        ["study", "2026-12-04T18:00:00+00:00", "2026-12-04T18:40:00+00:00", "UTC"],
      ]);
      expect(payload.action_requests.every((request) => request.args["title"] === "Study: attention (40 min)")).toBe(
        true,
      );
      expect(payload.approvals).toHaveLength(3);
      // The contents travel in `description` exactly when the calendar's schema declares it (validation is strict).
      const writer = tools.catalog().find((tool) => tool.name === "create_study_event");
      const declared = (writer?.model_schema["properties"] ?? {}) as Record<string, unknown>;
      for (const request of payload.action_requests) {
        if (Object.hasOwn(declared, "description"))
          expect(String(request.args["description"])).toMatch(
            /^Topic: attention\. Session \d of 3 \(40 min\)\. Notes: cs301\./,
          );
        else expect(Object.hasOwn(request.args, "description")).toBe(false);
      }
      expect(await eventsBetween("2026-12-02T00:00:00Z", "2026-12-05T00:00:00Z")).toHaveLength(0);

      const state = await agent.resume("alice", threadId, {
        decisions: [{ type: "approve" }, { type: "approve" }, { type: "approve" }],
      });
      expect(state.status).toBe("completed");
      const events = await eventsBetween("2026-12-02T00:00:00Z", "2026-12-05T00:00:00Z");
      expect(events).toHaveLength(3);
      expect(writes(state).map((row) => row.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
      for (const event of events) expect(state.result?.answer).toContain(String(event["event_id"]));
      const citations = state.result?.citations ?? [];
      expect(citations.length).toBeGreaterThan(0);
      for (const citation of citations) expect(citation.source_id.startsWith("cs301/")).toBe(true);
      // Citations are the notes the run read.
      const read = new Set(state.evidence.filter((item) => item.tool === "read_note").map((item) => item.ref));
      for (const citation of citations) expect(read.has(citation.ref)).toBe(true);
    },
    TIMEOUT_MS,
  );

  it(
    "writes only the approved sessions and names the rejected one in the answer",
    async () => {
      const { threadId } = await pausedPlan("2026-12-09");
      const state = await agent.resume("alice", threadId, {
        decisions: [{ type: "approve" }, { type: "approve" }, { type: "reject", message: "busy that evening" }],
      });
      expect(state.status).toBe("completed");
      const events = await eventsBetween("2026-12-09T00:00:00Z", "2026-12-12T00:00:00Z");
      expect(events.map((event) => event["start"]).sort()).toEqual([
        "2026-12-09T18:00:00+00:00",
        "2026-12-10T18:00:00+00:00",
      ]);
      expect(writes(state)).toHaveLength(2);
      expect(state.result?.answer).toMatch(
        /2026-12-11T18:00:00\+00:00: rejected by alice \(the owner\): busy that evening/,
      );
    },
    TIMEOUT_MS,
  );
});

describe("a division between topics", () => {
  const DIVIDE = "Divide 180 minutes between self-attention, cross-attention and normalization using my notes";

  it(
    "gives alice shares summing to 180 among topics her notes support, each cited",
    async () => {
      const { state } = await agent.run("alice", DIVIDE);
      expect(state.status).toBe("completed");
      const answer = state.result?.answer ?? "";
      const shares = [...answer.matchAll(/^- ([a-z-]+): (\d+) min/gm)].map(
        (match) => [match[1], Number(match[2])] as const,
      );
      expect(shares.map(([topic]) => topic)).toEqual(["self-attention", "cross-attention"]);
      expect(shares.reduce((sum, [, minutes]) => sum + minutes, 0)).toBe(180);
      expect(answer).toMatch(/Unsupported: "normalization"/);
      expect(state.result?.citations.map((citation) => citation.ref)).toEqual([
        "cs301.self-attention@1",
        "cs301.cross-attention@1",
      ]);
      // Only released notes alice may read were read at all.
      expect(state.ledger.filter((row) => row.tool === "read_note").every((row) => row.status === "succeeded")).toBe(
        true,
      );
    },
    TIMEOUT_MS,
  );

  it(
    "gives bob, who has no attention notes, an abstention naming the topics and nothing invented",
    async () => {
      const { state } = await agent.run("bob", DIVIDE);
      expect(state.status).toBe("abstained");
      expect(state.result?.citations).toEqual([]);
      expect(state.result?.answer).toContain('"self-attention", "cross-attention", "normalization"');
      expect(state.evidence.filter((item) => item.source_id.startsWith("cs301/"))).toEqual([]);
    },
    TIMEOUT_MS,
  );
});

describe("what the rules planner will not guess", () => {
  it(
    "asks for the start of a session with no date instead of answering from unrelated notes",
    async () => {
      const { state } = await agent.run("alice", "Add a 60 minute study session on attention to my calendar");
      expect(state.status).toBe("needs_human");
      expect(state.termination_reason?.detail).toMatch(/^missing_start: /);
      expect(state.ledger).toEqual([]);
      expect(state.result).toBeNull();
    },
    TIMEOUT_MS,
  );

  it(
    "explains an infeasible plan with the schedule server's capacity_exceeded and writes nothing",
    async () => {
      const { state } = await agent.run(
        "alice",
        "Plan 300 minutes of attention over 2 days, at most 60 a day, starting 2026-12-16 at 18:00 UTC, and put it in my calendar",
      );
      expect(state.status).toBe("needs_human");
      expect(state.ledger.find((row) => row.tool === "calculate_schedule")?.error_code).toBe("capacity_exceeded");
      expect(state.termination_reason?.detail).toMatch(/^capacity_exceeded: /);
      expect(writes(state)).toEqual([]);
    },
    TIMEOUT_MS,
  );

  it(
    "refuses an unknown time zone with a fix hint before any call",
    async () => {
      const { state } = await agent.run(
        "alice",
        "Plan 120 minutes over 3 days starting 2026-12-02 18:00 Mars/Base and put it in my calendar",
      );
      expect(state.status).toBe("needs_human");
      expect(state.termination_reason?.detail).toBe(
        'invalid_request: unknown time zone "Mars/Base"; use an IANA name such as Europe/Berlin, or UTC',
      );
      expect(state.ledger).toEqual([]);
    },
    TIMEOUT_MS,
  );

  it(
    "says a request outside its repertoire needs a model planner",
    async () => {
      const { state } = await agent.run("alice", "Send an email to my professor about attention");
      expect(state.status).toBe("needs_human");
      expect(state.termination_reason?.detail).toContain(
        "this request needs a model planner (set WARRANT_MODEL and an OpenAI-compatible endpoint)",
      );
      expect(state.ledger).toEqual([]);
    },
    TIMEOUT_MS,
  );
});
