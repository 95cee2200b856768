/**
 * `npm start` with two workers sharing the port (src/cluster, issue 45):
 * on a Postgres server and on the embedded database (started once by the
 * primary, reached through its relay), 100 concurrent runs each propose a
 * calendar write, are approved and end with exactly one event at the
 * calendar server and one ledger row, every thread idle; SIGTERM drains
 * both workers and the primary exits 0. A worker SIGKILLed mid-run is
 * restarted, and its run is taken over once its lease expires. Real
 * processes, real HTTP through the SDK's Client, the fake OpenAI model.
 */
import fs from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI, type ScriptedCompletion } from "./support/fake-openai.js";
import {
  createServerSandbox,
  spawnServer,
  waitUntil,
  type ServerProcess,
  type ServerSandbox,
} from "./support/server-process.js";
import { BOOKING_REQUEST } from "./support/server.js";
import { REPO_ROOT } from "../../src/env.js";
import { loadConfig } from "../../src/policy/config.js";
import { connectionOwner } from "./support/tcp-owner.js";

type Values = { status?: string; ledger?: { tool: string; status: string }[]; __interrupt__?: unknown[] };

const RUNS = 100;
const APPROVE = { decisions: [{ type: "approve" }] };
const USAGE = { prompt_tokens: 50, completion_tokens: 20 };
const ask = { input: { messages: [{ role: "user" as const, content: BOOKING_REQUEST }] } };
/** A booking on its own day (the n-th after 1 December 2026), so no two proposals are the same event. */
const proposal = (n: number): ScriptedCompletion => {
  const day = new Date(Date.UTC(2026, 11, 1 + n)).toISOString().slice(0, 10);
  const args = {
    title: `Attention study block ${n}`,
    start: `${day}T18:00:00+01:00`,
    end: `${day}T19:00:00+01:00`,
    timezone: "Europe/Berlin",
    calendar: "study",
  };
  return {
    kind: "completion",
    tool_calls: [{ id: `call_book_${n}`, name: "create_study_event", arguments: JSON.stringify(args) }],
    finish_reason: "tool_calls",
    usage: USAGE,
  };
};
const finalReply: ScriptedCompletion = {
  kind: "completion",
  content: JSON.stringify({ answer: "Booked.", citations: [], abstained: false }),
  finish_reason: "stop",
  usage: USAGE,
};
/** Two workers' starts, one after another, each with its MCP servers, on a loaded machine. */
const START_LIMIT_MS = 400_000;

let sandbox: ServerSandbox | undefined;
let fake: FakeOpenAI | undefined;
let primary: ServerProcess | undefined;
afterEach(async () => {
  try {
    await primary?.kill();
    await sandbox?.cleanup();
  } finally {
    primary = undefined;
    sandbox = undefined;
    await fake?.close();
    fake = undefined;
  }
}, 120_000);

async function startWorkers(embedded: boolean, extra: Record<string, string> = {}): Promise<ServerProcess> {
  fake = await startFakeOpenAI();
  sandbox = await createServerSandbox();
  const env = sandbox.env({
    WARRANT_WORKERS: "2",
    WARRANT_PLANNER: "model",
    WARRANT_MODEL: "fake-model",
    OPENAI_BASE_URL: fake.baseUrl,
    WARRANT_MAX_ACTIVE_RUNS: String(RUNS * 2),
    ...extra,
  });
  if (embedded) delete env["DATABASE_URL"];
  // The calendar server alone: two workers' sets of all four MCP servers miss their start timeout on a loaded machine.
  const shipped = await loadConfig(path.join(REPO_ROOT, "warrant.config.json"));
  const tools = Object.fromEntries(Object.entries(shipped.tools).filter(([, tool]) => tool.server === "calendar"));
  env["WARRANT_CONFIG"] = path.join(sandbox.dataDir, "calendar-only.config.json");
  await fs.writeFile(
    env["WARRANT_CONFIG"],
    JSON.stringify({ ...shipped, servers: { calendar: shipped.servers["calendar"] }, tools }),
  );
  primary = await spawnServer(env, START_LIMIT_MS);
  return primary;
}

/** The current pid of each worker, from the primary's `worker N (pid P) listening` lines. */
function workerPids(server: ServerProcess): Map<number, number> {
  const pids = new Map<number, number>();
  for (const match of server.stderr().matchAll(/warrant-primary: worker ([0-9]+) \(pid ([0-9]+)\) listening/g))
    pids.set(Number(match[1]), Number(match[2]));
  return pids;
}

describe.each(["server", "embedded"] as const)("two workers on one %s database", (mode) => {
  it("serve 100 concurrent approved writes: one calendar event each, every thread idle; SIGTERM drains both", async () => {
    const server = await startWorkers(mode === "embedded");
    expect([...workerPids(server).keys()].sort()).toEqual([1, 2]);
    const client = await sandbox!.client(server, "alice");
    const threads = await Promise.all(Array.from({ length: RUNS }, () => client.threads.create()));
    fake!.enqueue(...threads.map((_thread, n) => proposal(n)));
    const asked = await Promise.all(
      threads.map((thread) => client.runs.wait(thread.thread_id, "agent", ask) as Promise<Values>),
    );
    expect(asked.map((values) => values.__interrupt__?.length)).toEqual(threads.map(() => 1));

    fake!.enqueue(...threads.map(() => finalReply));
    const approved = await Promise.all(
      threads.map(
        (thread) => client.runs.wait(thread.thread_id, "agent", { command: { resume: APPROVE } }) as Promise<Values>,
      ),
    );
    expect(approved.map((values) => values.status)).toEqual(threads.map(() => "completed"));
    for (const values of approved)
      expect(values.ledger?.filter((row) => row.tool === "create_study_event").map((row) => row.status)).toEqual([
        "succeeded",
      ]);
    // Effects counted at the calendar server: one event per approved write, no more.
    const events = await sandbox!.calendarEvents();
    expect(events).toHaveLength(RUNS);
    // One per proposal: the file keeps `start`, the calendar's Postgres table `start_at`.
    expect(new Set(events.map((event) => String(event["start"] ?? event["start_at"]))).size).toBe(RUNS);
    const statuses = await Promise.all(
      threads.map(async (thread) => (await client.threads.get(thread.thread_id)).status),
    );
    expect(statuses).toEqual(threads.map(() => "idle"));
    expect(fake!.pending()).toBe(0);
    // Both workers had requests: round-robin over 400 connections leaves neither idle.
    const stderr = server.stderr();
    expect(stderr).not.toMatch(/exited \(|unexpected error on|Unhandled/);

    server.signal("SIGTERM");
    expect(await server.exited).toEqual({ code: 0, signal: null });
    for (const worker of [1, 2]) expect(server.stderr()).toContain(`[worker ${worker}] warrant-server: stopped`);
    await waitUntil(async () => (await server.livePids()).length === 0, "the workers and their MCP servers to exit");
  }, 900_000);
});

/** Starts an approval as a stream over a connection of our own; resolves with that connection's local port. */
function resumeOverOwnConnection(server: ServerProcess, threadId: string, token: string): Promise<number> {
  const body = JSON.stringify({ assistant_id: "agent", command: { resume: APPROVE }, stream_mode: ["updates"] });
  return new Promise((resolve, reject) => {
    const request = http.request(`${server.url}/threads/${threadId}/runs/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      agent: false,
    });
    request.on("socket", (socket) => socket.on("connect", () => resolve(socket.localPort ?? 0)));
    // The stream ends with the worker's death: its error is what the test expects.
    request.on("response", (response) => response.resume().on("error", () => undefined));
    request.on("error", () => undefined);
    request.on("timeout", () => reject(new Error("the stream request timed out")));
    request.end(body);
  });
}

describe("a worker dies mid-run", () => {
  it("is restarted, and its run is taken over through the other worker once its lease expires: one write", async () => {
    const leaseMs = 8_000;
    const server = await startWorkers(false, { WARRANT_RUN_LEASE_MS: String(leaseMs) });
    const client = await sandbox!.client(server, "alice");
    const thread = await client.threads.create();
    fake!.enqueue(proposal(0));
    expect(((await client.runs.wait(thread.thread_id, "agent", ask)) as Values).__interrupt__).toHaveLength(1);

    // After the write, the model never answers: the run is mid-run (its write applied) when its worker dies.
    fake!.enqueue({ kind: "silence" });
    const clientPort = await resumeOverOwnConnection(server, thread.thread_id, await sandbox!.token("alice"));
    await waitUntil(async () => (await sandbox!.calendarEvents()).length === 1, "the calendar write", 120_000);
    await waitUntil(() => fake!.pending() === 0, "the model call after the write", 60_000);
    const pids = workerPids(server);
    const serving = await connectionOwner([...pids.values()], Number(new URL(server.url).port), clientPort);
    expect(serving).toBeDefined();
    const slot = [...pids.entries()].find(([, pid]) => pid === serving)![0];
    process.kill(serving!, "SIGKILL");
    const killedAt = Date.now();
    await server.waitForStderr(`worker ${slot} (pid ${serving}) exited (SIGKILL); restarting`, 30_000);

    // At lease expiry the run is taken over: a reader through the port (either worker) sees it ended by the restart.
    await sleep(Math.max(0, killedAt + leaseMs + 500 - Date.now()));
    const run = (await client.runs.list(thread.thread_id))[0]!;
    const ending: { event: string; data: unknown }[] = [];
    for await (const part of client.runs.joinStream(thread.thread_id, run.run_id)) ending.push(part);
    expect(ending.at(-1)).toMatchObject({ event: "error", data: { error: "server_restarted" } });
    expect(await client.runs.get(thread.thread_id, run.run_id)).toMatchObject({ status: "error" });

    // Continued: the write in doubt is reconciled by its key, not sent again.
    fake!.enqueue(finalReply);
    const values = (await client.runs.wait(thread.thread_id, "agent", { input: null })) as Values;
    expect(values.status).toBe("completed");
    expect(values.ledger?.filter((row) => row.tool === "create_study_event").map((row) => row.status)).toEqual([
      "succeeded",
    ]);
    expect(await sandbox!.calendarEvents()).toHaveLength(1);
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
    // The dead worker came back under its number.
    await waitUntil(() => workerPids(server).get(slot) !== serving, "the worker's restart", START_LIMIT_MS);
  }, 900_000);
});
