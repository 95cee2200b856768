/**
 * The `npm start` server as a real process (`node --import tsx
 * src/server/main.ts`), driven only over HTTP with the SDK's Client (raw
 * requests where a status code is the point): model token streaming through
 * the server, a review that survives a restart, SIGTERM draining, two
 * processes on one Postgres, and recovery from a crash (by a server started
 * afterwards, and by a peer that was already running). Each test has its
 * own database, data directory, calendar file and server processes, and
 * kills their process groups afterwards.
 */
import { execFile } from "node:child_process";
import http from "node:http";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Client } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { finalReply, modelEnv } from "../support/scripted-model.js";
import { REPO_ROOT } from "../../src/env.js";
import { startFakeOpenAI, type FakeOpenAI, type ScriptedCompletion } from "./support/fake-openai.js";
import { createServerSandbox, type ServerProcess, type ServerSandbox } from "./support/server-process.js";
import { BOOKING_REQUEST, NOTES_QUESTION } from "./support/server.js";
import { collect } from "../support/streams.js";

type Values = {
  status?: string;
  termination_reason?: { code: string };
  ledger?: { tool: string; status: string }[];
  __interrupt__?: { value: unknown }[];
  __error__?: unknown;
};
type StreamPart = { event: string; data: unknown };
type WireMessage = { id?: string; type?: string; content?: unknown; tool_call_chunks?: { name?: string }[] };

const ask = (content: string) => ({ input: { messages: [{ role: "user" as const, content }] } });
const APPROVE = { decisions: [{ type: "approve" }] };
/** What the (fake) model proposes: the contract injects user_id and idempotency_key, so they are not among the model's arguments. */
const BOOKING_ARGS = {
  title: "Attention study block",
  start: "2026-12-01T18:00:00+01:00",
  end: "2026-12-01T19:00:00+01:00",
  timezone: "Europe/Berlin",
  calendar: "study",
};
const USAGE = { prompt_tokens: 50, completion_tokens: 20 };

const toolCallReply = (id: string, name: string, args: Record<string, unknown>): ScriptedCompletion => ({
  kind: "completion",
  tool_calls: [{ id, name, arguments: JSON.stringify(args) }],
  finish_reason: "tool_calls",
  usage: USAGE,
});

let sandbox: ServerSandbox | undefined;
let fake: FakeOpenAI | undefined;
const fixture = useSandbox("each");

/** Waits for the server to exit after SIGTERM; returns its exit and how long it took. */
async function terminate(
  server: ServerProcess,
): Promise<{ code: number | null; signal: string | null; elapsedMs: number }> {
  const started = Date.now();
  server.signal("SIGTERM");
  const exit = await Promise.race([
    server.exited,
    sleep(20_000).then(() => ({ code: null, signal: "still running after 20 s" as string | null })),
  ]);
  return { ...exit, elapsedMs: Date.now() - started };
}

/** The server's live process group (itself and its MCP children), which must be empty once it has exited. */
async function expectGroupGone(server: ServerProcess): Promise<void> {
  // The server reaps its children before exiting; allow a moment for /proc to catch up.
  const deadline = Date.now() + 3_000;
  let left = await server.livePids();
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(100);
    left = await server.livePids();
  }
  expect(left, `processes left in the server's group: ${left.join(", ")}`).toEqual([]);
}

/**
 * One request on a fresh connection (no keep-alive pool), so "refused" means
 * the server refused it and not that a pooled socket was stale.
 */
function freshRequest(
  url: string,
  init: { method: string; token: string; body?: unknown },
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const payload = init.body === undefined ? undefined : JSON.stringify(init.body);
    const request = http.request(
      url,
      {
        method: init.method,
        agent: false,
        headers: {
          authorization: `Bearer ${init.token}`,
          ...(payload ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } : {}),
        },
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8").on("data", (piece: string) => (text += piece));
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
          }),
        );
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(payload);
  });
}

async function responseJson(response: Response): Promise<{ status: number; body: Record<string, unknown> }> {
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** Runs the booking request until it waits for review; returns the thread id and the interrupt payload. */
async function interruptedBooking(client: Client): Promise<{ threadId: string; payload: Record<string, unknown> }> {
  const thread = await client.threads.create();
  const values = (await client.runs.wait(thread.thread_id, "agent", ask(BOOKING_REQUEST))) as Values;
  expect(values.__interrupt__).toHaveLength(1);
  const state = await client.threads.getState(thread.thread_id);
  const interrupts = state.tasks.flatMap((task) => task.interrupts);
  expect(interrupts).toHaveLength(1);
  return { threadId: thread.thread_id, payload: interrupts[0]!.value as Record<string, unknown> };
}

describe("npm start as a process", () => {
  it("streams node updates in order and the model's tokens (messages-tuple and messages)", async () => {
    fake = fixture.add(await startFakeOpenAI());
    sandbox = fixture.add(await createServerSandbox());
    const server = await sandbox.start(modelEnv(fake));
    const alice = await sandbox.client(server, "alice");

    // Turn 1 searches, turn 2 answers; both streamed by the fake in 4-character pieces.
    const answer =
      "Self-attention relates positions of one sequence; cross-attention lets the decoder attend to the encoder.";
    fake.enqueue(
      toolCallReply("call_search_1", "search_notes", { query: "self-attention cross-attention" }),
      finalReply(answer),
    );
    const thread = await alice.threads.create();
    const parts = await collect(
      alice.runs.stream(thread.thread_id, "agent", {
        ...ask(NOTES_QUESTION),
        streamMode: ["updates", "messages-tuple"],
      }) as AsyncIterable<StreamPart>,
    );

    const updates = parts
      .filter((part) => part.event === "updates")
      .flatMap((part) => Object.keys(part.data as object));
    expect(updates).toEqual(["plan", "authorize", "execute", "observe", "plan", "observe"]);
    // The model was asked to stream because the run streams messages.
    expect(fake.requests.map((request) => request.body["stream"])).toEqual([true, true]);
    expect(fake.pending()).toBe(0);

    // messages-tuple: [chunk, metadata] per token chunk, from the plan node.
    const tuples = parts
      .filter((part) => part.event === "messages")
      .map((part) => part.data as [WireMessage, Record<string, unknown>]);
    // Chunks carry the completion's id, so the two model calls are told apart.
    const fromModel = tuples.filter(
      ([message, metadata]) =>
        metadata["langgraph_node"] === "plan" && message.type === "ai" && message.id?.startsWith("chatcmpl-fake-"),
    );
    const byId = new Map<string, WireMessage[]>();
    for (const [message] of fromModel) byId.set(message.id!, [...(byId.get(message.id!) ?? []), message]);
    expect([...byId.keys()]).toEqual(["chatcmpl-fake-1", "chatcmpl-fake-2"]);
    const [toolCallChunks, answerChunks] = [...byId.values()];
    expect(
      toolCallChunks!
        .flatMap((chunk) => chunk.tool_call_chunks ?? [])
        .map((chunk) => chunk.name)
        .filter(Boolean),
    ).toEqual(["search_notes"]);
    const expectedText = JSON.stringify({ answer, citations: [], abstained: false });
    expect(answerChunks!.map((chunk) => chunk.content).join("")).toBe(expectedText);
    expect(answerChunks!.filter((chunk) => chunk.content !== "").length).toBe(Math.ceil(expectedText.length / 4));
    const values = (await alice.threads.getState(thread.thread_id)).values as Values;
    expect(values.status).toBe("completed");

    // messages (not tuple): the SDK's messages/partial, each the message so far.
    const direct = "Attention weighs every position by its relevance.";
    fake.enqueue(finalReply(direct));
    const second = await alice.threads.create();
    const messageParts = await collect(
      alice.runs.stream(second.thread_id, "agent", {
        ...ask("What is attention?"),
        streamMode: "messages",
      }) as AsyncIterable<StreamPart>,
    );
    const partials = messageParts
      .filter((part) => part.event === "messages/partial")
      .map((part) => (part.data as WireMessage[])[0]!);
    const directText = JSON.stringify({ answer: direct, citations: [], abstained: false });
    const modelPartials = partials.filter(
      (message) =>
        typeof message.content === "string" && directText.startsWith(message.content) && message.content !== "",
    );
    expect(modelPartials.length).toBeGreaterThan(5);
    expect(modelPartials.map((message) => message.content)).toEqual(
      [...modelPartials.map((message) => message.content as string)].sort((a, b) => a.length - b.length),
    );
    expect(modelPartials.at(-1)!.content).toBe(directText);
    expect(messageParts.some((part) => part.event === "messages/metadata")).toBe(true);
    expect(messageParts.some((part) => part.event === "messages/complete")).toBe(true);
    expect(fake.pending()).toBe(0);
  }, 90_000);

  it("keeps a pending review across a SIGTERM restart and executes the approved write once", async () => {
    fake = fixture.add(await startFakeOpenAI());
    sandbox = fixture.add(await createServerSandbox());
    const first = await sandbox.start(modelEnv(fake));
    const alice = await sandbox.client(first, "alice");

    fake.enqueue(toolCallReply("call_book_1", "create_study_event", BOOKING_ARGS));
    const { threadId, payload } = await interruptedBooking(alice);
    expect(payload["action_requests"]).toEqual([
      { name: "create_study_event", args: BOOKING_ARGS, description: expect.any(String) },
    ]);
    expect(payload["approvals"]).toEqual([
      expect.objectContaining({ action_id: expect.any(String), fingerprint: expect.any(String), version: 1 }),
    ]);
    expect((await alice.threads.get(threadId)).status).toBe("interrupted");
    expect(await sandbox.calendarEvents()).toEqual([]);

    // The server runs its MCP servers (at least notes, schedule, calendar, caseops) in its own process group.
    expect((await first.livePids()).length).toBeGreaterThanOrEqual(5);
    const exit = await terminate(first);
    expect(exit, first.stderr().slice(-2_000)).toMatchObject({ code: 0, signal: null });
    expect(exit.elapsedMs).toBeLessThan(10_000);
    await expectGroupGone(first);

    const second = await sandbox.start(modelEnv(fake));
    const aliceAgain = await sandbox.client(second, "alice");
    expect((await aliceAgain.threads.get(threadId)).status).toBe("interrupted");
    fake.enqueue(finalReply("Booked your attention study block."));
    const values = (await aliceAgain.runs.wait(threadId, "agent", { command: { resume: APPROVE } })) as Values;
    expect(values.status).toBe("completed");
    expect(values.ledger?.filter((row) => row.tool === "create_study_event").map((row) => row.status)).toEqual([
      "succeeded",
    ]);
    const events = await sandbox.calendarEvents();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      user_id: "alice",
      title: BOOKING_ARGS.title,
      idempotency_key: expect.any(String),
    });
    expect(fake.pending()).toBe(0);
    expect(fake.requests).toHaveLength(2);
    expect((await aliceAgain.threads.get(threadId)).status).toBe("idle");
  }, 120_000);

  it("serves on the embedded Postgres when DATABASE_URL is unset and keeps threads across a restart", async () => {
    sandbox = fixture.add(await createServerSandbox());
    // An empty DATABASE_URL means unset: the server opens PGlite under WARRANT_DATA_DIR.
    const first = await sandbox.start({ DATABASE_URL: "" });
    const alice = await sandbox.client(first, "alice");
    const thread = await alice.threads.create();
    const values = (await alice.runs.wait(thread.thread_id, "agent", ask(NOTES_QUESTION))) as Values;
    expect(values.status).toBe("completed");
    first.signal("SIGTERM");
    expect(await first.exited).toEqual({ code: 0, signal: null });
    await expectGroupGone(first);
    await expect(fs.stat(path.join(sandbox.dataDir, "pglite"))).resolves.toBeTruthy();

    const second = await sandbox.start({ DATABASE_URL: "" });
    const again = await sandbox.client(second, "alice");
    const state = await again.threads.getState(thread.thread_id);
    expect((state.values as Values).status).toBe("completed");
    expect((await again.runs.list(thread.thread_id)).map((run) => run.status)).toEqual(["success"]);
    // Nothing of it is in the server database the sandbox also offers.
    expect(
      (await (await sandbox.client(await sandbox.start(), "alice")).threads.search()).map((item) => item.thread_id),
    ).not.toContain(thread.thread_id);
  }, 120_000);

  it("drains on SIGTERM: in-flight requests are answered, new ones refused, exit 0", async () => {
    sandbox = fixture.add(await createServerSandbox());
    // read_note is slow on both servers, so runs are in flight when the signal comes; slower on
    // the other one, so its run outlasts the draining server's own run.
    const [draining, other] = await Promise.all([
      sandbox.start({ WARRANT_NOTES_DELAY_MS: "1500" }),
      sandbox.start({ WARRANT_NOTES_DELAY_MS: "4000" }),
    ]);
    const alice = await sandbox.client(draining, "alice");
    const token = await sandbox.token("alice");

    // 1. A run executing on the draining server, its client waiting on runs.wait.
    const local = await alice.threads.create();
    const waiting = alice.runs.wait(local.thread_id, "agent", ask(NOTES_QUESTION)) as Promise<Values>;
    // 2. A run executing on the other server, joined through the draining one (which polls Postgres for it).
    const remote = await alice.threads.create();
    const remoteRun = await (await sandbox.client(other, "alice")).runs.create(
      remote.thread_id,
      "agent",
      ask(NOTES_QUESTION),
    );
    const joining = alice.runs.join(remote.thread_id, remoteRun.run_id) as Promise<Values>;
    // The notes servers log this when a read_note call has started.
    await Promise.all([
      draining.waitForStderr("read_note delayed", 30_000),
      other.waitForStderr("read_note delayed", 30_000),
    ]);

    const signalled = Date.now();
    draining.signal("SIGTERM");
    await draining.waitForStderr("SIGTERM: draining", 5_000);
    const late = await freshRequest(`${draining.url}/threads`, { method: "POST", token, body: {} }).then(
      (answer) => answer,
      (error: NodeJS.ErrnoException) => ({ status: 0, body: { error: error.code } }),
    );
    if (late.status === 0) expect(late.body["error"]).toBe("ECONNREFUSED");
    else expect(late).toMatchObject({ status: 503, body: { error: "shutting_down" } });

    const [waited, joined] = await Promise.all([waiting, joining]);
    expect(waited.status).toBe("completed");
    expect(waited.ledger?.some((row) => row.tool === "read_note" && row.status === "succeeded")).toBe(true);
    expect(joined.status).toBe("completed");
    const exit = await Promise.race([draining.exited, sleep(15_000).then(() => undefined)]);
    expect(exit, draining.stderr().slice(-2_000)).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalled).toBeLessThan(12_000);
    await expectGroupGone(draining);
  }, 90_000);

  it("streams the progress of a run executing on another process from its checkpoints", async () => {
    sandbox = fixture.add(await createServerSandbox());
    const [a, b] = await Promise.all([sandbox.start({ WARRANT_NOTES_DELAY_MS: "700" }), sandbox.start()]);
    const aliceOnA = await sandbox.client(a, "alice");
    const thread = await aliceOnA.threads.create();
    const run = await aliceOnA.runs.create(thread.thread_id, "agent", ask(NOTES_QUESTION));
    const statuses: string[] = [];
    for await (const part of (await sandbox.client(b, "alice")).runs.joinStream(thread.thread_id, run.run_id)) {
      if (part.event === "values") statuses.push(String((part.data as Values).status));
    }
    // At least one state while the run was going (the reads take 700 ms), then the final one.
    expect(statuses.length).toBeGreaterThanOrEqual(2);
    expect(statuses.at(-1)).toBe("completed");
    expect(statuses.slice(0, -1).some((status) => status !== "completed")).toBe(true);
  }, 120_000);

  it("lets exactly one of two concurrent resumes sent to two processes on one Postgres proceed", async () => {
    fake = fixture.add(await startFakeOpenAI());
    sandbox = fixture.add(await createServerSandbox());
    const [a, b] = await Promise.all([sandbox.start(modelEnv(fake)), sandbox.start(modelEnv(fake))]);
    const aliceOnA = await sandbox.client(a, "alice");

    fake.enqueue(toolCallReply("call_book_1", "create_study_event", BOOKING_ARGS));
    const { threadId } = await interruptedBooking(aliceOnA);
    // Created through A, visible through B: the thread lives in Postgres.
    expect((await (await sandbox.client(b, "alice")).threads.get(threadId)).status).toBe("interrupted");

    fake.enqueue(finalReply("Booked."));
    const resume = (server: ServerProcess) =>
      sandbox!
        .fetch(server, `/threads/${threadId}/runs/wait`, {
          method: "POST",
          user: "alice",
          body: JSON.stringify({ assistant_id: "agent", command: { resume: APPROVE } }),
        })
        .then(responseJson);
    const answers = await Promise.all([resume(a), resume(b)]);

    const succeeded = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status !== 200);
    expect(succeeded, JSON.stringify(answers)).toHaveLength(1);
    expect(succeeded[0]!.body["status"]).toBe("completed");
    expect(refused).toHaveLength(1);
    expect(refused[0]!.status).toBe(409);
    expect(["thread_busy", "no_pending_interrupt"]).toContain(refused[0]!.body["error"]);
    expect(await sandbox.calendarEvents()).toHaveLength(1);
    // One proposal and one answer: the losing resume never reached the model.
    expect(fake.requests).toHaveLength(2);
    expect(fake.pending()).toBe(0);
  }, 120_000);

  it("recovers a run orphaned by a SIGKILLed server: marked server_restarted, the thread continues", async () => {
    sandbox = fixture.add(await createServerSandbox());
    // Short on the server that dies, so its lease runs out soon; longer where runs must survive a loaded machine.
    const leaseMs = 2_000;
    const crashing = await sandbox.start({ WARRANT_NOTES_DELAY_MS: "3000", WARRANT_RUN_LEASE_MS: String(leaseMs) });
    const alice = await sandbox.client(crashing, "alice");
    const thread = await alice.threads.create();
    // A background run: nobody waits on the connection that the crash will cut.
    const run = await alice.runs.create(thread.thread_id, "agent", ask(NOTES_QUESTION));
    await crashing.waitForStderr("read_note delayed", 30_000);
    crashing.signal("SIGKILL");
    const killedAt = Date.now();
    await crashing.exited;
    // Its MCP children are orphans now; remove them (the whole group) so nothing outlives the test.
    await crashing.kill();
    // Only once the dead server's lease has run out may another process take the thread over.
    await sleep(Math.max(0, killedAt + leaseMs + 500 - Date.now()));

    const recovering = await sandbox.start({ WARRANT_RUN_LEASE_MS: "5000" });
    await recovering.waitForStderr("marked 1 run(s) left by a stopped server as failed", 5_000);
    const aliceAgain = await sandbox.client(recovering, "alice");
    const orphan = (await aliceAgain.runs.get(thread.thread_id, run.run_id)) as unknown as {
      status: string;
      error?: { error: string };
    };
    expect(orphan).toMatchObject({ status: "error", error: { error: "server_restarted" } });
    const before = await aliceAgain.threads.get(thread.thread_id);
    expect(before.status).not.toBe("busy");

    const values = (await aliceAgain.runs.wait(thread.thread_id, "agent", { input: null })) as Values;
    expect(values.status).toBe("completed");
    expect(values.termination_reason?.code).toBe("final_answer");
    expect((await aliceAgain.threads.get(thread.thread_id)).status).toBe("idle");
  }, 120_000);

  it("lets a running peer recover a run orphaned by a SIGKILLed server: its join ends, the thread continues", async () => {
    sandbox = fixture.add(await createServerSandbox());
    // The dead server's lease runs out 2 s after its last heartbeat; the peer sweeps every 4 s.
    const [crashing, peer] = await Promise.all([
      sandbox.start({ WARRANT_RUN_LEASE_MS: "2000", WARRANT_NOTES_DELAY_MS: "3000" }),
      sandbox.start({ WARRANT_RUN_LEASE_MS: "4000" }),
    ]);
    const thread = await (await sandbox.client(crashing, "alice")).threads.create();
    const run = await (await sandbox.client(crashing, "alice")).runs.create(
      thread.thread_id,
      "agent",
      ask(NOTES_QUESTION),
    );
    await crashing.waitForStderr("read_note delayed", 30_000);
    const alice = await sandbox.client(peer, "alice");
    // Joined through the peer, which can only follow the run in Postgres.
    const joining = alice.runs.join(thread.thread_id, run.run_id) as Promise<Values>;
    crashing.signal("SIGKILL");
    await crashing.exited;
    await crashing.kill();

    // The peer started before the crash, so only its periodic sweep can notice.
    const joined = await Promise.race([joining, sleep(15_000).then(() => "the join is still waiting")]);
    expect(joined).toMatchObject({ __error__: { error: "server_restarted" } });
    expect(await alice.runs.get(thread.thread_id, run.run_id)).toMatchObject({ status: "error" });
    expect((await alice.threads.get(thread.thread_id)).status).toBe("idle");

    const values = (await alice.runs.wait(thread.thread_id, "agent", { input: null })) as Values;
    expect(values.status).toBe("completed");
  }, 120_000);
});

describe("npm start refuses to start on bad configuration", () => {
  it("prints one warrant: <code> line and exits 1 (unreachable database, bad PORT, port in use, weak secret)", async () => {
    const blocker = http.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const busyPort = String((blocker.address() as { port: number }).port);
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "warrant-badstart-"));
    const start = (env: Record<string, string>) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          ["--import", "tsx", "src/server/main.ts"],
          {
            cwd: REPO_ROOT,
            env: { ...process.env, WARRANT_DATA_DIR: dataDir, HOST: "127.0.0.1", WARRANT_WORKERS: "1", ...env },
            timeout: 60_000,
          },
          (error, _stdout, stderr) =>
            resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stderr }),
        );
      });
    try {
      const cases: [Record<string, string>, RegExp][] = [
        [{ DATABASE_URL: "postgres://postgres@127.0.0.1:1/nothing", PORT: "0" }, /^warrant: database_unreachable: /],
        [{ DATABASE_URL: "mysql://root@127.0.0.1/x", PORT: "0" }, /^warrant: config_invalid: DATABASE_URL /],
        [{ PORT: "http" }, /^warrant: config_invalid: PORT /],
        [
          { WARRANT_AUTH_SECRET: "tooshort", PORT: "0", DATABASE_URL: "" },
          /^warrant: config_invalid: WARRANT_AUTH_SECRET/,
        ],
        [{ PORT: busyPort, DATABASE_URL: "" }, /^warrant: startup_failed: .*EADDRINUSE/],
      ];
      for (const [env, line] of cases) {
        const result = await start(env);
        const lines = result.stderr.split("\n").filter((text) => text.startsWith("warrant:"));
        expect({ env, code: result.code, lines: lines.length }).toEqual({ env, code: 1, lines: 1 });
        expect(lines[0]).toMatch(line);
        expect(result.stderr).not.toMatch(/^\s+at /m);
      }
    } finally {
      blocker.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
