/**
 * The calendar server on Postgres: several calendar processes on one
 * database (as several API servers each run their own calendar child) keep
 * exactly one event per (user, idempotency key). Real child processes over
 * stdio, a real throwaway database; assertions on rows and codes.
 */
import path from "node:path";
import { spawn } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ErrorCode, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../src/env.js";
import { databaseCalendarEvents } from "./support/calendar.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";

const TIMEOUT_MS = 180_000;
const SERVER = ["--import", "tsx", path.join("tools", "calendar", "server.ts")];

const event = {
  user_id: "alice",
  idempotency_key: "study-2026-12-02:attention",
  title: "Study attention",
  description: "Topic: attention. Notes: cs301/attention-basics, cs301/transformers.",
  start: "2026-12-02T18:00:00Z",
  end: "2026-12-02T19:00:00Z",
  timezone: "UTC",
  calendar: "study",
};

let database: TestDatabase;
const clients: Client[] = [];

beforeEach(async () => {
  database = await createTestDatabase();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await database.drop();
});

/** A calendar process on the test database (no store file: the URL comes from the environment, as the host passes it). */
async function open(extra: Record<string, string> = {}): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: SERVER,
    cwd: REPO_ROOT,
    env: {
      ...getDefaultEnvironment(),
      WARRANT_CALENDAR_DATABASE_URL: database.url,
      WARRANT_CALENDAR_DATA: "/nonexistent/never-written.json",
      ...extra,
    },
    stderr: "pipe",
  });
  transport.stderr?.on("data", () => undefined);
  const client = new Client({ name: "calendar-postgres-test", version: "0.0.0" });
  await client.connect(transport);
  await client.listTools();
  clients.push(client);
  return client;
}

async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  timeout?: number,
): Promise<CallToolResult> {
  return (await client.callTool(
    { name, arguments: args },
    undefined,
    timeout === undefined ? undefined : { timeout },
  )) as CallToolResult;
}

function errorCodeOf(result: CallToolResult): string | undefined {
  const first = result.content[0];
  return result.isError && first?.type === "text" ? (JSON.parse(first.text) as { code: string }).code : undefined;
}

const rows = () => databaseCalendarEvents(database.url);

describe("calendar on Postgres, several processes", () => {
  it(
    "two processes receiving the same write with the same key at once create one row",
    async () => {
      const [a, b] = await Promise.all([open(), open()]);
      // Several rounds, each with a fresh key, so the race is really exercised.
      for (let round = 0; round < 5; round += 1) {
        const args = { ...event, idempotency_key: `race-${round}-attention` };
        const [first, second] = await Promise.all([
          call(a, "create_study_event", args),
          call(b, "create_study_event", args),
        ]);
        const results = [first.structuredContent, second.structuredContent] as {
          event: { event_id: string };
          replayed: boolean;
        }[];
        expect(results.map((result) => result.replayed).sort()).toEqual([false, true]);
        expect(results[0]!.event.event_id).toBe(results[1]!.event.event_id);
      }
      const stored = await rows();
      expect(stored).toHaveLength(5);
      expect(new Set(stored.map((row) => row["idempotency_key"])).size).toBe(5);
    },
    TIMEOUT_MS,
  );

  it(
    "different keys give two rows; the same key with other arguments is invalid_arguments; status and list read the same table",
    async () => {
      const [a, b] = await Promise.all([open(), open()]);
      const [one, two] = await Promise.all([
        call(a, "create_study_event", event),
        call(b, "create_study_event", {
          ...event,
          idempotency_key: "study-2026-12-03:attention",
          start: "2026-12-03T18:00:00Z",
          end: "2026-12-03T19:00:00Z",
        }),
      ]);
      expect([one.isError, two.isError]).toEqual([undefined, undefined]);
      expect(await rows()).toHaveLength(2);

      const reused = await call(b, "create_study_event", { ...event, title: "Something else" });
      expect(errorCodeOf(reused)).toBe("invalid_arguments");
      const otherDescription = await call(a, "create_study_event", {
        ...event,
        description: "Topic: attention. Notes: none.",
      });
      expect(errorCodeOf(otherDescription)).toBe("invalid_arguments");
      expect(await rows()).toHaveLength(2);

      const status = await call(b, "get_write_status", { user_id: "alice", idempotency_key: event.idempotency_key });
      expect(status.structuredContent).toMatchObject({
        applied: true,
        event: { title: event.title, description: event.description, start: event.start },
      });
      expect(
        (await call(b, "get_write_status", { user_id: "bob", idempotency_key: event.idempotency_key }))
          .structuredContent,
      ).toEqual({ applied: false });

      const listed = (await call(a, "list_events", { user_id: "alice", from: "2026-12-02T18:30:00+00:00" }))
        .structuredContent as { events: { start: string }[] };
      expect(listed.events.map((item) => item.start)).toEqual(["2026-12-02T18:00:00Z", "2026-12-03T18:00:00Z"]);
      expect(
        ((await call(a, "list_events", { user_id: "bob" })).structuredContent as { events: unknown[] }).events,
      ).toEqual([]);

      const exported = (await call(b, "export_events_ics", { user_id: "alice" })).structuredContent as {
        ics: string;
        event_count: number;
      };
      expect(exported.event_count).toBe(2);
      expect(exported.ics.match(/BEGIN:VEVENT/g)).toHaveLength(2);
      expect(exported.ics).toContain("DTSTART:20261202T180000Z");
      expect(exported.ics).toContain("SUMMARY:Study attention");
    },
    TIMEOUT_MS,
  );

  it(
    "keeps the test switches: timeout writes nothing, lose_response writes and the key then replays",
    async () => {
      const timingOut = await open({ WARRANT_CALENDAR_FAIL: "timeout" });
      const timeout = await call(timingOut, "create_study_event", event, 500).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect((timeout as McpError).code).toBe(ErrorCode.RequestTimeout);
      expect(await rows()).toHaveLength(0);

      const losing = await open({ WARRANT_CALENDAR_FAIL: "lose_response" });
      const lost = await call(losing, "create_study_event", event, 10_000).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(lost).toBeInstanceOf(McpError);
      expect(await rows()).toHaveLength(1);
      const fresh = await open();
      expect(
        (await call(fresh, "get_write_status", { user_id: "alice", idempotency_key: event.idempotency_key }))
          .structuredContent,
      ).toMatchObject({ applied: true });
      expect((await call(fresh, "create_study_event", event)).structuredContent).toMatchObject({ replayed: true });
      expect(await rows()).toHaveLength(1);
    },
    TIMEOUT_MS,
  );

  it(
    "refuses to start, with one stderr line, when the database cannot be reached",
    async () => {
      const child = spawn(process.execPath, SERVER, {
        cwd: REPO_ROOT,
        env: { ...getDefaultEnvironment(), WARRANT_CALENDAR_DATABASE_URL: "postgres://postgres@127.0.0.1:1/none" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
      const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
      expect(code).toBe(1);
      expect(stderr.trim().split("\n")).toHaveLength(1);
      expect(stderr).toMatch(/cannot start/);
    },
    TIMEOUT_MS,
  );
});
