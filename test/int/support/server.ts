/**
 * An API server for integration tests: the real `startServer` on a fresh
 * Postgres database, real MCP child processes, a random port, and SDK
 * clients that authenticate as the dev principals.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ToolMessage } from "@langchain/core/messages";
import { Client } from "@langchain/langgraph-sdk";
import { mintApiToken } from "../../../src/auth/api-token.js";
import { findPrincipal, loadPrincipalDirectory, type Principal } from "../../../src/auth/principal.js";
import { loadSettings } from "../../../src/env.js";
import type { Planner, PlannerInput } from "../../../src/planners/planner.js";
import { decide } from "../../../src/domains/rules-planner.js";
import { startServer, type StartedServer } from "../../../src/server/server.js";
import { databaseCalendarEvents, storedCalendarEvents } from "./calendar.js";
import { fetchAs } from "./http.js";
import { noteApiServer } from "../../support/record-traffic.js";
import { createTestDatabase, type TestDatabase } from "./postgres.js";

export interface TestServer {
  url: string;
  server: StartedServer;
  secret: Uint8Array;
  databaseUrl: string;
  /** The database, to start a second instance on it. */
  database: TestDatabase;
  dataDir: string;
  calendarPath: string;
  principal(user: string): Promise<Principal>;
  token(user: string): Promise<string>;
  client(user: string): Promise<Client>;
  /** Raw fetch with a user's token (or none). */
  fetch(pathname: string, init?: RequestInit & { user?: string | undefined }): Promise<Response>;
  calendarEvents(): Promise<unknown[]>;
  close(): Promise<void>;
}

export const NOTES_QUESTION = "Compare self-attention with cross-attention using my notes";
export const BOOKING_REQUEST = "Book a study block for attention in my calendar";

/**
 * The rules planner, plus one scripted behaviour for requests that say
 * "book": propose one calendar event (a write, so it needs review), then
 * answer once the write's result is observed.
 */
export function bookingPlanner(): Planner {
  return {
    kind: "scripted",
    async plan(input: PlannerInput) {
      if (!/\bbook\b/i.test(input.request))
        return { outcome: decide(input), usage: { input_tokens: 0, output_tokens: 0 } };
      const booked = sinceRequest(input).find((message) => message.name === "create_study_event");
      if (booked) {
        return {
          outcome: { type: "final", answer: "Booked.", citations: [], abstained: false },
          usage: { input_tokens: 0, output_tokens: 0 },
        };
      }
      const args = {
        title: "Attention study block",
        start: "2026-12-01T18:00:00+01:00",
        end: "2026-12-01T19:00:00+01:00",
        timezone: "Europe/Berlin",
        calendar: "study",
      };
      return {
        outcome: {
          type: "tool_calls",
          calls: [
            {
              call_id: `call_book_${randomBytes(6).toString("hex")}`,
              name: "create_study_event",
              raw_arguments: JSON.stringify(args),
            },
          ],
        },
        usage: { input_tokens: 0, output_tokens: 0 },
      };
    },
  };
}

function sinceRequest(input: PlannerInput): ToolMessage[] {
  const result: ToolMessage[] = [];
  for (let index = input.messages.length - 1; index >= 0; index -= 1) {
    const message = input.messages[index]!;
    if (message.getType() === "human") break;
    if (ToolMessage.isInstance(message)) result.push(message);
  }
  return result;
}

export async function startTestServer(
  options: {
    planner?: Planner;
    leaseMs?: number;
    env?: Record<string, string>;
    settings?: Record<string, string>;
    /** The URL the server is given for its database (e.g. through a fault proxy). */
    databaseUrlFor?: (url: string) => string;
    /** A database another test server already uses (two instances sharing one database); left for its owner to drop. */
    database?: TestDatabase;
  } = {},
): Promise<TestServer> {
  const shared = options.database;
  const database = shared ?? (await createTestDatabase());
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "warrant-server-"));
  const secretHex = randomBytes(32).toString("hex");
  const secret = Uint8Array.from(Buffer.from(secretHex, "hex"));
  const calendarPath = path.join(dataDir, "calendar.json");
  // MCP children inherit the environment: each server gets its own calendar file.
  process.env["WARRANT_CALENDAR_DATA"] = calendarPath;
  for (const [key, value] of Object.entries(options.env ?? {})) process.env[key] = value;
  const settings = loadSettings({
    DATABASE_URL: options.databaseUrlFor ? options.databaseUrlFor(database.url) : database.url,
    WARRANT_DATA_DIR: dataDir,
    WARRANT_AUTH_SECRET: secretHex,
    PORT: "0",
    HOST: "127.0.0.1",
    ...options.settings,
  });
  let server: StartedServer;
  try {
    server = await startServer({
      settings,
      overrides: { planner: options.planner ?? bookingPlanner() },
      log: () => undefined,
      heartbeatMs: 100,
      ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
    });
  } catch (error) {
    if (!shared) await database.drop();
    throw error;
  }
  noteApiServer(server.url);
  const directory = await loadPrincipalDirectory(settings.principalsPath);
  const principal = async (user: string) => findPrincipal(directory, user);
  const token = async (user: string) => mintApiToken(secret, await principal(user));
  return {
    url: server.url,
    server,
    secret,
    databaseUrl: database.url,
    database,
    dataDir,
    calendarPath,
    principal,
    token,
    client: async (user) =>
      new Client({ apiUrl: server.url, defaultHeaders: { Authorization: `Bearer ${await token(user)}` } }),
    async fetch(pathname, init = {}) {
      const { user, ...rest } = init;
      return fetchAs(`${server.url}${pathname}`, rest, user ? await token(user) : undefined);
    },
    // With DATABASE_URL the calendar child keeps its events in that database (warrant.config.json passes it on), else in the file.
    calendarEvents: async () => [
      ...(await storedCalendarEvents(calendarPath)),
      ...(await databaseCalendarEvents(database.url)),
    ],
    async close() {
      try {
        await server.close({ drainMs: 2_000 });
      } finally {
        for (const key of Object.keys(options.env ?? {})) delete process.env[key];
        if (!shared) await database.drop();
        await fs.rm(dataDir, { recursive: true, force: true });
      }
    },
  };
}
