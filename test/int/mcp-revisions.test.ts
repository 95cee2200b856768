/**
 * Both MCP revisions in one host, with real server processes: the shipped
 * calendar and notes servers answer 2025-11-25 (v1 SDK) and 2026-07-28 (v2
 * SDK) in one process; the host negotiates per server (or follows the
 * config's pin). Every guarantee below runs on both revisions: an approved
 * write and a read through the graph, resources and prompts with the caller
 * in `_meta`, and a definition changed mid-session (`tools/list_changed`)
 * withheld against its pin. Assertions are on the negotiated revision, the
 * events in the calendar's store file, ledger rows, pins and error codes.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { negotiatedStdioConnection } from "../../src/mcp/negotiation.js";
import { isNotModern, modernStdioConnection } from "../../src/mcp/modern-session.js";
import { connectTools, type CallOptions, type ToolHost } from "../../src/mcp/tool-host.js";
import { toolStatus } from "../../src/mcp/tool-report.js";
import { loadConfig, parseConfig, type ServerConfig, type WarrantConfig } from "../../src/policy/config.js";
import { calls, proposal, scriptedPlanner, type ScriptStep } from "../support/scripted-planner.js";
import { agentHarness, principal, settings } from "./support/agent.js";
import { APPROVE, EVENT, REQUEST, storedCalendarEvents } from "./support/calendar.js";
import { backends, useBackend } from "./support/postgres.js";

const DONE: ScriptStep = { type: "final", answer: "Done.", citations: [], abstained: false };
const TEST_TIMEOUT_MS = 120_000;
const REVISIONS = ["2026-07-28", "2025-11-25"] as const;
const NO_EVENTS = { down: () => undefined, suspect: () => undefined, toolsChanged: () => undefined };

let shipped: WarrantConfig;
beforeAll(async () => {
  shipped = await loadConfig(settings.configPath);
});

/** The shipped calendar server on `dataPath`; `bare` drops the shipped environment (host placeholders only connectTools fills). */
function calendarServer(dataPath: string, env: Record<string, string>, protocol?: string, bare = false): ServerConfig {
  const server = shipped.servers["calendar"];
  if (server?.transport !== "stdio") throw new Error("the shipped config has no stdio calendar server");
  return {
    ...server,
    env: { ...(bare ? {} : server.env), WARRANT_CALENDAR_DATA: dataPath, ...env },
    ...(protocol ? { protocol: protocol as "2026-07-28" } : {}),
  };
}

function calendarConfig(server: ServerConfig): WarrantConfig {
  const tools = Object.fromEntries(
    Object.entries(shipped.tools).filter(([, contract]) => contract.server === "calendar"),
  );
  return { ...shipped, servers: { calendar: server }, tools };
}

describe("the protocol setting in the config", () => {
  const base = { transport: "stdio", command: "node" };
  const parse = (server: Record<string, unknown>) => () =>
    parseConfig(JSON.stringify({ servers: { s: { ...base, ...server } }, tools: {} }), "test config");

  it("accepts both revisions and no setting", () => {
    for (const protocol of [...REVISIONS, undefined]) expect(parse({ protocol })).not.toThrow();
  });

  it.each([["2024-11-05"], ["latest"], [""], [20260728], [null], [["2026-07-28"]], ["x".repeat(10_000)]])(
    "refuses case %# with a typed config error",
    (protocol) => {
      expect(parse({ protocol })).toThrow(expect.objectContaining({ name: "ConfigError" }));
    },
  );

  it("accepts both revisions on http, client_credentials and authorization_code servers", () => {
    const http = { transport: "http", url: "http://127.0.0.1:1/mcp", audience: "a" };
    const parseHttp = (server: Record<string, unknown>) => () =>
      parseConfig(JSON.stringify({ servers: { s: { ...http, ...server } }, tools: {} }), "test config");
    const auth = { type: "oauth", grant: "client_credentials", client_id: "warrant", client_secret: "${OAUTH_SECRET}" };
    for (const protocol of REVISIONS) {
      expect(parseHttp({ protocol })).not.toThrow();
      expect(parseHttp({ auth, protocol })).not.toThrow();
    }
    const consent = { ...auth, grant: "authorization_code", redirect_uri: "https://warrant.example/oauth/callback" };
    for (const protocol of REVISIONS) expect(parseHttp({ auth: consent, protocol })).not.toThrow();
  });
});

describe("negotiating a stdio server's revision", () => {
  let directory: string;
  beforeEach(async () => {
    directory = await mkdtemp(path.join(os.tmpdir(), "mcp-revisions-"));
  });
  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it.each([
    ["both revisions, unpinned", "", undefined, "2026-07-28"],
    ["2026-07-28 only, unpinned", "2026-07-28", undefined, "2026-07-28"],
    ["2025-11-25 only (a v1-only server), unpinned", "2025-11-25", undefined, "2025-11-25"],
    ["both revisions, pinned to 2025-11-25", "", "2025-11-25", "2025-11-25"],
    ["both revisions, pinned to 2026-07-28", "", "2026-07-28", "2026-07-28"],
  ])(
    "speaks the revision negotiated or pinned to a server serving %s",
    async (_label, revisions, protocol, expected) => {
      const server = calendarServer(
        path.join(directory, "c.json"),
        { WARRANT_MCP_REVISIONS: revisions },
        protocol,
        true,
      );
      if (server.transport !== "stdio") throw new Error("stdio expected");
      const connection = negotiatedStdioConnection(server, NO_EVENTS);
      try {
        const opened = await connection.open();
        expect(connection.revision()).toBe(expected);
        expect(opened.info).toEqual({ name: "warrant-calendar", version: "0.1.0" });
        expect(opened.tools.map((tool) => tool.name).sort()).toEqual([
          "create_study_event",
          "export_events_ics",
          "get_write_status",
          "list_events",
        ]);
        await connection.probe();
      } finally {
        await connection.shutdown();
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "fails a server pinned to 2026-07-28 that does not speak it, as not modern (no silent fallback)",
    async () => {
      const server = calendarServer(
        path.join(directory, "c.json"),
        { WARRANT_MCP_REVISIONS: "2025-11-25" },
        undefined,
        true,
      );
      if (server.transport !== "stdio") throw new Error("stdio expected");
      const connection = modernStdioConnection(server, NO_EVENTS);
      try {
        const failure = await connection.open().then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(isNotModern(failure)).toBe(true);
      } finally {
        await connection.shutdown();
      }
    },
    TEST_TIMEOUT_MS,
  );
});

describe.each(REVISIONS)("a read and an approved write through the graph on %s", (revision) => {
  const backend = backends[0];
  if (!backend) throw new Error("no Postgres backend");
  const opened = useBackend(backend, TEST_TIMEOUT_MS);
  let directory: string;
  let dataPath: string;
  const hosts: ToolHost[] = [];
  beforeEach(async () => {
    directory = await mkdtemp(path.join(os.tmpdir(), "mcp-revisions-"));
    dataPath = path.join(directory, "calendar.json");
  });
  afterEach(async () => {
    await Promise.all(hosts.splice(0).map((host) => host.close()));
    await rm(directory, { recursive: true, force: true });
  });

  it(
    "creates exactly one event and records one succeeded write",
    async () => {
      const host = await connectTools(calendarConfig(calendarServer(dataPath, {}, revision)));
      hosts.push(host);
      expect(host.revision?.("calendar")).toBe(revision);
      const planner = scriptedPlanner([
        calls(proposal("create_study_event", EVENT)),
        calls(proposal("list_events", { calendar: "study" })),
        DONE,
      ]);
      const agent = agentHarness({ database: opened().database, tools: host, planner });
      const { threadId, state: paused } = await agent.run("alice", REQUEST);
      expect(paused.status).toBe("waiting_approval");
      expect(await storedCalendarEvents(dataPath)).toHaveLength(0);
      const state = await agent.resume("alice", threadId, APPROVE);
      planner.assertDone();
      expect(state.status).toBe("completed");
      const events = await storedCalendarEvents(dataPath);
      expect(events).toHaveLength(1);
      const durable = await opened().database.ledger.list(threadId);
      const writes = durable.filter((row) => row.tool === "create_study_event");
      expect(writes.map((row) => [row.attempt, row.status, row.error_code])).toEqual([[1, "succeeded", null]]);
      expect(events[0]?.["idempotency_key"]).toBe(writes[0]?.idempotency_key);
      // The read went through on the same revision and saw the event the write created.
      const read = await host.call(
        host.catalog().find((tool) => tool.name === "list_events") ?? expect.fail("no list_events"),
        { calendar: "study", user_id: events[0]?.["user_id"] },
        { timeoutMs: 20_000, principal: await principal("alice"), threadId },
      );
      expect(read).toMatchObject({ ok: true });
      expect(JSON.stringify(read)).toContain(String(events[0]?.["event_id"]));
    },
    TEST_TIMEOUT_MS,
  );
});

describe.each(REVISIONS)("resources, prompts and tools/list_changed on %s", (revision) => {
  const backend = backends[0];
  if (!backend) throw new Error("no Postgres backend");
  const opened = useBackend(backend, TEST_TIMEOUT_MS);
  const hosts: ToolHost[] = [];
  afterEach(async () => {
    await Promise.all(hosts.splice(0).map((host) => host.close()));
  });
  const as = async (user: string): Promise<CallOptions> => ({
    timeoutMs: 20_000,
    principal: await principal(user),
    threadId: `revisions-${revision}`,
  });

  it(
    "reads the notes outline and prompt as the caller named in _meta, and refuses a course they may not see",
    async () => {
      const notes = shipped.servers["notes"];
      if (notes?.transport !== "stdio") throw new Error("the shipped config has no stdio notes server");
      const tools = Object.fromEntries(Object.entries(shipped.tools).filter(([, c]) => c.server === "notes"));
      const host = await connectTools({ ...shipped, servers: { notes: { ...notes, protocol: revision } }, tools });
      hosts.push(host);
      expect(host.revision?.("notes")).toBe(revision);
      const outline = await host.readResource("notes", "notes://courses/cs301/outline", await as("alice"));
      expect(outline).toMatchObject({ ok: true, structured: { course: "cs301" } });
      const listed = outline.ok ? (outline.structured as { notes?: unknown[] }).notes : undefined;
      expect(listed?.length).toBeGreaterThan(0);
      const quiz = await host.getPrompt("notes", "quiz_from_notes", { course_id: "cs301" }, await as("alice"));
      expect(quiz).toMatchObject({ ok: true, messages: [expect.objectContaining({ role: "user" })] });
      expect(JSON.stringify(quiz)).toContain("Write 5 quiz question(s)");
      // bob is not enrolled in cs301: the same typed refusal as an unknown course, on either revision.
      const forbidden = await host.readResource("notes", "notes://courses/cs301/outline", await as("bob"));
      const missing = await host.readResource("notes", "notes://courses/zz999/outline", await as("bob"));
      expect(forbidden).toMatchObject({ ok: false, code: "access_denied" });
      expect(missing).toEqual(forbidden);
      const refusedPrompt = await host.getPrompt("notes", "quiz_from_notes", { course_id: "cs301" }, await as("bob"));
      expect(refusedPrompt).toMatchObject({ ok: false, code: "access_denied" });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "withholds a tool whose definition changes mid-session, and says which revision the server speaks",
    async () => {
      const database = opened().database;
      // Pins are per tool name: each revision's host pins the fixture's definitions afresh.
      await database.pool.query("delete from warrant.tool_pins");
      const config = parseConfig(
        JSON.stringify({
          servers: {
            glossary: {
              transport: "stdio",
              command: "node",
              args: ["--import", "tsx", "test/int/support/shifting-server.ts"],
              protocol: revision,
            },
          },
          tools: { lookup: { server: "glossary", risk: "read" }, shift: { server: "glossary", risk: "read" } },
        }),
        "test config",
      );
      const host = await connectTools(config, undefined, { pins: database.pins });
      hosts.push(host);
      const find = (name: string) => host.catalog().find((tool) => tool.name === name) ?? expect.fail(`no ${name}`);
      const lookup = find("lookup");
      expect(await host.call(lookup, { word: "x" }, await as("alice"))).toMatchObject({ ok: true });
      expect(await host.call(find("shift"), {}, await as("alice"))).toMatchObject({ ok: true });
      const deadline = Date.now() + 10_000;
      while (!find("lookup").definition_changed && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(find("lookup").definition_changed).toMatchObject({
        pinned_hash: (await database.pins.get("lookup"))?.hash,
      });
      // Even with the catalog entry fetched before the change, the call is refused at the host.
      expect(await host.call(lookup, { word: "x" }, await as("alice"))).toMatchObject({
        ok: false,
        code: "tool_not_permitted",
      });
      expect(host.isHealthy("glossary")).toBe(true);
      const status = await toolStatus(config, database.pins, host);
      expect(status.map((row) => [row.tool, row.revision, row.pin])).toEqual([
        ["lookup", revision, "changed"],
        ["shift", revision, "pinned"],
      ]);
    },
    TEST_TIMEOUT_MS,
  );
});

describe("pins across revisions", () => {
  const backend = backends[0];
  if (!backend) throw new Error("no Postgres backend");
  const opened = useBackend(backend, TEST_TIMEOUT_MS);
  const fixture = useSandbox("each");
  const glossary = (protocol: string) =>
    parseConfig(
      JSON.stringify({
        servers: {
          glossary: {
            transport: "stdio",
            command: "node",
            args: ["--import", "tsx", "test/int/support/shifting-server.ts"],
            protocol,
          },
        },
        tools: { lookup: { server: "glossary", risk: "read" }, shift: { server: "glossary", risk: "read" } },
      }),
      "test config",
    );

  it(
    "a definition pinned on 2025-11-25 still matches when its server speaks 2026-07-28 (the SDKs' dialect markers differ)",
    async () => {
      const { database } = opened();
      await database.pool.query("delete from warrant.tool_pins");
      const before = fixture.add(await connectTools(glossary("2025-11-25"), undefined, { pins: database.pins }));
      const pinned = (await toolStatus(glossary("2025-11-25"), database.pins, before)).map((row) => [
        row.tool,
        row.pin,
      ]);
      expect(pinned).toEqual([
        ["lookup", "pinned"],
        ["shift", "pinned"],
      ]);
      const hashes = [(await database.pins.get("lookup"))?.hash, (await database.pins.get("shift"))?.hash];
      await before.close();
      const after = fixture.add(await connectTools(glossary("2026-07-28"), undefined, { pins: database.pins }));
      const status = await toolStatus(glossary("2026-07-28"), database.pins, after);
      expect(status.map((row) => [row.tool, row.revision, row.pin])).toEqual([
        ["lookup", "2026-07-28", "pinned"],
        ["shift", "2026-07-28", "pinned"],
      ]);
      expect([(await database.pins.get("lookup"))?.hash, (await database.pins.get("shift"))?.hash]).toEqual(hashes);
      expect(after.catalog().map((tool) => tool.definition_changed ?? null)).toEqual([null, null]);
    },
    TEST_TIMEOUT_MS,
  );
});
