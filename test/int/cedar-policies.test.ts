/**
 * Issue 40: rules the JSON contracts cannot say, in Cedar, enforced through
 * the real agent graph (real Postgres, the real calendar and schedule MCP
 * servers) with `policy.engine: "cedar"`: an argument-based limit, a time
 * window in the owner's time zone, and a policy changed while a review
 * waited, applied at execute's re-check (the graph stops between
 * human_review and execute, so the change lands exactly there).
 */
import { randomUUID } from "node:crypto";
import { copyFile, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { buildAgent } from "../../graphs/agent.js";
import type { Principal } from "../../src/auth/principal.js";
import { createRuntime } from "../../src/bootstrap.js";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import type { Database } from "../../src/stores/open-database.js";
import { loadConfig } from "../../src/policy/config.js";
import { runConfigFor } from "../../src/run-config.js";
import { runOptions } from "../../src/graph/routes.js";
import type { State } from "../../src/state.js";
import { calls, proposal, scriptedPlanner } from "../support/scripted-planner.js";
import { settings } from "./support/agent.js";
import { openTestDatabase } from "./support/postgres.js";

const TIMEOUT = 120_000;
const DONE = { type: "final" as const, answer: "done", citations: [], abstained: false };
const A = "Warrant::Action";
const EVENT = {
  title: "Revise attention",
  start: "2026-12-02T18:00:00Z",
  end: "2026-12-02T19:00:00Z",
  timezone: "UTC",
  calendar: "study",
};
/** 10:00 in Berlin (alice's zone below), 09:00 UTC. */
const MORNING = Date.parse("2026-12-02T09:00:00Z");
/** 23:30 in Berlin. */
const NIGHT = Date.parse("2026-12-02T22:30:00Z");

const RULES = `
@id("study.schedule")
permit (principal, action == ${A}::"calculate_schedule", resource);

// An argument-based limit: no plan of more than 120 minutes a day.
@id("schedule.daily-limit")
@code("access_denied")
forbid (principal, action == ${A}::"calculate_schedule", resource)
when { context.args has daily_limit && context.args.daily_limit > 120 };

@id("study.calendar.read")
permit (principal, action in [${A}::"list_events", ${A}::"get_write_status"], resource)
when { principal.scopes.contains("calendar:read") };

@id("study.calendar.write")
permit (principal, action == ${A}::"create_study_event", resource)
when { principal.scopes.contains("calendar:write") };

// A time window: students write to their calendar between 07:00 and 23:00 their time.
@id("calendar.hours")
@code("access_denied")
forbid (principal in Warrant::Role::"student", action == ${A}::"create_study_event", resource)
when { context.time.hour < 7 || context.time.hour >= 23 };
`;

let database: Database;
let directory: string;
let configPath: string;
let principalsPath: string;
let policyFile: string;
let alice: Principal;

const fixture = useSandbox();
const each = useSandbox("each");
beforeAll(async () => {
  database = fixture.add(await openTestDatabase());
}, TIMEOUT);
beforeEach(async () => {
  directory = await each.tempDir("cedar-policies-");
  const shipped = JSON.parse(await readFile(settings.configPath, "utf8")) as Record<string, unknown>;
  await copyFile(path.resolve("policies/warrant.cedarschema"), path.join(directory, "warrant.cedarschema"));
  // Who may approve is a Cedar rule too (the schema has the `approve` action): the shipped review policy.
  await copyFile(path.resolve("policies/review.cedar"), path.join(directory, "review.cedar"));
  policyFile = path.join(directory, "rules.cedar");
  await writeFile(policyFile, RULES);
  configPath = path.join(directory, "warrant.config.json");
  await writeFile(
    configPath,
    JSON.stringify({
      ...shipped,
      policy: { engine: "cedar", cedar: { schema: "warrant.cedarschema", policies: ["rules.cedar", "review.cedar"] } },
    }),
  );
  const principals = JSON.parse(await readFile(settings.principalsPath, "utf8")) as { principals: Principal[] };
  // Alice lives in Berlin: the window is her local time.
  principals.principals = principals.principals.map((entry) =>
    entry.user_id === "alice" ? { ...entry, time_zone: "Europe/Berlin" } : entry,
  );
  alice = principals.principals.find((entry) => entry.user_id === "alice") as Principal;
  principalsPath = path.join(directory, "principals.json");
  await writeFile(principalsPath, JSON.stringify(principals));
});

async function tools(): Promise<ToolHost> {
  const config = await loadConfig(configPath);
  const servers = Object.fromEntries(
    Object.entries(config.servers)
      .filter(([name]) => name === "calendar" || name === "schedule")
      .map(([name, server]) => [
        name,
        server.transport === "stdio" && name === "calendar"
          ? { ...server, env: { ...server.env, WARRANT_CALENDAR_DATA: path.join(directory, "calendar.json") } }
          : server,
      ]),
  );
  const contracts = Object.fromEntries(
    Object.entries(config.tools).filter(([, contract]) => Object.hasOwn(servers, contract.server)),
  );
  const host = await connectTools({ ...config, servers, tools: contracts });
  return each.add(host);
}

async function eventsOf(host: ToolHost): Promise<unknown[]> {
  const listEvents = host.catalog().find((tool) => tool.name === "list_events");
  if (!listEvents) throw new Error("list_events is not in the catalog");
  const result = await host.call(
    listEvents,
    { user_id: alice.user_id },
    { timeoutMs: 5_000, principal: alice, threadId: "test" },
  );
  if (!result.ok) throw new Error(`list_events failed: ${result.code}`);
  return (result.structured as { events: unknown[] }).events;
}

function graphFor(host: ToolHost, planned: Parameters<typeof scriptedPlanner>[0], now: () => number) {
  const runtime = createRuntime(
    { ...settings, configPath, principalsPath },
    { database, tools: host, planner: scriptedPlanner(planned), now },
  );
  return buildAgent(runtime.host).compile({ checkpointer: database.saver, interruptBefore: ["execute"] });
}

function as(threadId: string, principal: Principal) {
  return { ...runConfigFor({ threadId, runId: randomUUID(), principal }), ...runOptions(settings.budgets) };
}

async function rita(): Promise<Principal> {
  const principals = JSON.parse(await readFile(principalsPath, "utf8")) as { principals: Principal[] };
  return principals.principals.find((entry) => entry.user_id === "rita") as Principal;
}

describe("Cedar rules the JSON config cannot express, end to end", () => {
  it(
    "an argument-based limit: a plan over 120 minutes a day is refused, naming the policy; 120 is allowed",
    async () => {
      const host = await tools();
      const over = proposal("calculate_schedule", { total_minutes: 600, days: 4, daily_limit: 150 });
      const within = proposal("calculate_schedule", { total_minutes: 240, days: 2, daily_limit: 120 });
      const graph = graphFor(host, [calls(over, within)], () => MORNING);
      const threadId = randomUUID();
      await graph.invoke({ messages: [new HumanMessage("plan my week")] }, as(threadId, alice));
      const state = (await graph.getState({ configurable: { thread_id: threadId } })).values as State;
      const decisions = state.decisions ?? [];
      expect(decisions.map((decision) => decision.type)).toEqual(["deny", "allow"]);
      expect(decisions[0]).toMatchObject({
        check: "authorized",
        code: "access_denied",
        policies: ["schedule.daily-limit"],
      });
    },
    TIMEOUT,
  );

  it(
    "a time window in the owner's zone: the same write is refused at 23:30 Berlin and asks for review at 10:00",
    async () => {
      const host = await tools();
      const night = graphFor(host, [calls(proposal("create_study_event", EVENT)), DONE], () => NIGHT);
      const nightThread = randomUUID();
      await night.invoke({ messages: [new HumanMessage("put it in my calendar")] }, as(nightThread, alice));
      const refused = (await night.getState({ configurable: { thread_id: nightThread } })).values as State;
      expect(refused.denials).toEqual([
        expect.objectContaining({
          stage: "propose",
          check: "authorized",
          code: "access_denied",
          policies: ["calendar.hours"],
        }),
      ]);
      const day = graphFor(host, [calls(proposal("create_study_event", EVENT))], () => MORNING);
      const dayThread = randomUUID();
      await day.invoke({ messages: [new HumanMessage("put it in my calendar")] }, as(dayThread, alice));
      const waiting = (await day.getState({ configurable: { thread_id: dayThread } })).values as State;
      expect(waiting.decisions?.map((decision) => decision.type)).toEqual(["review"]);
    },
    TIMEOUT,
  );

  it(
    "a policy changed while a review waited applies at execute: the approved write is not run",
    async () => {
      const host = await tools();
      const graph = graphFor(host, [calls(proposal("create_study_event", EVENT)), DONE], () => MORNING);
      const threadId = randomUUID();
      await graph.invoke({ messages: [new HumanMessage("put it in my calendar")] }, as(threadId, alice));
      await graph.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), as(threadId, await rita()));
      const before = await graph.getState({ configurable: { thread_id: threadId } });
      expect(before.next).toEqual(["execute"]);
      // The security team withdraws calendar writes while the approved call waits to run.
      await writeFile(
        policyFile,
        `${RULES}\n@id("calendar.freeze")\n@code("access_denied")\nforbid (principal, action == ${A}::"create_study_event", resource);\n`,
      );
      await graph.invoke(null, as(threadId, await rita()));
      const after = (await graph.getState({ configurable: { thread_id: threadId } })).values as State;
      expect(after.denials?.filter((denial) => denial.stage === "execute")).toEqual([
        expect.objectContaining({ check: "authorized", code: "access_denied", policies: ["calendar.freeze"] }),
      ]);
      expect(await eventsOf(host)).toHaveLength(0);
    },
    TIMEOUT,
  );
});
