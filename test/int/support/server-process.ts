/**
 * The API server as a child process, started the way `npm start` starts it
 * (`node --import tsx src/server/main.ts`), for tests that need real process
 * boundaries: signals, restarts, crashes, two servers on one Postgres.
 *
 * Each server is spawned detached, so it leads its own process group and its
 * MCP children are in that group: `livePids()` answers "did anything
 * outlive it" by pid, and `kill()` removes the whole group.
 *
 * A `ServerSandbox` owns what servers share: a throwaway database, a data
 * directory, a signing secret and a calendar file. `cleanup()` kills every
 * server it started (whole groups), drops its database and removes its
 * directory, and nothing else.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { noteApiServer } from "../../support/record-traffic.js";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "@langchain/langgraph-sdk";
import { mintApiToken } from "../../../src/auth/api-token.js";
import { findPrincipal, loadPrincipalDirectory } from "../../../src/auth/principal.js";
import { REPO_ROOT } from "../../../src/env.js";
import { createTestDatabase, type TestDatabase } from "./postgres.js";
import { databaseCalendarEvents, storedCalendarEvents } from "./calendar.js";
import { fetchAs } from "./http.js";

const PRINCIPALS_PATH = path.join(REPO_ROOT, "src/domains/dev-principals.json");
const LISTENING = /^warrant listening on (http:\/\/\S+)$/;
/** Output kept per server for failure messages. */
const MAX_LOG_CHARS = 200_000;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServerProcess {
  /** Also its process group id. */
  pid: number;
  url: string;
  /** Everything the server and its MCP children wrote to stderr so far. */
  stderr(): string;
  /** Resolves when `stderr` contains `text` (polling), rejects after `timeoutMs`. */
  waitForStderr(text: string, timeoutMs?: number): Promise<void>;
  /** Resolves once the server process has exited. */
  exited: Promise<Exit>;
  /** Sends a signal to the server process only (not to its group). */
  signal(signal: NodeJS.Signals): void;
  /** Live (non-zombie) processes of its process group: the server and its MCP children. */
  livePids(): Promise<number[]>;
  /** SIGKILLs the whole group and waits until nothing in it is alive. */
  kill(): Promise<void>;
}

/** Live, non-zombie processes whose process group is `groupId` (Linux /proc). */
export async function processGroup(groupId: number): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await fs.readdir("/proc")) {
    if (!/^[0-9]+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = await fs.readFile(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited while we looked
    }
    // The command name is in parentheses and may contain spaces: fields start after the last ")".
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(pgrp) === groupId && state !== "Z" && state !== "X") pids.push(Number(entry));
  }
  return pids;
}

/** Polls `condition` every 50 ms; throws naming `what` after `timeoutMs`. */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

/** CPU time (clock ticks, utime + stime) used so far by the live processes of process group `groupId`. */
export async function groupCpuTicks(groupId: number): Promise<number> {
  let ticks = 0;
  for (const pid of await processGroup(groupId)) {
    try {
      const stat = await fs.readFile(`/proc/${pid}/stat`, "utf8");
      // After the command name: state is field 3, utime and stime are fields 14 and 15.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // exited while we looked
    }
  }
  return ticks;
}

/** How long a starting server may go without using CPU or writing a line before it counts as stuck. */
const START_STALL_MS = 30_000;
/** CPU a starting server's process group must use per stall window to count as working (clock ticks: 0.1 s). */
const START_PROGRESS_TICKS = 10;
/** Polling of a starting server's progress. */
const START_POLL_MS = 1_000;

/**
 * Starts `node --import tsx src/server/main.ts` with exactly `env` (plus PATH,
 * HOME and `WARRANT_WORKERS=1` unless `env` sets it) and resolves once it prints `warrant listening on <url>`.
 *
 * A start is judged by its progress, not by the wall clock: on a loaded
 * machine the server and its four MCP children (each transpiling and loading
 * its modules) get a fraction of a core, and a start that takes 3 s alone
 * takes 15–20 s beside other test runs and longer still under heavier load.
 * It fails when the process group neither used CPU nor wrote output for
 * `START_STALL_MS` (stuck: a lock, a child that never answers), or past
 * `limitMs` as a last resort (below the callers' hook timeouts, so the
 * failure names the server's output).
 */
export async function spawnServer(env: Record<string, string>, limitMs = 170_000): Promise<ServerProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/server/main.ts"], {
    cwd: REPO_ROOT,
    // One process unless the test asks for workers: what most tests signal, kill and count is that process.
    env: {
      PATH: process.env["PATH"] ?? "/usr/bin:/bin",
      HOME: process.env["HOME"] ?? os.tmpdir(),
      WARRANT_WORKERS: "1",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error("the server process did not start");
  let stderr = "";
  let stdout = "";
  child.stderr!.setEncoding("utf8").on("data", (text: string) => {
    stderr = (stderr + text).slice(-MAX_LOG_CHARS);
  });
  const exited = new Promise<Exit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const lines = createInterface({ input: child.stdout! });
  const url = new Promise<string>((resolve, reject) => {
    lines.on("line", (line) => {
      stdout = `${stdout + line}\n`.slice(-MAX_LOG_CHARS);
      const match = LISTENING.exec(line.trim());
      if (match?.[1]) resolve(match[1]);
    });
    void exited.then(({ code, signal }) =>
      reject(new Error(`the server exited (${code ?? signal}) before listening:\n${stdout}${stderr}`)),
    );
  });
  const server: ServerProcess = {
    pid,
    url: "",
    stderr: () => stderr,
    waitForStderr: (text, wait = 20_000) =>
      waitUntil(() => stderr.includes(text), `${JSON.stringify(text)} on the server's stderr`, wait),
    exited,
    signal: (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    livePids: () => processGroup(pid),
    kill: () => killGroup(child, pid),
  };
  const startedAt = Date.now();
  let listening = false;
  const stalled = async (): Promise<never> => {
    let progressAt = Date.now();
    let ticks = await groupCpuTicks(pid);
    let output = stdout.length + stderr.length;
    while (!listening) {
      await sleep(START_POLL_MS);
      const nowTicks = await groupCpuTicks(pid);
      const nowOutput = stdout.length + stderr.length;
      if (nowTicks - ticks >= START_PROGRESS_TICKS || nowOutput !== output) {
        progressAt = Date.now();
        ticks = nowTicks;
        output = nowOutput;
      }
      const took = Date.now() - startedAt;
      if (Date.now() - progressAt >= START_STALL_MS)
        throw new Error(
          `the server made no progress for ${START_STALL_MS} ms (started ${took} ms ago):\n${stdout}${stderr}`,
        );
      if (took >= limitMs)
        throw new Error(`the server did not print its URL within ${limitMs} ms:\n${stdout}${stderr}`);
    }
    return new Promise<never>(() => undefined);
  };
  try {
    server.url = await Promise.race([url, stalled()]);
    noteApiServer(server.url);
  } catch (error) {
    listening = true;
    await killGroup(child, pid);
    throw error;
  }
  listening = true;
  return server;
}

async function killGroup(child: ChildProcess, groupId: number): Promise<void> {
  const exited = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : once(child, "exit");
  try {
    process.kill(-groupId, "SIGKILL");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
  await exited;
  await waitUntil(
    async () => (await processGroup(groupId)).length === 0,
    `process group ${groupId} to be gone`,
    10_000,
  );
}

export interface ServerSandbox {
  databaseUrl: string;
  dataDir: string;
  calendarPath: string;
  /** The server environment: shared settings plus `extra`. */
  env(extra?: Record<string, string>): Record<string, string>;
  /** Spawns a server on this sandbox; `cleanup()` kills it if it is still running. */
  start(extra?: Record<string, string>): Promise<ServerProcess>;
  token(user: string): Promise<string>;
  /** An SDK client for `user` on `server`, without the SDK's retries (a test sees each answer). */
  client(server: ServerProcess, user: string): Promise<Client>;
  /** Raw fetch with `user`'s token; JSON bodies get their content type. */
  fetch(server: ServerProcess, pathname: string, init?: RequestInit & { user?: string }): Promise<Response>;
  calendarEvents(): Promise<Record<string, unknown>[]>;
  cleanup(): Promise<void>;
}

export async function createServerSandbox(): Promise<ServerSandbox> {
  const database: TestDatabase = await createTestDatabase();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "warrant-process-"));
  const secretHex = randomBytes(32).toString("hex");
  const secret = Uint8Array.from(Buffer.from(secretHex, "hex"));
  const calendarPath = path.join(dataDir, "calendar.json");
  const directory = await loadPrincipalDirectory(PRINCIPALS_PATH);
  const started: ServerProcess[] = [];
  const env = (extra: Record<string, string> = {}) => ({
    DATABASE_URL: database.url,
    WARRANT_DATA_DIR: dataDir,
    WARRANT_AUTH_SECRET: secretHex,
    WARRANT_CALENDAR_DATA: calendarPath,
    HOST: "127.0.0.1",
    PORT: "0",
    ...extra,
  });
  const token = (user: string) => mintApiToken(secret, findPrincipal(directory, user));
  return {
    databaseUrl: database.url,
    dataDir,
    calendarPath,
    env,
    async start(extra) {
      const server = await spawnServer(env(extra));
      started.push(server);
      return server;
    },
    token,
    client: async (server, user) =>
      new Client({
        apiUrl: server.url,
        defaultHeaders: { Authorization: `Bearer ${await token(user)}` },
        callerOptions: { maxRetries: 0 },
      }),
    async fetch(server, pathname, init = {}) {
      const { user, ...rest } = init;
      return fetchAs(`${server.url}${pathname}`, rest, user ? await token(user) : undefined);
    },
    // With DATABASE_URL the calendar child keeps its events in that database (warrant.config.json passes it on), else in the file.
    calendarEvents: async () => [
      ...(await storedCalendarEvents(calendarPath)),
      ...(await databaseCalendarEvents(database.url)),
    ],
    async cleanup() {
      try {
        await Promise.all(started.map((server) => server.kill()));
      } finally {
        try {
          await database.drop();
        } finally {
          await fs.rm(dataDir, { recursive: true, force: true });
        }
      }
    },
  };
}
