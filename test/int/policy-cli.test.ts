/**
 * `npm run policy` on recorded runs in a real Postgres: the recorded run
 * (two reads, a write alice approves, an uncontracted tool denied) is made
 * by a scripted planner against the real calendar MCP server, with its tool
 * definitions pinned; then explain and replay read it back through the CLI
 * as an operator would. check and the server's start refuse a broken config
 * of the test's own with the same lines.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../src/env.js";
import { isConfigError } from "../../src/errors.js";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import { openDatabase, type Database } from "../../src/stores/open-database.js";
import { loadConfig, type WarrantConfig } from "../../src/policy/config.js";
import { startServer } from "../../src/server/server.js";
import type { CallExplanation } from "../../src/trace/explain.js";
import type { ReplayReport } from "../../src/trace/replay.js";
import { settings } from "./support/agent.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";
import { calendarConfig, recordedRun } from "./support/recorded-run.js";

const TIMEOUT_MS = 120_000;
const run = promisify(execFile);

let directory: string;
let test: TestDatabase;
let database: Database;
let tools: ToolHost;
let shipped: WarrantConfig;
let calendar: WarrantConfig;
let recorded: { threadId: string; runId: string };

beforeAll(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), "policy-cli-"));
  test = await createTestDatabase();
  database = await openDatabase({ databaseUrl: test.url, dataDir: directory });
  shipped = await loadConfig(settings.configPath);
  calendar = calendarConfig(shipped, directory);
  // Pinned as a served host pins them: replay decides with the definitions the run saw.
  tools = await connectTools(calendar, undefined, { pins: database.pins });
  recorded = await recordedRun(database, tools);
}, TIMEOUT_MS);
afterAll(async () => {
  await tools?.close();
  await database?.close();
  await test?.drop();
  await rm(directory, { recursive: true, force: true });
});

async function policy(args: string[], env: Record<string, string> = {}) {
  return run(process.execPath, ["--import", "tsx", "src/cli/policy.ts", ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, DATABASE_URL: test.url, WARRANT_DATA_DIR: directory, ...env },
    timeout: 90_000,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: unknown; stdout?: string; stderr?: string }) => ({
      code: typeof error.code === "number" ? error.code : -1,
      stdout: error.stdout ?? "",
      stderr: error.stderr ?? "",
    }),
  );
}

async function configFile(name: string, config: unknown): Promise<string> {
  const file = path.join(directory, name);
  await writeFile(file, JSON.stringify(config));
  return file;
}

describe("explain", () => {
  it(
    "each proposal: the checks it passed, the refusal, the review and what executed",
    async () => {
      const result = await policy(["explain", recorded.runId, "--json"]);
      expect(result.code, result.stderr).toBe(0);
      const calls = JSON.parse(result.stdout) as CallExplanation[];
      expect(calls.map((call) => call.tool)).toEqual([
        "list_events",
        "list_events",
        "create_study_event",
        "delete_everything",
      ]);
      const [read, , write, unknown] = calls;
      expect(read?.passed).toEqual(["offered", "arguments", "run_bound", "authorized", "budget", "repeat"]);
      expect(read?.executions).toMatchObject([{ status: "succeeded" }]);
      expect(write?.decisions[0]).toMatchObject({ node: "authorize", outcome: "review" });
      expect(write?.approvals).toMatchObject([{ outcome: "approve", approver: "alice" }]);
      expect(write?.executions).toMatchObject([{ status: "succeeded" }]);
      expect(unknown?.passed).toEqual([]);
      expect(unknown?.decisions).toMatchObject([{ outcome: "deny", check: "offered", code: "unknown_tool" }]);
      expect(unknown?.executions).toEqual([]);

      const one = await policy(["explain", recorded.runId, unknown?.call_id ?? ""]);
      expect(one.code).toBe(0);
      expect(one.stdout).toContain("refused by offered: unknown_tool");
      expect((await policy(["explain", "no-such-run"])).code).toBe(1);
      expect((await policy(["explain", recorded.runId, "no-such-call"])).code).toBe(1);
      expect((await policy(["explain", "bad id with spaces"])).code).toBe(2);
    },
    TIMEOUT_MS,
  );
});

describe("replay", () => {
  const replayed = async (config: unknown, extra: string[] = []) => {
    const result = await policy([
      "replay",
      recorded.runId,
      "--config",
      await configFile("other.json", config),
      "--json",
      ...extra,
    ]);
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as ReplayReport;
  };

  it(
    "under an identical config: no change",
    async () => {
      const report = await replayed(calendar);
      expect(report).toMatchObject({ runs: [recorded.runId], proposals: 4, changes: [], offers: [] });
    },
    TIMEOUT_MS,
  );

  it(
    "a scope removed from the owner: exactly the proposal that used it, as deny (authorized)",
    async () => {
      const principals = JSON.parse(await readFile(settings.principalsPath, "utf8")) as {
        principals: { user_id: string; scopes: string[] }[];
      };
      for (const entry of principals.principals)
        if (entry.user_id === "alice") entry.scopes = entry.scopes.filter((scope) => scope !== "calendar:write");
      const file = await configFile("principals.json", principals);
      const report = await replayed(calendar, ["--principals", file]);
      expect(report.changes.map((change) => [change.tool, change.after, change.check])).toEqual([
        ["create_study_event", "deny (authorized: tool_not_permitted)", "authorized"],
      ]);
    },
    TIMEOUT_MS,
  );

  it(
    "a principals file that omits the owner: every proposal of theirs is denied, none kept as recorded",
    async () => {
      const principals = JSON.parse(await readFile(settings.principalsPath, "utf8")) as {
        principals: { user_id: string }[];
      };
      const without = { ...principals, principals: principals.principals.filter((entry) => entry.user_id !== "alice") };
      expect(without.principals.length).toBe(principals.principals.length - 1);
      const report = await replayed(calendar, ["--principals", await configFile("no-alice.json", without)]);
      expect(report.proposals).toBe(4);
      // The fourth proposal was refused when it ran (an unlisted tool) and stays refused: no change to report.
      expect(report.changes.length).toBe(3);
      for (const change of report.changes) {
        expect(change.before).not.toMatch(/^deny/);
        expect(change.after).toMatch(/^deny \(authorized: /);
      }
    },
    TIMEOUT_MS,
  );

  it(
    "a tool's risk raised: allow → review",
    async () => {
      const raised = structuredClone(calendar);
      const listEvents = raised.tools["list_events"];
      if (!listEvents) throw new Error("no list_events contract");
      listEvents.risk = "write_reversible";
      const report = await replayed(raised);
      expect(report.changes.map((change) => [change.tool, change.before, change.after])).toEqual([
        ["list_events", "allow", "review (owner_or_reviewer)"],
        ["list_events", "allow", "review (owner_or_reviewer)"],
      ]);
      const text = await policy(["replay", "--last", "5", "--config", await configFile("raised.json", raised)]);
      expect(text.code).toBe(0);
      expect(text.stdout).toContain("list_events: allow → review (owner_or_reviewer)");
      expect(text.stdout).toContain("nothing was executed");
    },
    TIMEOUT_MS,
  );

  it("refuses malformed invocations with a usage error", { timeout: TIMEOUT_MS }, async () => {
    expect((await policy(["replay", recorded.runId])).code).toBe(2);
    expect((await policy(["replay", "--config", settings.configPath])).code).toBe(2);
    expect((await policy(["replay", "--last", "0", "--config", settings.configPath])).code).toBe(2);
    expect((await policy(["replay", "--last", "9999999", "--config", settings.configPath])).code).toBe(2);
    expect((await policy(["nonsense"])).code).toBe(2);
  });
});

describe("check", () => {
  it(
    "catches each listed mistake with its path, and the server refuses to start with the same lines",
    async () => {
      const schemaBroken = structuredClone(calendar) as unknown as { tools: Record<string, { server: string }> };
      const someTool = schemaBroken.tools["list_events"];
      if (someTool) someTool.server = "nowhere";
      const unknownServer = await policy(["check", "--config", await configFile("unknown-server.json", schemaBroken)]);
      expect(unknownServer.code).toBe(1);
      expect(unknownServer.stdout).toMatch(/^error .*: tools\.list_events\.server names unknown server "nowhere"$/m);

      const broken = structuredClone(calendar);
      broken.tools["ghost_tool"] = { ...structuredClone(calendar.tools["list_events"]), remote_name: "ghost" } as never;
      const listEvents = broken.tools["list_events"];
      if (!listEvents) throw new Error("no list_events contract");
      listEvents.run_bound = { case_id: { from_request: "C-\\d+" } };
      broken.review_policy = { ...broken.review_policy, write_reversible: "reviewer_not_owner" };
      const lonely = await configFile("principals-no-reviewer.json", {
        principals: [
          { user_id: "alice", tenant: "uni", role: "student", scopes: ["calendar:read", "calendar:write"], grants: {} },
        ],
      });
      const file = await configFile("broken.json", broken);
      const env = { WARRANT_PRINCIPALS: lonely, WARRANT_PLANNER: "model", WARRANT_MODEL: "unpriced-model" };
      const result = await policy(["check", "--config", file], env);
      expect(result.code).toBe(1);
      const errors = result.stdout.split("\n").filter((line) => line.startsWith("error "));
      const paths = errors.map((line) => line.split(": ")[1]?.split(" ")[0]);
      expect(paths, result.stdout).toEqual([
        "tools.list_events.run_bound.case_id",
        "tools.ghost_tool",
        "review_policy.write_reversible",
      ]);
      expect(result.stdout).toMatch(/^warning .*: models\.unpriced-model no price for the configured model/m);

      const started = startServer({
        settings: {
          ...settings,
          configPath: file,
          principalsPath: lonely,
          planner: "model",
          model: { ...settings.model, name: "unpriced-model" },
          databaseUrl: test.url,
          dataDir: directory,
        },
        log: () => {},
      });
      const refusal = await started.then(
        async (server) => {
          await server.close();
          return undefined;
        },
        (error: unknown) => error,
      );
      expect(isConfigError(refusal)).toBe(true);
      for (const line of errors) expect((refusal as Error).message).toContain(line);

      const fine = await policy(["check", "--config", await configFile("fine.json", calendar)]);
      expect(fine.code, fine.stdout).toBe(0);
    },
    TIMEOUT_MS,
  );
});
