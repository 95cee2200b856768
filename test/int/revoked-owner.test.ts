/**
 * Issue 21, item 2, at the execute re-check: a write approved while its owner
 * was listed, whose owner then leaves the principal directory (or moves to
 * another tenant) before it runs, is not executed: execute's owner lookup is
 * the authoritative directory, not the token's claims. The graph is stopped
 * between human_review and execute (`interruptBefore`), so the removal lands
 * exactly there. Real Postgres, the real calendar MCP server.
 */
import { randomUUID } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { buildAgent } from "../../graphs/agent.js";
import { principalDirectory } from "../../src/auth/principal-directory.js";
import type { Principal } from "../../src/auth/principal.js";
import { createRuntime } from "../../src/bootstrap.js";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import type { Database } from "../../src/stores/open-database.js";
import { loadConfig } from "../../src/policy/config.js";
import { runConfigFor } from "../../src/run-config.js";
import { runOptions } from "../../src/graph/routes.js";
import { calls, proposal, scriptedPlanner } from "../support/scripted-planner.js";
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

let database: Database;
let directory: string;
let principalsPath: string;
let shipped: { principals: Principal[] };

const fixture = useSandbox();
const each = useSandbox("each");
beforeAll(async () => {
  database = fixture.add(await openTestDatabase());
}, TIMEOUT);
beforeEach(async () => {
  directory = await each.tempDir("revoked-owner-");
  principalsPath = path.join(directory, "principals.json");
  shipped = JSON.parse(await readFile(settings.principalsPath, "utf8")) as { principals: Principal[] };
  await writeFile(principalsPath, JSON.stringify(shipped));
});

async function calendar(): Promise<ToolHost> {
  const config = await loadConfig(settings.configPath);
  const server = config.servers["calendar"];
  if (server?.transport !== "stdio") throw new Error("the shipped config has no stdio calendar server");
  const tools = Object.fromEntries(
    Object.entries(config.tools).filter(([, contract]) => contract.server === "calendar"),
  );
  const env = { ...server.env, WARRANT_CALENDAR_DATA: path.join(directory, "calendar.json") };
  const host = await connectTools({ ...config, servers: { calendar: { ...server, env } }, tools });
  return each.add(host);
}

async function eventsOf(tools: ToolHost, who: Principal): Promise<unknown[]> {
  const listEvents = tools.catalog().find((tool) => tool.name === "list_events");
  if (!listEvents) throw new Error("list_events is not in the catalog");
  const result = await tools.call(
    listEvents,
    { user_id: who.user_id },
    { timeoutMs: 5_000, principal: who, threadId: "test" },
  );
  if (!result.ok) throw new Error(`list_events failed: ${result.code}`);
  return (result.structured as { events: unknown[] }).events;
}

describe("an approved write whose owner left the directory before execution", () => {
  for (const [label, change] of [
    ["removed", (entries: Principal[]) => entries.filter((entry) => entry.user_id !== "alice")],
    [
      "moved to another tenant",
      (entries: Principal[]) =>
        entries.map((entry) => (entry.user_id === "alice" ? { ...entry, tenant: "acme" } : entry)),
    ],
  ] as const) {
    it(
      `is not executed when the owner is ${label}: principal_revoked, no ledger attempt, no event`,
      async () => {
        const tools = await calendar();
        const write = proposal("create_study_event", EVENT);
        const runtime = createRuntime(
          { ...settings, principalsPath },
          {
            database,
            tools,
            planner: scriptedPlanner([calls(write)]),
            principals: principalDirectory(principalsPath),
          },
        );
        const graph = buildAgent(runtime.host).compile({ checkpointer: database.saver, interruptBefore: ["execute"] });
        const threadId = randomUUID();
        const as = (userId: string) => {
          const principal = shipped.principals.find((entry) => entry.user_id === userId)!;
          return { ...runConfigFor({ threadId, runId: randomUUID(), principal }), ...runOptions(settings.budgets) };
        };
        await graph.invoke({ messages: [new HumanMessage("put it in my calendar")] }, as("alice"));
        // Rita approves while alice is listed: the graph stops right before execute.
        await graph.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), as("rita"));
        const before = await graph.getState({ configurable: { thread_id: threadId } });
        expect(before.next).toEqual(["execute"]);
        expect((before.values as { decisions: { type: string }[] }).decisions.map((d) => d.type)).toEqual(["allow"]);

        await writeFile(principalsPath, JSON.stringify({ principals: change(shipped.principals) }));
        await expect(graph.invoke(null, as("rita"))).rejects.toMatchObject({ code: "principal_revoked" });
        expect(
          (await database.ledger.list(threadId)).filter((row) => row.status !== "denied").map((row) => row.tool),
        ).toEqual([]);
        const alice = shipped.principals.find((entry) => entry.user_id === "alice")!;
        expect(await eventsOf(tools, alice)).toHaveLength(0);
      },
      TIMEOUT,
    );
  }
});
