/**
 * Issue 12's defects, end to end on a real Postgres with the real calendar
 * MCP server (a child process): a reviewer's edit is decided as the run's
 * owner; the approver must be permitted to decide; an edit passes the repeat
 * check; execution re-checks the owner's current permissions (the principal
 * directory is read again); every effect acts for the owner, whoever resumed.
 * Events are counted with the calendar's own `list_events`.
 */
import { randomUUID } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildAgent } from "../../graphs/agent.js";
import { principalDirectory } from "../../src/auth/principal-directory.js";
import type { Principal } from "../../src/auth/principal.js";
import { createRuntime } from "../../src/bootstrap.js";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import type { Database } from "../../src/stores/open-database.js";
import { loadConfig, type WarrantConfig } from "../../src/policy/config.js";
import type { Decision } from "../../src/policy/decision.js";
import { runConfigFor } from "../../src/run-config.js";
import { runOptions } from "../../src/graph/routes.js";
import type { State } from "../../src/state.js";
import { graphHarness } from "../support/harness.js";
import { useSandbox } from "../support/sandbox.js";
import { calls, proposal, scriptedPlanner, type ScriptStep } from "../support/scripted-planner.js";
import { settings } from "./support/agent.js";
import { openTestDatabase } from "./support/postgres.js";

const TIMEOUT = 90_000;
const EVENT = {
  title: "Revise attention",
  start: "2026-12-02T18:00:00Z",
  end: "2026-12-02T19:00:00Z",
  timezone: "UTC",
  calendar: "study",
};
const LATER = { ...EVENT, start: "2026-12-03T18:00:00Z", end: "2026-12-03T19:00:00Z" };
const DONE: ScriptStep = { type: "final", answer: "done", citations: [], abstained: false };

let shipped: WarrantConfig;
let database: Database;
let directory: string;
let principalsPath: string;
const files = useSandbox();
const each = useSandbox("each");

beforeAll(async () => {
  shipped = await loadConfig(settings.configPath);
  database = files.add(await openTestDatabase());
}, TIMEOUT);
beforeEach(async () => {
  directory = await each.tempDir("policy-pipeline-");
  principalsPath = path.join(directory, "principals.json");
  // A copy of the dev directory the test may change while a review waits.
  await writeFile(principalsPath, await readFile(settings.principalsPath, "utf8"));
});

/** The shipped calendar server and its contracts only, its store in this test's folder. */
async function calendar(switches: Record<string, string> = {}): Promise<ToolHost> {
  const server = shipped.servers["calendar"];
  if (server?.transport !== "stdio") throw new Error("the shipped config has no stdio calendar server");
  const tools = Object.fromEntries(
    Object.entries(shipped.tools)
      .filter(([, contract]) => contract.server === "calendar")
      .map(([name, contract]) => [name, name === "create_study_event" ? { ...contract, timeout_ms: 1_500 } : contract]),
  );
  const env = { ...server.env, WARRANT_CALENDAR_DATA: path.join(directory, "calendar.json"), ...switches };
  const host = await connectTools({ ...shipped, servers: { calendar: { ...server, env } }, tools });
  return each.add(host);
}

async function principals(): Promise<Map<string, Principal>> {
  const parsed = JSON.parse(await readFile(principalsPath, "utf8")) as { principals: Principal[] };
  return new Map(parsed.principals.map((entry) => [entry.user_id, entry]));
}

async function revoke(userId: string, scope: string): Promise<void> {
  const parsed = JSON.parse(await readFile(principalsPath, "utf8")) as { principals: Principal[] };
  for (const entry of parsed.principals)
    if (entry.user_id === userId) entry.scopes = entry.scopes.filter((value) => value !== scope);
  await writeFile(principalsPath, JSON.stringify(parsed));
}

/** Events a user has, asked through the calendar server itself. */
async function eventsOf(tools: ToolHost, userId: string): Promise<Array<Record<string, unknown>>> {
  const listEvents = tools.catalog().find((tool) => tool.name === "list_events");
  if (!listEvents) throw new Error("list_events is not in the catalog");
  const who = (await principals()).get(userId);
  if (!who) throw new Error(`no principal ${userId}`);
  const result = await tools.call(
    listEvents,
    { user_id: userId },
    { timeoutMs: 5_000, principal: who, threadId: "test" },
  );
  if (!result.ok) throw new Error(`list_events failed: ${result.code}`);
  return (result.structured as { events: Array<Record<string, unknown>> }).events;
}

async function principalOf(userId: string): Promise<Principal> {
  const principal = (await principals()).get(userId);
  if (!principal) throw new Error(`no principal ${userId}`);
  return principal;
}

function harness(tools: ToolHost, steps: ScriptStep[], budgets: Partial<typeof settings.budgets> = {}) {
  const planner = scriptedPlanner(steps);
  const runtime = createRuntime(
    { ...settings, principalsPath, budgets: { ...settings.budgets, ...budgets } },
    { database, tools, planner, principals: principalDirectory(principalsPath) },
  );
  const h = graphHarness(runtime.host, {
    principal: { user_id: "nobody", tenant: "none", role: "none", scopes: [], grants: {} },
    checkpointer: database.saver,
    threadId: randomUUID(),
    runIds: true,
  });
  return {
    planner,
    threadId: h.threadId,
    start: async (userId = "alice") => h.start("put it in my calendar", await principalOf(userId)),
    resume: async (userId: string, value: unknown) => h.resume(value, await principalOf(userId)),
    state: h.values,
    pending: async () => (await h.interrupts()) as unknown[],
    ledger: () => database.ledger.list(h.threadId),
  };
}

const decisionOf = (state: State, callId: string): Decision | undefined =>
  state.decisions.find((decision) => decision.call_id === callId);

describe("a reviewer's decision", () => {
  it(
    "an edit by rita (who may not write calendars) is decided as alice, the owner, and creates alice's event",
    async () => {
      const tools = await calendar();
      const write = proposal("create_study_event", EVENT);
      const h = harness(tools, [calls(write), DONE]);
      await h.start("alice");
      expect((await h.state()).status).toBe("waiting_approval");
      await h.resume("rita", {
        decisions: [{ type: "edit", edited_action: { name: "create_study_event", args: LATER } }],
      });
      const state = await h.state();
      expect(decisionOf(state, write.call_id)).toMatchObject({
        type: "allow",
        model_args: LATER,
        review: { approver: "rita", outcome: "edit" },
      });
      const events = await eventsOf(tools, "alice");
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ start: LATER.start });
      expect(await eventsOf(tools, "rita")).toHaveLength(0);
      const rows = await h.ledger();
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ status: "succeeded", owner: "alice", approved_by: "rita" });
      const approvals = await database.approvals.list(h.threadId);
      expect(approvals).toMatchObject([{ outcome: "edit", approver: "rita", owner: "alice" }]);
      h.planner.assertDone();
    },
    TIMEOUT,
  );

  it(
    "bob, another student of the tenant, may not decide alice's review: asked again, nothing written",
    async () => {
      const tools = await calendar();
      const write = proposal("create_study_event", EVENT);
      const h = harness(tools, [calls(write), DONE]);
      await h.start("alice");
      await h.resume("bob", { decisions: [{ type: "approve" }] });
      const pending = (await h.pending()) as Array<{ error?: { code: string } }>;
      expect(pending).toHaveLength(1);
      expect(pending[0]?.error?.code).toBe("approver_not_permitted");
      expect(await h.ledger()).toHaveLength(0);
      expect(await eventsOf(tools, "alice")).toHaveLength(0);
      // The owner can still decide.
      await h.resume("alice", { decisions: [{ type: "approve" }] });
      expect(await eventsOf(tools, "alice")).toHaveLength(1);
      h.planner.assertDone();
    },
    TIMEOUT,
  );

  it(
    "an edit goes through the repeat check: editing into an action already made in the run is repeated_action, nothing runs",
    async () => {
      const tools = await calendar();
      const first = proposal("create_study_event", EVENT);
      const second = proposal("create_study_event", LATER);
      const h = harness(tools, [calls(first), calls(second), DONE], { max_repeats: 1 });
      await h.start("alice");
      await h.resume("alice", { decisions: [{ type: "approve" }] });
      expect((await h.state()).status).toBe("waiting_approval");
      await h.resume("alice", {
        decisions: [{ type: "edit", edited_action: { name: "create_study_event", args: EVENT } }],
      });
      const state = await h.state();
      expect(decisionOf(state, second.call_id)).toMatchObject({
        type: "deny",
        code: "repeated_action",
        check: "repeat",
      });
      expect((await h.ledger()).filter((row) => row.call_id === second.call_id)).toHaveLength(0);
      expect(await eventsOf(tools, "alice")).toHaveLength(1);
    },
    TIMEOUT,
  );
});

describe("execution re-checks the owner's current permissions", () => {
  it(
    // Issue 24: a missing scope is `tool_not_permitted` from the `authorized` check at every stage (it was
    // `access_denied` with no check name at execution, unlike the same cause at authorize).
    "a calendar:write scope revoked while the approval waited is tool_not_permitted (authorized) at execution: ledger row denied, no event",
    async () => {
      const tools = await calendar();
      const write = proposal("create_study_event", EVENT);
      const h = harness(tools, [calls(write), DONE]);
      await h.start("alice");
      await revoke("alice", "calendar:write");
      await h.resume("alice", { decisions: [{ type: "approve" }] });
      const rows = await h.ledger();
      expect(rows.map((row) => [row.tool, row.status, row.error_code])).toEqual([
        ["create_study_event", "denied", "tool_not_permitted"],
      ]);
      const state = await h.state();
      expect(state.call_results).toMatchObject([{ call_id: write.call_id, ok: false, code: "tool_not_permitted" }]);
      expect(state.denials).toMatchObject([
        { call_id: write.call_id, code: "tool_not_permitted", check: "authorized", stage: "execute" },
      ]);
      expect(await eventsOf(tools, "alice")).toHaveLength(0);
    },
    TIMEOUT,
  );

  it(
    "a write rita approved and whose answer was lost is reconciled as alice (the owner), not as rita: one event, no resend",
    async () => {
      const tools = await calendar({ WARRANT_CALENDAR_FAIL: "timeout_after_apply", WARRANT_CALENDAR_FAIL_COUNT: "1" });
      const write = proposal("create_study_event", EVENT);
      const h = harness(tools, [calls(write), DONE]);
      await h.start("alice");
      await h.resume("rita", { decisions: [{ type: "approve" }] });
      const rows = await h.ledger();
      expect(rows.map((row) => [row.tool, row.attempt, row.status, row.owner])).toEqual([
        ["create_study_event", 1, "succeeded", "alice"],
        ["get_write_status", 2, "succeeded", "alice"],
      ]);
      expect(await eventsOf(tools, "alice")).toHaveLength(1);
      expect((await h.state()).status).toBe("completed");
    },
    TIMEOUT,
  );
});

describe("one run id", () => {
  it(
    "the invocation's run id is state.run.run_id and every ledger, approval and audit row's",
    async () => {
      const tools = await calendar();
      const write = proposal("create_study_event", EVENT);
      const hidden = proposal("move_everything", {});
      const planner = scriptedPlanner([calls(write, hidden), DONE]);
      const runtime = createRuntime(
        { ...settings, principalsPath },
        { database, tools, planner, principals: principalDirectory(principalsPath) },
      );
      const graph = buildAgent(runtime.host).compile({ checkpointer: database.saver });
      const threadId = randomUUID();
      const runId = randomUUID();
      const alice = (await principals()).get("alice") as Principal;
      await graph.invoke(
        { messages: [new HumanMessage("calendar")] },
        { ...runConfigFor({ threadId, runId, principal: alice }), ...runOptions(settings.budgets) },
      );
      // The resume is another invocation with its own id: it continues the same run.
      await graph.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), {
        ...runConfigFor({ threadId, runId: randomUUID(), principal: alice }),
        ...runOptions(settings.budgets),
      });
      const state = (await graph.getState({ configurable: { thread_id: threadId } })).values as State;
      expect(state.run?.run_id).toBe(runId);
      const ledger = await database.ledger.list(threadId);
      expect(ledger.length).toBeGreaterThan(0);
      expect(new Set(ledger.map((row) => row.run_id))).toEqual(new Set([runId]));
      expect(new Set((await database.approvals.list(threadId)).map((row) => row.run_id))).toEqual(new Set([runId]));
      const audit = await database.audit.list(threadId);
      expect(audit.map((event) => event.kind).sort()).toEqual(["denied", "run_ended"]);
      expect(new Set(audit.map((event) => event.run_id))).toEqual(new Set([runId]));
      expect(audit.find((event) => event.kind === "denied")).toMatchObject({
        code: "unknown_tool",
        detail: expect.stringMatching(/^offered: /),
      });
    },
    TIMEOUT,
  );
});
