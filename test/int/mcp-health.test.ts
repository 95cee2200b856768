/**
 * Server health (issue 3, DESIGN §5/§6): a crashed server is noticed from its
 * transport, its tools leave the effective set (tool_offer records why), the
 * in-flight call ends `server_unavailable`, the run goes on, and the server is
 * reconnected with backoff and its tools are callable again. Real notes child
 * processes, a real caseops HTTP server stopped and restarted on its port,
 * real Postgres for the agent run.
 */
import { randomBytes } from "node:crypto";
import { ToolMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isConfigError } from "../../src/errors.js";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import type { Database } from "../../src/stores/open-database.js";
import type { HealthEvent } from "../../src/mcp/health.js";
import { loadConfig, parseConfig, type WarrantConfig } from "../../src/policy/config.js";
import { effectiveTools } from "../../src/policy/effective-tools.js";
import { startCaseopsServer, type CaseopsServerHandle } from "../../tools/caseops/server.js";
import { calls, proposal, scriptedPlanner } from "../support/scripted-planner.js";
import { agentHarness, principal, settings } from "./support/agent.js";
import { openTestDatabase } from "./support/postgres.js";
import { childProcesses, childrenRunning, waitFor } from "./support/processes.js";
import { freePort } from "../support/ports.js";

const NOTES_SERVER = "tools/notes/server.ts";
const SECRET = new Uint8Array(randomBytes(32));

let shipped: WarrantConfig;
beforeAll(async () => {
  shipped = await loadConfig(settings.configPath);
});

/** The shipped contracts of `servers`, with servers given as raw config (defaults applied by the parser). */
function configWith(servers: Record<string, unknown>): WarrantConfig {
  const tools = Object.fromEntries(
    Object.entries(shipped.tools).filter(([, contract]) => Object.hasOwn(servers, contract.server)),
  );
  return parseConfig(JSON.stringify({ servers, tools }), "test config");
}

/** The notes server as shipped, slowed down so a read_note call is still in flight when the process dies. */
function notesServer(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    transport: "stdio",
    command: "node",
    args: ["--import", "tsx", NOTES_SERVER],
    env: { WARRANT_NOTES_DELAY_MS: "1500" },
    // The first retry comes 1.5 to 3 s after a crash: long enough for the next planner turn to see the server down.
    reconnect: { base_ms: 3_000, max_ms: 6_000 },
    ...extra,
  };
}

function offerFor(tools: ToolHost, user: Awaited<ReturnType<typeof principal>>) {
  return effectiveTools({
    tools: tools.catalog(),
    principal: user,
    stage: "default",
    allowedRisks: ["read", "write_reversible", "write_irreversible"],
    isHealthy: (server) => tools.isHealthy(server),
    maxTools: tools.maxTools,
    request: "attention notes",
  });
}

const callOptions = async (user: string) => ({
  timeoutMs: 10_000,
  principal: await principal(user),
  threadId: "health-test-thread",
});

describe("a stdio server that crashes", () => {
  let tools: ToolHost;
  const events: HealthEvent[] = [];
  let database: Database;

  beforeAll(async () => {
    tools = await connectTools(configWith({ notes: notesServer() }), undefined, {
      onHealth: (event) => events.push(event),
    });
    database = await openTestDatabase();
  }, 60_000);
  afterAll(async () => {
    await tools?.close();
    await database?.close();
  });

  it("is marked unhealthy from its transport, withdrawn, and reconnected with its tools callable", async () => {
    const alice = await callOptions("alice");
    const readNote = tools.catalog().find((tool) => tool.name === "read_note");
    if (!readNote) throw new Error("read_note is not in the catalog");
    expect(tools.isHealthy("notes")).toBe(true);
    const [child] = await childrenRunning(NOTES_SERVER);
    if (!child) throw new Error("no notes child process");

    // A read_note call is in flight (the server sleeps 1.5 s before answering) when the process is killed.
    const inFlight = tools.call(readNote, { user_id: "alice", note_id: "cs301.self-attention" }, alice);
    await new Promise((resolve) => setTimeout(resolve, 300));
    process.kill(child.pid, "SIGKILL");
    expect(await inFlight).toEqual({ ok: false, code: "server_unavailable", message: expect.any(String) });

    expect(tools.isHealthy("notes")).toBe(false);
    expect(events).toContainEqual({ server: "notes", type: "unhealthy", reason: "the server process exited" });
    const offer = offerFor(tools, alice.principal);
    expect(offer.offered.map((tool) => tool.name)).toEqual([]);
    expect(offer.withheld).toEqual(
      expect.arrayContaining([
        { tool: "search_notes", reason: "unhealthy" },
        { tool: "read_note", reason: "unhealthy" },
      ]),
    );
    // While it is down, a call is refused at once without touching any process.
    expect(await tools.call(readNote, { user_id: "alice", note_id: "cs301.self-attention" }, alice)).toMatchObject({
      ok: false,
      code: "server_unavailable",
    });

    await waitFor(() => tools.isHealthy("notes"), "notes to reconnect");
    const scheduled = events.filter((event) => event.type === "reconnect_scheduled");
    expect(scheduled[0]).toMatchObject({ server: "notes", attempt: 1 });
    // Equal jitter: the first delay is between half and all of base_ms.
    const firstDelay = scheduled[0]?.type === "reconnect_scheduled" ? scheduled[0].delay_ms : -1;
    expect(firstDelay).toBeGreaterThanOrEqual(1_500);
    expect(firstDelay).toBeLessThanOrEqual(3_000);
    expect(events.at(-1)).toMatchObject({ server: "notes", type: "healthy" });

    const restarted = await childrenRunning(NOTES_SERVER);
    expect(restarted.map((process) => process.pid)).not.toContain(child.pid);
    expect(restarted).toHaveLength(1);
    expect(
      offerFor(tools, alice.principal)
        .offered.map((tool) => tool.name)
        .sort(),
    ).toEqual(["read_note", "search_notes"]);
    const result = await tools.call(readNote, { user_id: "alice", note_id: "cs301.self-attention" }, alice);
    expect(result.ok).toBe(true);
  }, 60_000);

  it("lets a run go on with a server_unavailable observation and the withheld reason in tool_offer", async () => {
    await waitFor(() => tools.isHealthy("notes"), "notes to be healthy");
    const [child] = await childrenRunning(NOTES_SERVER);
    if (!child) throw new Error("no notes child process");
    const planner = scriptedPlanner([
      (input) => {
        expect(input.tools.map((tool) => tool.name)).toContain("search_notes");
        // The server dies after the plan offered its tools and before execute calls one.
        process.kill(child.pid, "SIGKILL");
        return calls(proposal("search_notes", { query: "self-attention", course: "cs301" }));
      },
      (input) => {
        // Reconnecting takes at least 1.5 s: this turn sees the server down and its tools gone.
        expect(input.tools.map((tool) => tool.name)).not.toContain("search_notes");
        return { type: "final", answer: "the notes are unavailable right now", citations: [], abstained: true };
      },
    ]);
    const agent = agentHarness({ database, tools, planner });
    const { state } = await agent.run("alice", "search my notes on self-attention");
    planner.assertDone();
    expect(state.ledger.map((row) => [row.tool, row.status, row.error_code])).toEqual([
      ["search_notes", "failed", "server_unavailable"],
    ]);
    const observations = state.messages.filter((message): message is ToolMessage => ToolMessage.isInstance(message));
    expect(
      observations.map((message) => (JSON.parse(String(message.content)) as { error: { code: string } }).error.code),
    ).toEqual(["server_unavailable"]);
    expect(state.tool_offer?.withheld).toEqual(expect.arrayContaining([{ tool: "search_notes", reason: "unhealthy" }]));
    expect(state.status).toBe("abstained");

    // Back again: the same search runs in a new run on the reconnected server.
    await waitFor(() => tools.isHealthy("notes"), "notes to reconnect");
    const again = scriptedPlanner([
      calls(proposal("search_notes", { query: "self-attention", course: "cs301" })),
      { type: "final", answer: "found", citations: [], abstained: true },
    ]);
    const rerun = await agentHarness({ database, tools, planner: again }).run(
      "alice",
      "search my notes on self-attention",
    );
    again.assertDone();
    expect(rerun.state.ledger.map((row) => [row.tool, row.status])).toEqual([["search_notes", "succeeded"]]);
  }, 60_000);
});

describe("an HTTP server that goes away", () => {
  let port: number;
  let caseops: CaseopsServerHandle | undefined;
  let tools: ToolHost;
  const events: HealthEvent[] = [];
  const startCaseops = () =>
    startCaseopsServer({ port, host: "127.0.0.1", secret: SECRET, audience: "caseops", log: () => undefined });

  beforeAll(async () => {
    port = await freePort();
    caseops = await startCaseops();
    const server = {
      transport: "http",
      url: caseops.url,
      audience: "caseops",
      reconnect: { base_ms: 200, max_ms: 1_000 },
    };
    tools = await connectTools(
      configWith({ caseops: server }),
      { secret: SECRET, ttlSeconds: 120 },
      { onHealth: (event) => events.push(event) },
    );
  }, 60_000);
  afterAll(async () => {
    await tools?.close();
    await caseops?.close();
  });

  it("is noticed from its session stream without a call, withdrawn, and reconnected after a restart on the same port", async () => {
    const dana = await callOptions("dana");
    const snapshot = tools.catalog().find((tool) => tool.name === "get_case_snapshot");
    if (!snapshot || !caseops) throw new Error("setup failed");
    expect(await tools.call(snapshot, { case_id: "C-102" }, dana)).toMatchObject({ ok: true });
    expect(caseops.stats().sessions).toBe(1);

    await caseops.close();
    caseops = undefined;
    // No call is made: the tenant session's event stream reports the loss.
    await waitFor(() => !tools.isHealthy("caseops"), "caseops to be marked unhealthy", 10_000);
    expect(events.find((event) => event.type === "unhealthy")).toMatchObject({ server: "caseops" });
    expect(offerFor(tools, dana.principal).withheld).toContainEqual({ tool: "get_case_snapshot", reason: "unhealthy" });
    expect(await tools.call(snapshot, { case_id: "C-102" }, dana)).toMatchObject({
      ok: false,
      code: "server_unavailable",
    });

    // Attempts fail while nothing listens, then succeed once it is back on the same port.
    await waitFor(
      () => events.some((event) => event.type === "reconnect_failed"),
      "a failed reconnect attempt",
      10_000,
    );
    caseops = await startCaseops();
    await waitFor(() => tools.isHealthy("caseops"), "caseops to reconnect", 15_000);
    expect(offerFor(tools, dana.principal).offered.map((tool) => tool.name)).toContain("get_case_snapshot");
    const result = await tools.call(snapshot, { case_id: "C-102" }, dana);
    expect(result).toMatchObject({ ok: true, structured: { case_id: "C-102" } });
    // One tenant session on the new server; the listing session was ended.
    expect(caseops.stats().sessions).toBe(1);
  }, 60_000);
});

describe("start-up failures", () => {
  it("starts an optional server unhealthy and connects it once it comes up", async () => {
    const port = await freePort();
    const events: HealthEvent[] = [];
    const url = `http://127.0.0.1:${port}/mcp`;
    const config = configWith({
      caseops: {
        transport: "http",
        url,
        audience: "caseops",
        optional: true,
        reconnect: { base_ms: 100, max_ms: 400 },
      },
      notes: notesServer({
        optional: true,
        env: { WARRANT_NOTES_FAIL_START: "1" },
        reconnect: { base_ms: 100, max_ms: 400 },
      }),
    });
    const tools = await connectTools(
      config,
      { secret: SECRET, ttlSeconds: 120 },
      { onHealth: (event) => events.push(event) },
    );
    let caseops: CaseopsServerHandle | undefined;
    try {
      expect(tools.isHealthy("caseops")).toBe(false);
      expect(tools.isHealthy("notes")).toBe(false);
      expect(
        events
          .filter((event) => event.type === "unhealthy")
          .map((event) => event.server)
          .sort(),
      ).toEqual(["caseops", "notes"]);
      // Never listed, so not in the catalog: nothing of theirs can be offered.
      expect(tools.catalog()).toEqual([]);
      await waitFor(
        () => events.filter((event) => event.type === "reconnect_failed" && event.server === "caseops").length >= 2,
        "caseops retries",
        10_000,
      );

      caseops = await startCaseopsServer({
        port,
        host: "127.0.0.1",
        secret: SECRET,
        audience: "caseops",
        log: () => undefined,
      });
      await waitFor(() => tools.isHealthy("caseops"), "caseops to connect", 10_000);
      const snapshot = tools.catalog().find((tool) => tool.name === "get_case_snapshot");
      if (!snapshot) throw new Error("get_case_snapshot was not listed after reconnect");
      expect(await tools.call(snapshot, { case_id: "C-102" }, await callOptions("dana"))).toMatchObject({ ok: true });
      // The notes server still fails every attempt and stays out.
      expect(tools.isHealthy("notes")).toBe(false);
    } finally {
      await tools.close();
      await caseops?.close();
    }
  }, 60_000);

  it("refuses to start when a required server fails, leaving no process behind", async () => {
    const before = new Set((await childProcesses()).map((child) => child.pid));
    const config = configWith({
      notes: notesServer({ env: { WARRANT_NOTES_FAIL_START: "1" } }),
      schedule: { transport: "stdio", command: "node", args: ["--import", "tsx", "tools/schedule/server.ts"] },
    });
    const error = await connectTools(config, undefined, { onHealth: () => undefined }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(isConfigError(error) && error.code).toBe("mcp_start_failed");
    expect(String((error as Error).message)).toContain("notes");
    expect((await childProcesses()).filter((child) => !before.has(child.pid))).toEqual([]);
  }, 60_000);
});

describe("close()", () => {
  it("stops child processes and reconnect timers", async () => {
    const before = new Set((await childProcesses()).map((child) => child.pid));
    const events: HealthEvent[] = [];
    const config = configWith({
      notes: notesServer(),
      caseops: shipped.servers["caseops"],
      broken: notesServer({
        optional: true,
        env: { WARRANT_NOTES_FAIL_START: "1" },
        reconnect: { base_ms: 50, max_ms: 100 },
      }),
    });
    const tools = await connectTools(config, undefined, { onHealth: (event) => events.push(event) });
    const started = (await childProcesses()).filter((child) => !before.has(child.pid));
    expect(started.some((child) => child.command.includes(NOTES_SERVER))).toBe(true);
    expect(started.some((child) => child.command.includes("tools/caseops/server.ts"))).toBe(true);

    await tools.close();
    expect((await childProcesses()).filter((child) => !before.has(child.pid))).toEqual([]);
    // The optional server's retry loop stopped: no attempt after close.
    const count = events.length;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(events.length).toBe(count);
    expect((await childProcesses()).filter((child) => !before.has(child.pid))).toEqual([]);
  }, 60_000);
});
