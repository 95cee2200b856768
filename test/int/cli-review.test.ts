/**
 * The terminal CLI as a user runs it, on a real Postgres server database:
 * thread ownership (another user's or an unknown thread is
 * `thread_not_found`), `--idempotency-key` (a repeat prints the earlier run
 * and starts nothing), the approval card with its `--resume` line when not
 * at a TTY, and the approve / edit / reject prompt at a pseudo-terminal
 * (`script` from util-linux). Calendar writes come from the model planner on
 * a fake OpenAI endpoint; the calendar child keeps its events in the same
 * database, where they are counted.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { finalReply } from "../support/scripted-model.js";
import { REPO_ROOT } from "../../src/env.js";
import { type Finished, outputOf, warrantLines } from "../support/child-output.js";
import { databaseCalendarEvents } from "./support/calendar.js";
import { startFakeOpenAI, type FakeOpenAI, type ScriptedCompletion } from "./support/fake-openai.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";

const CLI = path.join(REPO_ROOT, "src/cli/chat.ts");
const QUESTION = "Compare self-attention with cross-attention using my notes";
// Each CLI process starts tsx and the MCP servers: tens of seconds on a loaded machine.
const TIMEOUT_MS = 300_000;

const fixture = useSandbox();
let database: TestDatabase;
let fake: FakeOpenAI;
let configDirectory: string;
beforeAll(async () => {
  database = fixture.add(await createTestDatabase());
  fake = fixture.add(await startFakeOpenAI());
  // The shipped config without caseops (an HTTP server these tests never use): fewer processes to start per CLI run.
  configDirectory = await fixture.tempDir("cli-review-");
  const shipped = JSON.parse(await readFile(path.join(REPO_ROOT, "warrant.config.json"), "utf8")) as {
    servers: Record<string, unknown>;
    tools: Record<string, { server: string }>;
  };
  delete shipped.servers["caseops"];
  shipped.tools = Object.fromEntries(
    Object.entries(shipped.tools).filter(([, contract]) => contract.server !== "caseops"),
  );
  await writeFile(path.join(configDirectory, "warrant.config.json"), JSON.stringify(shipped));
});

function environment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: database.url,
    WARRANT_CONFIG: path.join(configDirectory, "warrant.config.json"),
    ...extra,
  };
}

function runCli(args: string[], extra: Record<string, string> = {}): Promise<Finished> {
  return outputOf(
    spawn(process.execPath, ["--import", "tsx", CLI, ...args], {
      cwd: REPO_ROOT,
      env: environment(extra),
      stdio: ["ignore", "pipe", "pipe"],
    }),
  );
}

type JsonOutput = {
  thread_id: string;
  run_id: string;
  replayed: boolean;
  status: string;
  ledger: { tool: string; status: string }[];
  interrupts: unknown[];
  resume_command?: string;
};
const jsonOutput = (finished: Finished): JsonOutput =>
  JSON.parse(finished.stdout.trim().split("\n").at(-1) ?? "") as JsonOutput;

async function sql(query: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return (await client.query(query, params)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

const USAGE = { prompt_tokens: 10, completion_tokens: 5 };
const modelEnv = () => ({ WARRANT_PLANNER: "model", WARRANT_MODEL: "fake-model", OPENAI_BASE_URL: fake.baseUrl });
const booking = (day: number) => ({
  title: `Attention study ${day}`,
  start: `2026-12-0${day}T18:00:00Z`,
  end: `2026-12-0${day}T19:00:00Z`,
  timezone: "UTC",
  calendar: "study",
});
const proposeWrites = (...days: number[]): ScriptedCompletion => ({
  kind: "completion",
  tool_calls: days.map((day) => ({
    id: `call_book_${day}_${randomUUID().slice(0, 8)}`,
    name: "create_study_event",
    arguments: JSON.stringify(booking(day)),
  })),
  finish_reason: "tool_calls",
  usage: USAGE,
});
const eventsTitled = async (prefix: string) =>
  (await databaseCalendarEvents(database.url)).filter((row) => String(row["title"]).startsWith(prefix));

describe("CLI thread ownership", () => {
  it(
    "refuses another user's thread, an unknown one and a mistyped id with one thread_not_found line",
    async () => {
      const alice = await runCli(["--user", "alice", "--json", QUESTION]);
      expect(alice.code, alice.stderr).toBe(0);
      const threadId = jsonOutput(alice).thread_id;
      // The thread id is the first thing on stderr, and the thread is alice's in warrant.threads.
      expect(alice.stderr).toMatch(new RegExp(`^thread: ${threadId}`, "m"));
      expect(await sql("select owner, tenant from warrant.threads where thread_id = $1", [threadId])).toEqual([
        { owner: "alice", tenant: "uni" },
      ]);
      const ledgerBefore = await sql("select count(*)::int as n from warrant.ledger where thread_id = $1", [threadId]);

      for (const args of [
        ["--user", "bob", "--thread", threadId, "--json"],
        ["--user", "bob", "--thread", threadId, "What is BM25?"],
        ["--user", "bob", "--thread", threadId, "--resume", '{"decisions":[{"type":"approve"}]}'],
        ["--user", "alice", "--thread", randomUUID(), "--json"],
        ["--user", "alice", "--thread", "t1-mistyped", "--json"],
      ]) {
        const refused = await runCli(args);
        expect({ args, code: refused.code }).toEqual({ args, code: 1 });
        expect(warrantLines(refused.stderr)).toHaveLength(1);
        expect(warrantLines(refused.stderr)[0]).toMatch(/^warrant: thread_not_found: /);
        expect(refused.stderr).not.toMatch(/TypeError|^\s+at /m);
        // Nothing of the thread is printed.
        expect(refused.stdout).toBe("");
      }
      expect(await sql("select count(*)::int as n from warrant.ledger where thread_id = $1", [threadId])).toEqual(
        ledgerBefore,
      );
      // The owner still can.
      const owner = await runCli(["--user", "alice", "--thread", threadId, "--json"]);
      expect(owner.code).toBe(0);
      expect(jsonOutput(owner).status).toBe("completed");
    },
    TIMEOUT_MS,
  );
});

describe("CLI --idempotency-key", () => {
  it(
    "a repeated command with the same key prints the earlier run and starts nothing; another command with it is refused",
    async () => {
      const key = `cli-${randomUUID()}`;
      const first = await runCli(["--user", "alice", "--idempotency-key", key, "--json", QUESTION]);
      expect(first.code, first.stderr).toBe(0);
      const output = jsonOutput(first);
      expect(output).toMatchObject({ replayed: false, status: "completed" });
      const recorded = await sql(
        "select owner, thread_id::text as thread_id, run_id::text as run_id from warrant.run_idempotency where idempotency_key = $1",
        [key],
      );
      expect(recorded).toEqual([{ owner: "alice", thread_id: output.thread_id, run_id: output.run_id }]);
      const ledger = await sql("select count(*)::int as n from warrant.ledger where thread_id = $1", [
        output.thread_id,
      ]);

      const again = await runCli(["--user", "alice", "--idempotency-key", key, "--json", QUESTION]);
      expect(again.code).toBe(0);
      expect(jsonOutput(again)).toMatchObject({
        replayed: true,
        thread_id: output.thread_id,
        run_id: output.run_id,
        status: "completed",
      });
      // No MCP server was even started, and nothing was executed.
      expect(again.stderr).not.toMatch(/\[notes\] ready/);
      expect(
        await sql("select count(*)::int as n from warrant.ledger where thread_id = $1", [output.thread_id]),
      ).toEqual(ledger);
      expect(
        await sql("select count(*)::int as n from warrant.threads where owner = 'alice' and thread_id = $1", [
          output.thread_id,
        ]),
      ).toEqual([{ n: 1 }]);

      const other = await runCli(["--user", "alice", "--idempotency-key", key, "--json", "What is BM25?"]);
      expect(other.code).toBe(1);
      expect(warrantLines(other.stderr)).toEqual([expect.stringMatching(/^warrant: idempotency_key_reused: /)]);

      const badKey = await runCli(["--user", "alice", "--idempotency-key", "k".repeat(256), QUESTION]);
      expect(badKey.code).toBe(2);
    },
    TIMEOUT_MS,
  );
});

describe("CLI review", () => {
  it(
    "not at a TTY: prints the approval card and the exact --resume command, which then writes each event once",
    async () => {
      fake.enqueue(proposeWrites(2, 3));
      const paused = await runCli(["--user", "alice", "Book two attention study sessions in my calendar"], modelEnv());
      expect(paused.code).toBe(0);
      const threadId = /^thread: (\S+)/m.exec(paused.stderr)?.[1] ?? "";
      expect(paused.stdout).toMatch(/waiting for approval: 2 action\(s\)/);
      for (const expected of [
        /\[1\] Add to calendar study: /,
        /\[2\] Add to calendar study: /,
        /Calendar\s+study/,
        /Starts\s+Wed 2 Dec, \d{2}:00/,
        /Ends\s+Thu 3 Dec, \d{2}:00/,
        /Time zone\s+UTC/,
        /Details\s+tool create_study_event · action \S+/,
        /Expires\s+\w{3} \d{1,2} \w{3}, \d{2}:\d{2}/,
      ]) {
        expect(paused.stdout).toMatch(expected);
      }
      const command = /^ {2}(npm run chat -- .*)$/m.exec(paused.stdout)?.[1] ?? "";
      expect(command).toContain(`--thread ${threadId}`);
      const resumeJson = /--resume '([^']+)'/.exec(command)?.[1] ?? "";
      const decisions = (JSON.parse(resumeJson) as { decisions: { type: string; action_id: string }[] }).decisions;
      expect(decisions.map((decision) => decision.type)).toEqual(["approve", "approve"]);
      expect(await eventsTitled("Attention study")).toHaveLength(0);

      // The printed command, as a script would run it.
      fake.enqueue(finalReply("Both sessions are in your calendar.", USAGE));
      const resumed = await runCli(
        ["--user", "alice", "--thread", threadId, "--resume", resumeJson, "--json"],
        modelEnv(),
      );
      expect(resumed.code).toBe(0);
      const output = jsonOutput(resumed);
      expect(output.status).toBe("completed");
      expect(output.ledger.filter((row) => row.tool === "create_study_event").map((row) => row.status)).toEqual([
        "succeeded",
        "succeeded",
      ]);
      expect((await eventsTitled("Attention study")).map((row) => row["title"]).sort()).toEqual([
        "Attention study 2",
        "Attention study 3",
      ]);
      expect(fake.pending()).toBe(0);
    },
    TIMEOUT_MS,
  );

  it(
    "at a TTY: asks per action; edit (after a non-JSON answer) writes the edited event, reject writes none",
    async () => {
      fake.enqueue(proposeWrites(4, 5), finalReply("One session booked, one rejected.", USAGE));
      const command = [
        process.execPath,
        "--import",
        "tsx",
        CLI,
        "--user",
        "bob",
        "Book two attention study sessions in my calendar",
      ]
        .map((part) => `'${part}'`)
        .join(" ");
      // `script` gives the CLI a pseudo-terminal on stdin, stdout and stderr.
      const child = spawn("script", ["-qfec", command, "/dev/null"], {
        cwd: REPO_ROOT,
        env: environment(modelEnv()),
        stdio: ["pipe", "pipe", "pipe"],
      });
      const edited = { ...booking(4), title: "Edited attention study" };
      const answers = ["e", "{not json", JSON.stringify(edited), "r", "not this week"];
      let screen = "";
      let prompts = 0;
      child.stdout?.on("data", (chunk: Buffer) => {
        screen += chunk.toString();
        // One answer per prompt: the action question, the arguments question, the reason question.
        const asked = (screen.match(/\(r\)eject\? |JSON object\): |for none\): /g) ?? []).length;
        while (prompts < asked && answers.length > 0) {
          prompts += 1;
          child.stdin?.write(`${answers.shift()}\r`);
        }
      });
      const code = await new Promise<number | null>((resolve) => {
        child.on("error", () => resolve(null));
        child.on("close", resolve);
        // Fail with the screen rather than hang.
        setTimeout(() => child.kill("SIGKILL"), TIMEOUT_MS - 30_000).unref();
      });
      expect(code, screen).toBe(0);
      expect(screen).toMatch(/waiting for approval: 2 action\(s\)/);
      expect(screen).toMatch(/not valid JSON; try again/);
      expect(screen).toMatch(/status: completed/);
      expect((await eventsTitled("Edited attention")).map((row) => row["user_id"])).toEqual(["bob"]);
      expect(await eventsTitled("Attention study 5")).toHaveLength(0);
      expect(fake.pending()).toBe(0);
    },
    TIMEOUT_MS,
  );
});
