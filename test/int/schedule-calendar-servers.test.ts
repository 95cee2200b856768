/**
 * End-to-end tests of the schedule and calendar MCP servers: each test talks to
 * a real child process over stdio through the SDK client, as a host would.
 * Every calendar test gets its own temporary store file.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ErrorCode, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { calendarDataPath, storedCalendarEvents } from "./support/calendar.js";
import { type Finished, outputOf } from "../support/child-output.js";
import { textOf } from "../support/mcp.js";
import { useSandbox } from "../support/sandbox.js";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

// Spawning node with the tsx loader takes a second or two on a cold cache.
const SPAWN_TIMEOUT_MS = 30_000;

type ServerName = "schedule" | "calendar";

function serverArgs(server: ServerName, extra: readonly string[] = []): string[] {
  return ["--import", "tsx", path.join("tools", server, "server.ts"), ...extra];
}

/** Runs a server to completion (for --help and start-up failures). */
function runServer(
  server: ServerName,
  args: readonly string[],
  environment: Record<string, string> = {},
): Promise<Finished> {
  return outputOf(
    spawn(process.execPath, serverArgs(server, args), {
      cwd: REPO_ROOT,
      env: { ...getDefaultEnvironment(), ...environment },
      stdio: ["ignore", "pipe", "pipe"],
    }),
  );
}

/** Connects an MCP client to a fresh server process and primes its output-schema validators. */
async function connect(
  server: ServerName,
  args: readonly string[] = [],
  environment: Record<string, string> = {},
): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: serverArgs(server, args),
    cwd: REPO_ROOT,
    env: { ...getDefaultEnvironment(), ...environment },
    stderr: "pipe",
  });
  // Drain stderr so a chatty server can never block on a full pipe.
  transport.stderr?.on("data", () => undefined);
  const client = new Client({ name: `${server}-server-test`, version: "0.0.0" });
  await client.connect(transport);
  await client.listTools();
  return client;
}

/** Calls a tool and normalizes the result type (the SDK's union also covers legacy task results). */
async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  timeout?: number,
): Promise<CallToolResult> {
  const options = timeout === undefined ? undefined : { timeout };
  return (await client.callTool({ name, arguments: args }, undefined, options)) as CallToolResult;
}

/** The rejection of a promise, or a failure if it resolves. */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to reject");
}

describe("schedule server over stdio", () => {
  let client: Client;

  beforeAll(async () => {
    client = await connect("schedule");
  }, SPAWN_TIMEOUT_MS);

  afterAll(async () => {
    await client.close();
  });

  it("lists calculate_schedule with a strict input schema, an output schema and read-only annotations", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["calculate_schedule"]);
    const tool = tools[0];
    expect(tool?.inputSchema.required).toEqual(expect.arrayContaining(["total_minutes", "days", "daily_limit"]));
    expect(tool?.inputSchema["additionalProperties"]).toBe(false);
    expect(tool?.inputSchema.properties?.["days"]).toMatchObject({ type: "integer" });
    expect(tool?.outputSchema?.properties).toHaveProperty("allocation");
    expect(tool?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true, openWorldHint: false });
  });

  it("allocates 121 minutes over 3 days as [41, 40, 40]", async () => {
    const result = await call(client, "calculate_schedule", { total_minutes: 121, days: 3, daily_limit: 60 });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({
      allocation: [41, 40, 40],
      total_minutes: 121,
      days: 3,
      daily_limit: 60,
    });
    expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
  });

  it("returns capacity_exceeded as a JSON error result", async () => {
    const result = await call(client, "calculate_schedule", { total_minutes: 500, days: 3, daily_limit: 60 });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    const payload = JSON.parse(textOf(result)) as { code: string; message: string };
    expect(payload.code).toBe("capacity_exceeded");
    expect(payload.message).toContain("180");
  });

  it.each([
    ["a boolean days", { total_minutes: 121, days: true, daily_limit: 60 }],
    ["a float total", { total_minutes: 120.5, days: 3, daily_limit: 60 }],
    ["a string limit", { total_minutes: 121, days: 3, daily_limit: "60" }],
    ["an extra key", { total_minutes: 121, days: 3, daily_limit: 60, round: "up" }],
  ])("rejects %s with an input validation error and no allocation", async (_label, args) => {
    const result = await call(client, "calculate_schedule", args);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("Input validation error");
    expect(result.structuredContent).toBeUndefined();
    expect(JSON.stringify(result)).not.toContain("allocation");
  });

  it(
    "prints usage and exits 0 for --help",
    async () => {
      const outcome = await runServer("schedule", ["--help"]);
      expect(outcome.code).toBe(0);
      expect(outcome.stdout).toMatch(/Usage:/);
    },
    SPAWN_TIMEOUT_MS,
  );
});

describe("calendar server over stdio", () => {
  let dataPath: string;
  const each = useSandbox("each");

  const event = {
    user_id: "alice",
    idempotency_key: "study-2025-03-03:a",
    title: "Revise attention",
    start: "2025-03-03T18:00:00+01:00",
    end: "2025-03-03T19:30:00+01:00",
    timezone: "Europe/Berlin",
    calendar: "study",
  };
  const status = { user_id: "alice", idempotency_key: event.idempotency_key };

  async function open(environment: Record<string, string> = {}): Promise<Client> {
    const client = await connect("calendar", ["--data", dataPath], environment);
    each.add(client);
    return client;
  }

  const storedEvents = () => storedCalendarEvents(dataPath);

  beforeEach(async () => {
    dataPath = await calendarDataPath(each, "calendar-int-");
  });

  it(
    "lists four tools with the expected annotations",
    async () => {
      const client = await open();
      const { tools } = await client.listTools();
      const byName = new Map(tools.map((tool) => [tool.name, tool]));
      expect([...byName.keys()].sort()).toEqual([
        "create_study_event",
        "export_events_ics",
        "get_write_status",
        "list_events",
      ]);
      expect(byName.get("create_study_event")?.annotations).toMatchObject({
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
      });
      expect(byName.get("list_events")?.annotations?.readOnlyHint).toBe(true);
      expect(byName.get("get_write_status")?.annotations?.readOnlyHint).toBe(true);
      expect(byName.get("export_events_ics")?.annotations?.readOnlyHint).toBe(true);
      for (const tool of tools) expect(tool.inputSchema["additionalProperties"]).toBe(false);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    "creates one event for two calls with one key, and reports write status before and after",
    async () => {
      const client = await open();
      const before = await call(client, "get_write_status", status);
      expect(before.structuredContent).toEqual({ applied: false });

      const first = await call(client, "create_study_event", event);
      expect(first.isError).toBeFalsy();
      const created = first.structuredContent as { event: Record<string, unknown>; replayed: boolean };
      expect(created.replayed).toBe(false);
      expect(created.event).toMatchObject({ ...event, event_id: expect.any(String), created_at: expect.any(String) });
      expect(JSON.parse(textOf(first))).toEqual(first.structuredContent);

      const second = await call(client, "create_study_event", event);
      expect(second.structuredContent).toEqual({ event: created.event, replayed: true });

      expect(await storedEvents()).toHaveLength(1);
      const listed = await call(client, "list_events", { user_id: "alice" });
      expect(listed.structuredContent).toEqual({ events: [created.event] });

      const after = await call(client, "get_write_status", status);
      expect(after.structuredContent).toEqual({ applied: true, event: created.event });
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    "rejects a reused key with different arguments and keeps one event",
    async () => {
      const client = await open();
      await call(client, "create_study_event", event);
      const reused = await call(client, "create_study_event", { ...event, title: "Another title" });
      expect(reused.isError).toBe(true);
      expect(JSON.parse(textOf(reused))).toEqual({
        code: "invalid_arguments",
        message: "idempotency key reused with different arguments",
      });
      expect(await storedEvents()).toHaveLength(1);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    "keeps users apart and reports window errors as invalid_arguments",
    async () => {
      const client = await open();
      await call(client, "create_study_event", event);
      const bob = await call(client, "list_events", { user_id: "bob" });
      expect(bob.structuredContent).toEqual({ events: [] });
      const bobStatus = await call(client, "get_write_status", { ...status, user_id: "bob" });
      expect(bobStatus.structuredContent).toEqual({ applied: false });

      const tooLong = await call(client, "create_study_event", {
        ...event,
        idempotency_key: "study-long-01",
        end: "2025-03-05T18:00:00+01:00",
      });
      expect(tooLong.isError).toBe(true);
      expect(JSON.parse(textOf(tooLong))).toMatchObject({ code: "invalid_arguments" });

      const badZone = await call(client, "create_study_event", {
        ...event,
        idempotency_key: "study-zone-01",
        timezone: "Mars/Base",
      });
      expect(badZone.isError).toBe(true);
      expect(textOf(badZone)).toContain("Input validation error");
      expect(await storedEvents()).toHaveLength(1);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    "uses WARRANT_CALENDAR_DATA when --data is absent",
    async () => {
      const client = await connect("calendar", [], { WARRANT_CALENDAR_DATA: dataPath });
      each.add(client);
      await call(client, "create_study_event", event);
      expect(await storedEvents()).toHaveLength(1);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    "times out without applying anything under WARRANT_CALENDAR_FAIL=timeout",
    async () => {
      const client = await open({ WARRANT_CALENDAR_FAIL: "timeout" });
      const error = await rejectionOf(call(client, "create_study_event", event, 500));
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(ErrorCode.RequestTimeout);
      expect(await storedEvents()).toHaveLength(0);
      const after = await call(client, "get_write_status", status);
      expect(after.structuredContent).toEqual({ applied: false });
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    "applies the write but loses the response under WARRANT_CALENDAR_FAIL=lose_response",
    async () => {
      const failing = await open({ WARRANT_CALENDAR_FAIL: "lose_response" });
      const error = await rejectionOf(call(failing, "create_study_event", event, 10_000));
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(ErrorCode.ConnectionClosed);

      const fresh = await open();
      const reconciled = await call(fresh, "get_write_status", status);
      expect(reconciled.structuredContent).toMatchObject({
        applied: true,
        event: { idempotency_key: event.idempotency_key },
      });
      expect(await storedEvents()).toHaveLength(1);

      // A retry with the same key after reconciliation replays instead of duplicating.
      const retry = await call(fresh, "create_study_event", event);
      expect(retry.structuredContent).toMatchObject({ replayed: true });
      expect(await storedEvents()).toHaveLength(1);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    "applies the write then times out under WARRANT_CALENDAR_FAIL=timeout_after_apply",
    async () => {
      const client = await open({ WARRANT_CALENDAR_FAIL: "timeout_after_apply" });
      const error = await rejectionOf(call(client, "create_study_event", event, 500));
      expect((error as McpError).code).toBe(ErrorCode.RequestTimeout);
      const reconciled = await call(client, "get_write_status", status);
      expect(reconciled.structuredContent).toMatchObject({ applied: true });
      expect(await storedEvents()).toHaveLength(1);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    "prints usage and exits 0 for --help",
    async () => {
      const outcome = await runServer("calendar", ["--help"]);
      expect(outcome.code).toBe(0);
      expect(outcome.stdout).toMatch(/Usage:/);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    "exits 1 with one stderr line for an unknown WARRANT_CALENDAR_FAIL",
    async () => {
      const outcome = await runServer("calendar", ["--data", dataPath], { WARRANT_CALENDAR_FAIL: "explode" });
      expect(outcome.code).toBe(1);
      expect(outcome.stdout).toBe("");
      expect(outcome.stderr.trim().split("\n")).toHaveLength(1);
    },
    SPAWN_TIMEOUT_MS,
  );
});
