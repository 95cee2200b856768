/**
 * Follow-ups complete a pending request (issue 22, item 3), with no model:
 * a study request that lacks its start ends `needs_human` and keeps the
 * question in state (`pending`: what is missing, the request); the next
 * message on the thread is read as the answer first. Through the API (the
 * SDK against the real server, both assistants) and through the CLI (a real
 * process on real Postgres). Assertions are on status, the typed pending
 * record, the interrupt's action requests and the calendar's events.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { createRulesPlanner } from "../../src/domains/rules-planner.js";
import { localDateOf, formatDate } from "../../src/domains/study/time.js";
import { REPO_ROOT } from "../../src/env.js";
import { type Finished, outputOf } from "../support/child-output.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";
import { startTestServer, type TestServer } from "./support/server.js";

const REQUEST = "Plan 5 hours of revision on normalization, max 90 minutes a day, and put it in my calendar";
const PHRASINGS = [
  "Start on 2026-12-05 at 18:00 UTC.",
  "2026-12-05 18:00 UTC",
  "starting December 5th 2026 at 6pm UTC",
];
/** 300 minutes at most 90 a day: four days from 2026-12-05, 18:00 UTC each. */
const STARTS = [
  "2026-12-05T18:00:00+00:00",
  "2026-12-06T18:00:00+00:00",
  "2026-12-07T18:00:00+00:00",
  "2026-12-08T18:00:00+00:00",
];

interface Values {
  status: string;
  pending: { provider: string; request: string; missing: string[]; question: string } | null;
  termination_reason: { code: string; detail: string } | null;
  result: { answer: string; abstained: boolean } | null;
  run: { request: string } | null;
}
interface ActionRequest {
  name: string;
  args: Record<string, unknown>;
}

const ask = (content: string) => ({ input: { messages: [{ role: "user", content }] } });

describe("follow-ups through the API (SDK, real server, rules planner)", () => {
  let server: TestServer;
  let alice: Client;
  beforeAll(async () => {
    server = await startTestServer({ planner: createRulesPlanner() });
    alice = await server.client("alice");
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  async function send(threadId: string, content: string, assistant = "agent"): Promise<Values> {
    return (await alice.runs.wait(threadId, assistant, ask(content))) as unknown as Values;
  }
  async function actionRequests(threadId: string): Promise<ActionRequest[]> {
    const state = await alice.threads.getState(threadId);
    return state.tasks.flatMap((task) =>
      task.interrupts.flatMap((item) => (item.value as { action_requests: ActionRequest[] }).action_requests),
    );
  }
  async function askedForStart(assistant: string): Promise<string> {
    const thread = await alice.threads.create();
    const values = await send(thread.thread_id, REQUEST, assistant);
    expect(values.status).toBe("needs_human");
    expect(values.termination_reason?.detail).toMatch(/^missing_start: on which date/);
    expect(values.pending).toMatchObject({
      provider: "study.follow_up",
      request: REQUEST,
      missing: ["start_date", "start_time", "time_zone"],
    });
    return thread.thread_id;
  }

  for (const assistant of ["agent", "workflow"])
    it.each(PHRASINGS)(`${assistant}: "%s" completes the plan: one review of four sessions`, async (answer) => {
      const threadId = await askedForStart(assistant);
      const values = await send(threadId, answer, assistant);
      expect(values.status).toBe("waiting_approval");
      expect(values.pending).toBeNull();
      const requests = await actionRequests(threadId);
      expect(requests.map((request) => request.name)).toEqual(Array(4).fill("create_study_event"));
      expect(requests.map((request) => request.args["start"])).toEqual(STARTS);
      expect(requests.map((request) => request.args["timezone"])).toEqual(Array(4).fill("UTC"));
      expect(await server.calendarEvents()).toHaveLength(0);
    });

  it("asks again for what an answer still lacks, then goes on; approving writes the four events", async () => {
    const threadId = await askedForStart("agent");
    const partial = await send(threadId, "2026-12-05");
    expect(partial.status).toBe("needs_human");
    expect(partial.termination_reason?.detail).toMatch(/^missing_start: at what time/);
    expect(partial.pending?.missing).toEqual(["start_time", "time_zone"]);
    expect(partial.pending?.request).toContain(REQUEST);
    const complete = await send(threadId, "at 18:00 UTC");
    expect(complete.status).toBe("waiting_approval");
    expect((await actionRequests(threadId)).map((request) => request.args["start"])).toEqual(STARTS);
    const before = (await server.calendarEvents()).length;
    const approved = (await alice.runs.wait(threadId, "agent", {
      command: { resume: { decisions: Array(4).fill({ type: "approve" }) } },
    })) as unknown as Values;
    expect(approved.status).toBe("completed");
    expect((await server.calendarEvents()).length - before).toBe(4);
  });

  it("reads an unrelated question as a new request: it is answered from the notes, the plan is dropped", async () => {
    const threadId = await askedForStart("agent");
    const values = await send(threadId, "What do my notes say about self-attention?");
    expect(values.status).toBe("completed");
    expect(values.termination_reason?.code).toBe("final_answer");
    expect(values.run?.request).toBe("What do my notes say about self-attention?");
    expect(values.pending).toBeNull();
    expect(await actionRequests(threadId)).toEqual([]);
  });
});

function runCli(args: string[], databaseUrl: string): Promise<Finished> {
  const environment: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl };
  const child = spawn(process.execPath, ["--import", "tsx", path.join(REPO_ROOT, "src/cli/chat.ts"), ...args], {
    cwd: REPO_ROOT,
    env: environment,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return outputOf(child);
}

const lastJson = (finished: Finished) =>
  JSON.parse(finished.stdout.trim().split("\n").at(-1) ?? "null") as Values & {
    interrupts: { action_requests: ActionRequest[] }[];
  };

describe("follow-ups through the CLI (real process, real Postgres)", () => {
  let database: TestDatabase;
  const fixture = useSandbox();
  beforeAll(async () => {
    database = fixture.add(await createTestDatabase());
  });

  it.each([...PHRASINGS, "2026-12-05"])(
    "--thread with %j answers the pending question",
    async (answer) => {
      const first = await runCli(["--user", "alice", "--json", REQUEST], database.url);
      expect(first.code).toBe(0);
      expect(lastJson(first).status).toBe("needs_human");
      const threadId = /^thread: ([0-9a-f-]{36})/m.exec(first.stderr)?.[1];
      expect(threadId).toBeDefined();
      const next = await runCli(["--user", "alice", "--json", "--thread", String(threadId), answer], database.url);
      expect(next.code).toBe(0);
      const output = lastJson(next);
      if (answer === "2026-12-05") {
        // Still no time: asked again for exactly that.
        expect(output.status).toBe("needs_human");
        expect(output.termination_reason?.detail).toMatch(/^missing_start: at what time/);
      } else {
        expect(output.status).toBe("waiting_approval");
        const requests = output.interrupts.flatMap((item) => item.action_requests);
        expect(requests.map((request) => request.args["start"])).toEqual(STARTS);
      }
    },
    120_000,
  );

  it("prints the question as the last line, above the prompt, and the answer resolves 'tomorrow evening' in the zone given", async () => {
    const request = "can you schedule 2 hours of attention study for me tomorrow evening?";
    const first = await runCli(["--user", "alice", request], database.url);
    expect(first.code).toBe(0);
    const threadId = /^thread: ([0-9a-f-]{36})/m.exec(first.stderr)?.[1];
    expect(threadId).toBeDefined();
    const lines = first.stdout.trimEnd().split("\n");
    // alice's profile names no zone: the one question asks for the time and the zone.
    expect(lines.at(-1)).toMatch(/^At what time tomorrow evening, and in which time zone, should the study start\?/);
    expect(lines.at(-2)).toBe(`answer with: npm run chat -- --user alice --thread ${threadId} "<your answer>"`);
    expect(lines.at(-3)).toBe("termination: needs_human: a question for you (missing_start)");
    expect(first.stdout).not.toMatch(/^thread:/m);
    expect(first.stdout).not.toContain("can you schedule hours");

    const next = await runCli(
      ["--user", "alice", "--json", "--thread", String(threadId), "19:00 Europe/Berlin"],
      database.url,
    );
    expect(next.code).toBe(0);
    const output = lastJson(next);
    expect(output.status).toBe("waiting_approval");
    const requests = output.interrupts.flatMap((item) => item.action_requests);
    const tomorrow = formatDate(localDateOf(Date.now() + 86_400_000, "Europe/Berlin"));
    expect(requests.map((item) => [item.args["start"], item.args["timezone"]])).toEqual([
      [expect.stringMatching(new RegExp(`^${tomorrow}T19:00:00\\+0[12]:00$`)), "Europe/Berlin"],
    ]);
  }, 120_000);

  it("says a run paused for review after the answer waits for review, never that it has not finished", async () => {
    const first = await runCli(["--user", "alice", "schedule 45 minutes of dropout tomorrow evening"], database.url);
    expect(first.code).toBe(0);
    const threadId = /^thread: ([0-9a-f-]{36})/m.exec(first.stderr)?.[1];
    expect(threadId).toBeDefined();
    // Not a TTY: the card is printed with the command that decides it, and the run stays paused.
    const next = await runCli(["--user", "alice", "--thread", String(threadId), "19:00 Europe/Berlin"], database.url);
    expect(next.code).toBe(0);
    expect(next.stdout).toMatch(/^termination: none yet, waiting for review$/m);
    expect(next.stdout).not.toMatch(/not finished/);
    expect(next.stdout).not.toMatch(/^thread:/m);
  }, 120_000);

  it("takes an unrelated question on the same thread as a new request", async () => {
    const first = await runCli(["--user", "alice", "--json", REQUEST], database.url);
    const threadId = /^thread: ([0-9a-f-]{36})/m.exec(first.stderr)?.[1];
    const next = await runCli(
      ["--user", "alice", "--json", "--thread", String(threadId), "What do my notes say about self-attention?"],
      database.url,
    );
    expect(next.code).toBe(0);
    const output = lastJson(next);
    expect(output.status).toBe("completed");
    expect(output.termination_reason?.code).toBe("final_answer");
  }, 120_000);
});
