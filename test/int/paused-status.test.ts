/**
 * One status for a paused thread, whoever paused it (issue 22, item 2): a
 * run that stops at a review leaves its thread `interrupted` with its
 * `graph_id`, and the thread is in rita's inbox (`GET /reviews`) and in
 * alice's `interrupted` thread list, whether the run came from the API (the
 * agent), the fixed workflow, a resume that pauses again, or the in-process
 * CLI on the same Postgres. Real server, real Postgres, real MCP servers.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { REPO_ROOT } from "../../src/env.js";
import { lastJsonLine, outputOf } from "../support/child-output.js";
import { databaseIdentity, removeRuntimeFile, writeRuntimeFile } from "../../src/server/runtime-file.js";
import { BOOKING_REQUEST, startTestServer, type TestServer } from "./support/server.js";

const PLAN =
  "Use my notes to plan 60 minutes of attention study over 1 day starting 2026-12-02 at 18:00 UTC, and put it in my calendar";
const TIMEOUT_MS = 240_000;

let server: TestServer;
const fixture = useSandbox();
beforeAll(async () => {
  server = fixture.add(await startTestServer());
}, 120_000);

const json = async (response: Response) => (await response.json()) as unknown;

/** Where a paused thread must be found: the thread row, rita's inbox, alice's interrupted list. */
async function expectPaused(threadId: string, graphId: string): Promise<void> {
  const thread = (await json(await server.fetch(`/threads/${threadId}`, { user: "alice" }))) as {
    status: string;
    metadata: Record<string, unknown>;
  };
  expect(thread).toMatchObject({ status: "interrupted", metadata: { graph_id: graphId } });
  const inbox = (await json(await server.fetch("/reviews", { user: "rita" }))) as {
    reviews: { thread_id: string; owner: string }[];
  };
  expect(inbox.reviews).toContainEqual(expect.objectContaining({ thread_id: threadId, owner: "alice" }));
  const own = (await json(await server.fetch("/reviews", { user: "alice" }))) as { reviews: { thread_id: string }[] };
  expect(own.reviews.map((review) => review.thread_id)).toContain(threadId);
  const listed = (await json(
    await server.fetch("/threads/search", {
      user: "alice",
      method: "POST",
      body: JSON.stringify({ status: "interrupted", limit: 100 }),
    }),
  )) as { thread_id: string }[];
  expect(listed.map((row) => row.thread_id)).toContain(threadId);
}

describe("a paused thread is interrupted and in the inbox, whoever paused it", () => {
  it(
    "an API run of the agent",
    async () => {
      const alice = await server.client("alice");
      const thread = await alice.threads.create({ graphId: "agent" });
      await alice.runs.wait(thread.thread_id, "agent", {
        input: { messages: [{ role: "user", content: BOOKING_REQUEST }] },
      });
      await expectPaused(thread.thread_id, "agent");
    },
    TIMEOUT_MS,
  );

  it(
    "an API run of the fixed workflow",
    async () => {
      const alice = await server.client("alice");
      const thread = await alice.threads.create();
      await alice.runs.wait(thread.thread_id, "workflow", { input: { messages: [{ role: "user", content: PLAN }] } });
      await expectPaused(thread.thread_id, "workflow");
    },
    TIMEOUT_MS,
  );

  it(
    "a resume whose answer is refused pauses again",
    async () => {
      const alice = await server.client("alice");
      const thread = await alice.threads.create();
      await alice.runs.wait(thread.thread_id, "agent", {
        input: { messages: [{ role: "user", content: BOOKING_REQUEST }] },
      });
      const resumed = await alice.runs.create(thread.thread_id, "agent", {
        command: { resume: { decisions: [{ type: "approve", action_id: "not-an-action" }] } },
      });
      await alice.runs.join(thread.thread_id, resumed.run_id);
      const state = await alice.threads.getState(thread.thread_id);
      const pending = state.tasks[0]?.interrupts[0]?.value as { error?: { code: string } } | undefined;
      expect(pending?.error?.code).toBe("invalid_resume");
      await expectPaused(thread.thread_id, "agent");
      expect(await server.calendarEvents()).toHaveLength(0);
    },
    TIMEOUT_MS,
  );

  /** `npm run chat -- --user alice --json PLAN` with the server's database (and, when given, its secret). */
  async function chat(extra: Record<string, string> = {}) {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", path.join(REPO_ROOT, "src/cli/chat.ts"), "--user", "alice", "--json", PLAN],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, DATABASE_URL: server.databaseUrl, WARRANT_DATA_DIR: server.dataDir, ...extra },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const output = await outputOf(child);
    expect(output.code, output.stderr).toBe(0);
    return lastJsonLine<{
      thread_id: string;
      run_id: string;
      interrupts: unknown[];
    }>(output);
  }

  it(
    "the CLI as a client of the running server on Postgres (its runtime file names this database)",
    async () => {
      // What `npm start` writes (main.ts); this in-process server's pid is the test's own.
      const database = databaseIdentity({ databaseUrl: server.databaseUrl, dataDir: server.dataDir });
      await writeRuntimeFile(server.dataDir, {
        url: server.url,
        pid: process.pid,
        database,
        started_at: new Date().toISOString(),
      });
      try {
        const output = await chat({ WARRANT_AUTH_SECRET: Buffer.from(server.secret).toString("hex") });
        expect(output.interrupts).toHaveLength(1);
        // The run is the API's: the printed id is an API run of alice's thread.
        const run = (await json(
          await server.fetch(`/threads/${output.thread_id}/runs/${output.run_id}`, { user: "alice" }),
        )) as { run_id: string; status: string };
        expect(run).toMatchObject({ run_id: output.run_id, status: "success" });
        await expectPaused(output.thread_id, "agent");
      } finally {
        await removeRuntimeFile(server.dataDir, database);
      }
    },
    TIMEOUT_MS,
  );

  it(
    "the in-process CLI on the same Postgres",
    async () => {
      const output = await chat();
      expect(output.interrupts).toHaveLength(1);
      await expectPaused(output.thread_id, "agent");
    },
    TIMEOUT_MS,
  );
});
