/**
 * Server instances for the load: each is `npm start`'s entry with its flags
 * (`node --max-semi-space-size=64 .build/src/server/main.js`, compiled first
 * by scripts/build-server.mjs as `npm start` compiles it; the bench also
 * starts its reference server, `--import tsx` with Node's defaults) in its
 * own process group, so stopping it also stops its MCP children. Loopback
 * only (HOST 127.0.0.1).
 */
import { execFileSync, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { SERVER_NODE_FLAGS } from "../src/cluster/node-flags.js";

/** What `npm start` runs: the server compiled by scripts/build-server.mjs. */
export const SERVER_ENTRY = ".build/src/server/main.js";

/** The line a server prints once it listens: Warrant's, or the bench's reference server (bench/reference-server.ts). */
const LISTENING = /^(?:warrant|reference) listening on (http:\/\/\S+)$/;
/** Server output kept for the report (the tail). */
const MAX_LOG_CHARS = 100_000;
/** Lines a server writes when a request failed with a 500 or a promise was left unhandled. */
const TROUBLE = /unexpected error on|Unhandled|unhandledRejection|uncaughtException/;

export interface Instance {
  url: string;
  /** Its pid, also its process group's id (the workers and MCP servers are in that group). */
  pid: number;
  /** Lines of its stderr that show a 500 or an unhandled rejection. */
  trouble(): string[];
  /** Its exit, if it exited (it should not before `stop`). */
  exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** SIGTERM (drain), then SIGKILL of its whole group after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  stderrTail(): string;
}

export async function startInstance(
  repoRoot: string,
  env: Record<string, string>,
  timeoutMs = 120_000,
  entry = SERVER_ENTRY,
): Promise<Instance> {
  // Warrant starts with the flags `npm start` gives it; the reference with Node's defaults, as its users run it.
  // BENCH_CPU_PROF=<dir>: every server process (a cluster's workers too) writes a V8 CPU profile there as it exits.
  const profiles = process.env["BENCH_CPU_PROF"];
  const flags = [
    ...(entry === SERVER_ENTRY ? SERVER_NODE_FLAGS : []),
    ...(profiles ? ["--cpu-prof", `--cpu-prof-dir=${profiles}`] : []),
  ];
  if (entry === SERVER_ENTRY)
    execFileSync(process.execPath, ["scripts/build-server.mjs"], {
      cwd: repoRoot,
      stdio: ["ignore", "ignore", "inherit"],
    });
  const loader = entry.endsWith(".ts") ? ["--import", "tsx"] : [];
  const child = spawn(process.execPath, [...flags, ...loader, entry], {
    cwd: repoRoot,
    env: {
      PATH: process.env["PATH"] ?? "/usr/bin:/bin",
      HOME: process.env["HOME"] ?? "/tmp",
      WARRANT_WORKERS: "1",
      ...env,
      HOST: "127.0.0.1",
      PORT: "0",
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error("the server process did not start");
  let stderr = "";
  const trouble: string[] = [];
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once("exit", (code, signal) => {
      exit = { code, signal };
      resolve();
    }),
  );
  createInterface({ input: child.stderr! }).on("line", (line) => {
    stderr = `${stderr + line}\n`.slice(-MAX_LOG_CHARS);
    if (TROUBLE.test(line) && trouble.length < 100) trouble.push(line.slice(0, 500));
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the server did not listen within ${timeoutMs} ms:\n${stderr}`)),
      timeoutMs,
    );
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const match = LISTENING.exec(line.trim());
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${exit?.code ?? exit?.signal}) before listening:\n${stderr}`));
    });
  }).catch(async (error: unknown) => {
    killGroup(pid);
    await exited;
    throw error;
  });
  return {
    url,
    pid,
    trouble: () => [...trouble],
    exit: () => exit,
    stderrTail: () => stderr.slice(-4_000),
    async stop(graceMs = 10_000) {
      if (exit === undefined) {
        child.kill("SIGTERM");
        await Promise.race([exited, sleep(graceMs)]);
      }
      // Its MCP children, and the server itself if it did not drain in time.
      killGroup(pid);
      await exited;
    },
  };
}

function killGroup(groupId: number): void {
  try {
    process.kill(-groupId, "SIGKILL");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}
