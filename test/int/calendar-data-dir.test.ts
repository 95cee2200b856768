/**
 * `WARRANT_DATA_DIR` moves the calendar's store file with the rest of the
 * data (issue 22): on the embedded database (no DATABASE_URL, so the
 * calendar keeps a file), an approved session through the terminal entry
 * point lands in `<WARRANT_DATA_DIR>/calendar.json`, not in the checkout's
 * `.data/`. Real processes: the CLI and its MCP children.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { REPO_ROOT } from "../../src/env.js";
import { type Finished, outputOf } from "../support/child-output.js";
import { storedCalendarEvents } from "./support/calendar.js";
import { createEmbeddedDir, type EmbeddedDir } from "./support/postgres.js";

const REQUEST = "Put a 40 minute study session for attention on 2026-12-02 at 18:00 UTC in my calendar";
const CHECKOUT_CALENDAR = path.join(REPO_ROOT, ".data", "calendar.json");

function runCli(args: string[], dataDir: string): Promise<Finished> {
  const environment: NodeJS.ProcessEnv = { ...process.env, WARRANT_DATA_DIR: dataDir };
  delete environment["DATABASE_URL"];
  delete environment["WARRANT_CALENDAR_DATA"];
  const child = spawn(process.execPath, ["--import", "tsx", path.join(REPO_ROOT, "src/cli/chat.ts"), ...args], {
    cwd: REPO_ROOT,
    env: environment,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return outputOf(child);
}

async function checkoutCalendar(): Promise<string | null> {
  return existsSync(CHECKOUT_CALENDAR) ? fs.readFile(CHECKOUT_CALENDAR, "utf8") : null;
}

describe("WARRANT_DATA_DIR and the calendar file", () => {
  let directory: EmbeddedDir;
  const fixture = useSandbox();
  beforeAll(async () => {
    directory = fixture.add(await createEmbeddedDir());
  });

  it("an approved session is stored in <WARRANT_DATA_DIR>/calendar.json, the checkout's file untouched", async () => {
    const before = await checkoutCalendar();
    const paused = await runCli(["--user", "alice", "--json", REQUEST], directory.dir);
    expect(paused.code, paused.stderr).toBe(0);
    const threadId = /^thread: ([0-9a-f-]{36})/m.exec(paused.stderr)?.[1];
    expect(threadId).toBeDefined();
    const approved = await runCli(
      ["--user", "alice", "--json", "--thread", String(threadId), "--resume", '{"decisions":[{"type":"approve"}]}'],
      directory.dir,
    );
    expect(approved.code, approved.stderr).toBe(0);
    expect(JSON.parse(approved.stdout.trim().split("\n").at(-1) ?? "{}").status).toBe("completed");
    const events = await storedCalendarEvents(path.join(directory.dir, "calendar.json"));
    expect(events.map((event) => [event["user_id"], event["start"]])).toEqual([["alice", "2026-12-02T18:00:00+00:00"]]);
    expect(await checkoutCalendar()).toBe(before);
  }, 180_000);
});
