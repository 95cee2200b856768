/**
 * The README's quick start in its own order, on the embedded database (no
 * DATABASE_URL): `npm start`, then `npm run chat` with the headline command
 * answered at a pseudo-terminal (`script` from util-linux), `trace` of the
 * run id it printed, `audit -- verify` and `tools -- list`, all while the
 * server runs (the CLI finds it through `.data/server.json` and goes
 * through its API). rita finds the paused review in `GET /reviews`, alice
 * finds the thread `interrupted` in her list. Then the honest exits: Ctrl-C
 * prints the thread and the command that continues it (exit 130), `--resume`
 * with nothing pending exits 1 with `no_pending_interrupt`, through the
 * server and in-process; a review the in-process CLI paused reaches the inbox
 * of the server started afterwards.
 */
import { spawn } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintApiToken, loadApiSecret } from "../../src/auth/api-token.js";
import { findPrincipal, loadPrincipalDirectory } from "../../src/auth/principal.js";
import { REPO_ROOT } from "../../src/env.js";
import { type Finished, outputOf } from "../support/child-output.js";
import { spawnServer, waitUntil, type ServerProcess } from "./support/server-process.js";
import { BROWSER_TESTS_RUN, buildPage, launchBrowser, type TestBrowser } from "./support/browser.js";
import { storedCalendarEvents } from "./support/calendar.js";

// The README's headline command (quick start).
const HEADLINE =
  "Use my notes to plan 120 minutes of attention study over 3 days, at most 60 minutes a day, " +
  "starting 2026-12-02 at 18:00 UTC, and put it in my calendar";
const TIMEOUT_MS = 300_000;

let dataDir: string;
let server: ServerProcess | undefined;
let env: Record<string, string>;
let browser: TestBrowser | undefined;

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "warrant-quickstart-"));
  // What `npm start` sees on a fresh clone, with the data directory (and the calendar file) in a scratch place.
  env = {
    PATH: process.env["PATH"] ?? "/usr/bin:/bin",
    HOME: process.env["HOME"] ?? os.tmpdir(),
    WARRANT_DATA_DIR: dataDir,
    WARRANT_CALENDAR_DATA: path.join(dataDir, "calendar.json"),
    HOST: "127.0.0.1",
    PORT: "0",
  };
  // `npm start` builds the page first (prestart); the server spawned here does not.
  if (BROWSER_TESTS_RUN) buildPage();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.kill();
  await fs.rm(dataDir, { recursive: true, force: true });
});

function run(script: string, args: string[]): Promise<Finished> {
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return outputOf(child);
}
const chat = (...args: string[]) => run("src/cli/chat.ts", args);

/**
 * Runs the chat CLI at a pseudo-terminal and answers each prompt matching
 * `prompt` with the next of `answers` (a string is a line, `\x03` Ctrl-C,
 * `\x04` end of input). Resolves with the exit code and the whole screen.
 */
function atTerminal(
  args: string[],
  prompt: RegExp,
  answers: string[],
): Promise<{ code: number | null; screen: string }> {
  const command = [process.execPath, "--import", "tsx", "src/cli/chat.ts", ...args]
    .map((part) => `'${part}'`)
    .join(" ");
  const child = spawn("script", ["-qfec", command, "/dev/null"], {
    cwd: REPO_ROOT,
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let screen = "";
  let answered = 0;
  child.stdout.on("data", (chunk: Buffer) => {
    screen += chunk.toString();
    const asked = (screen.match(new RegExp(prompt.source, "g")) ?? []).length;
    while (answered < asked && answered < answers.length) {
      const answer = answers[answered] ?? "";
      answered += 1;
      child.stdin.write(answer.length === 1 && answer < " " ? answer : `${answer}\r`);
    }
  });
  return new Promise((resolve) => {
    child.on("close", (code) => resolve({ code, screen }));
    setTimeout(() => child.kill("SIGKILL"), TIMEOUT_MS - 30_000).unref();
  });
}

async function fetchAs(
  user: string,
  pathname: string,
  init: RequestInit = {},
): Promise<{ status: number; body: unknown }> {
  const secret = await loadApiSecret({ configured: undefined, dataDir });
  const directory = await loadPrincipalDirectory(path.join(REPO_ROOT, "src/domains/dev-principals.json"));
  const token = await mintApiToken(secret, findPrincipal(directory, user));
  const response = await fetch(`${server?.url}${pathname}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
  });
  return { status: response.status, body: await response.json() };
}

const ACTION_PROMPT = /\(r\)eject\? /;
const runIdOf = (text: string) => /thread: ([0-9a-f-]{36})\s+run: ([0-9a-f-]{36})/.exec(text);

describe("the quick start, in the README's order, on the embedded database", () => {
  let threadId = "";

  it(
    "npm start; chat at a terminal pauses for review; trace, audit verify, tools list go through the running server",
    async () => {
      server = await spawnServer(env);
      const runtimeFile = JSON.parse(await fs.readFile(path.join(dataDir, "server.json"), "utf8")) as {
        url: string;
        pid: number;
      };
      expect(runtimeFile).toMatchObject({ url: server.url, pid: server.pid });

      // Three approval cards; end of input at the first question leaves the review pending, with its --resume line.
      const paused = await atTerminal(["--user", "alice", "--idempotency-key", "plan-1", HEADLINE], ACTION_PROMPT, [
        "\x04",
      ]);
      expect(paused.code, paused.screen).toBe(0);
      expect(paused.screen).toMatch(/waiting for approval: 3 action\(s\)/);
      expect(paused.screen).not.toMatch(/database_unreachable/);
      const ids = runIdOf(paused.screen);
      expect(ids, paused.screen).not.toBeNull();
      threadId = ids?.[1] ?? "";
      const runId = ids?.[2] ?? "";
      expect(paused.screen).toContain(`--thread ${threadId} --resume`);

      // The run executed on the server: the API knows it by the id the CLI printed.
      const apiRun = await fetchAs("alice", `/threads/${threadId}/runs/${runId}`);
      expect(apiRun).toMatchObject({ status: 200, body: { run_id: runId, status: "success" } });

      const trace = await run("src/cli/trace.ts", [runId, "--json"]);
      expect(trace.code, trace.stderr).toBe(0);
      expect(JSON.parse(trace.stdout)).toMatchObject({ thread_id: threadId, owner: "alice", graph_id: "agent" });

      const audit = await run("src/cli/audit.ts", ["verify", "--json"]);
      expect(audit.code, audit.stderr).toBe(0);
      expect(JSON.parse(audit.stdout)).toMatchObject({ ok: true });
      expect((JSON.parse(audit.stdout) as { runs: number }).runs).toBeGreaterThan(0);

      const tools = await run("src/cli/tools.ts", ["list", "--json"]);
      expect(tools.code, tools.stderr).toBe(0);
      const rows = JSON.parse(tools.stdout) as {
        tool: string;
        server: string;
        risk: string;
        pin: string;
        pinned_hash: string;
      }[];
      expect(rows.find((row) => row.tool === "create_study_event")).toMatchObject({
        server: "calendar",
        risk: "write_reversible",
        pin: "pinned",
        pinned_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      });
      const diff = await run("src/cli/tools.ts", ["diff", "create_study_event"]);
      expect(diff.code, diff.stderr).toBe(0);
      expect(diff.stdout).toMatch(/^create_study_event: served as pinned \(sha256:[0-9a-f]{64}\)$/m);
      expect(diff.stderr).not.toMatch(/could not list/);
    },
    TIMEOUT_MS,
  );

  it("rita finds the CLI-paused review in GET /reviews; alice finds the thread interrupted", async () => {
    const inbox = await fetchAs("rita", "/reviews");
    const reviews = (
      inbox.body as { reviews: { thread_id: string; owner: string; review: { action_requests: unknown[] } }[] }
    ).reviews;
    const entry = reviews.find((review) => review.thread_id === threadId);
    expect(entry).toMatchObject({ owner: "alice" });
    expect(entry?.review.action_requests).toHaveLength(3);
    const listed = await fetchAs("alice", "/threads/search", {
      method: "POST",
      body: JSON.stringify({ status: "interrupted", limit: 100 }),
    });
    expect(listed.body).toEqual(
      expect.arrayContaining([expect.objectContaining({ thread_id: threadId, status: "interrupted" })]),
    );
    expect((await fetchAs("alice", `/threads/${threadId}`)).body).toMatchObject({ metadata: { graph_id: "agent" } });
  });

  it.runIf(BROWSER_TESTS_RUN)(
    "rita finds the CLI-paused review in the page's inbox (Chromium)",
    async () => {
      browser = await launchBrowser();
      const rita = await browser.page();
      await rita.goto(server?.url ?? "");
      await rita.getByRole("button", { name: /^Rita\b/ }).click();
      await rita.getByRole("button", { name: "Reviews", exact: true }).click();
      const entry = rita.locator("ul.reviews button", { hasText: "alice: Use my notes to plan" });
      await entry.first().click();
      await rita.getByRole("region", { name: /Review needed: 3 action/ }).waitFor();
      await browser.screenshot(rita, "quickstart-cli-review-in-inbox");
      await rita.close();
    },
    TIMEOUT_MS,
  );

  it(
    "Ctrl-C at the review prompt prints the thread and the command that continues it; that command shows the review again",
    async () => {
      const stopped = await atTerminal(["--user", "alice", "--thread", threadId], ACTION_PROMPT, ["\x03"]);
      expect(stopped.code, stopped.screen).toBe(130);
      const command = `npm run chat -- --user alice --thread ${threadId}`;
      expect(stopped.screen).toContain(`warrant: interrupted: thread ${threadId}`);
      expect(stopped.screen).toContain(`continue with: ${command}`);
      // The printed command, as a script runs it (not at a terminal: the card and the --resume line).
      const continued = await chat("--user", "alice", "--thread", threadId, "--json");
      expect(continued.code, continued.stderr).toBe(0);
      expect(JSON.parse(continued.stdout)).toMatchObject({ thread_id: threadId, interrupts: [expect.anything()] });
    },
    TIMEOUT_MS,
  );

  it(
    "approving through the server; --resume with nothing pending exits 1 with no_pending_interrupt; the resume's run id is traceable",
    async () => {
      const approved = await chat(
        "--user",
        "alice",
        "--thread",
        threadId,
        "--json",
        "--resume",
        '{"decisions":[{"type":"approve"},{"type":"approve"},{"type":"approve"}]}',
      );
      expect(approved.code, approved.stderr).toBe(0);
      expect(JSON.parse(approved.stdout)).toMatchObject({ status: "completed", interrupts: [] });
      expect(await storedCalendarEvents(env["WARRANT_CALENDAR_DATA"] ?? "")).toHaveLength(3);
      const resumeRun = runIdOf(approved.stderr)?.[2] ?? "";
      const trace = await run("src/cli/trace.ts", [resumeRun, "--json"]);
      expect(trace.code, trace.stderr).toBe(0);
      expect(JSON.parse(trace.stdout)).toMatchObject({ thread_id: threadId });

      const again = await chat(
        "--user",
        "alice",
        "--thread",
        threadId,
        "--resume",
        '{"decisions":[{"type":"approve"}]}',
      );
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/^warrant: no_pending_interrupt: /m);
      expect(await storedCalendarEvents(env["WARRANT_CALENDAR_DATA"] ?? "")).toHaveLength(3);
    },
    TIMEOUT_MS,
  );

  it(
    "after the server stops: the in-process CLI refuses an empty --resume the same way, " +
      "and its paused review reaches the next server's inbox",
    async () => {
      server?.signal("SIGTERM");
      expect(await server?.exited).toMatchObject({ code: 0 });
      await waitUntil(
        async () =>
          !(await fs.stat(path.join(dataDir, "server.json")).then(
            () => true,
            () => false,
          )),
        "the runtime file to be removed",
      );
      server = undefined;

      const again = await chat(
        "--user",
        "alice",
        "--thread",
        threadId,
        "--resume",
        '{"decisions":[{"type":"approve"}]}',
      );
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/^warrant: no_pending_interrupt: /m);

      const local = await chat("--user", "alice", "--json", HEADLINE.replace("2026-12-02", "2026-12-09"));
      expect(local.code, local.stderr).toBe(0);
      const output = JSON.parse(local.stdout) as { thread_id: string; run_id: string; interrupts: unknown[] };
      expect(output.interrupts).toHaveLength(1);
      const trace = await run("src/cli/trace.ts", [output.run_id, "--json"]);
      expect(trace.code, trace.stderr).toBe(0);
      // Ctrl-C in-process, at the review prompt: the same two lines, exit 130.
      const stopped = await atTerminal(["--user", "alice", "--thread", output.thread_id], ACTION_PROMPT, ["\x03"]);
      expect(stopped.code, stopped.screen).toBe(130);
      expect(stopped.screen).toContain(`continue with: npm run chat -- --user alice --thread ${output.thread_id}`);

      server = await spawnServer(env);
      const inbox = await fetchAs("rita", "/reviews");
      expect((inbox.body as { reviews: { thread_id: string; owner: string }[] }).reviews).toContainEqual(
        expect.objectContaining({ thread_id: output.thread_id, owner: "alice" }),
      );
    },
    TIMEOUT_MS,
  );
});
