/**
 * `npm run bench -- --only throughput`, its served part: throughput of
 * Warrant as `npm start` serves it, with `WARRANT_WORKERS=1` and with the
 * default (the available parallelism, at most 8), beside createReactAgent
 * served in one process by LangGraph's own embeddable API server
 * (bench/reference-server.ts). Each round: 50 concurrent 5-step notes
 * threads (the scripted model, bench/script.ts), each a `threads.create` and
 * a `runs.stream` in `values` mode through the SDK, drained to its end: the
 * same requests, the same model endpoint, the same MCP server program and
 * the same database for every setting. Every setting's server is started
 * first and the rounds interleave them, the first rotating
 * (`measureInterleaved`); the ratios are the medians of the per-round ones.
 *
 * Reported per setting: runs/s (median of rounds), CPU ms per tool step
 * (process CPU time of the server's own processes, primary and workers
 * without their MCP children, ÷ steps), the Postgres server's and this
 * process's (the load generator's) CPU a step, and the machine's CPU use
 * during the rounds (/proc/stat), so a ceiling is visible. Server mode needs
 * DATABASE_URL (a scratch database is created on it and dropped); embedded
 * otherwise (the reference then needs a server: it is skipped).
 */
import { randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { mintApiToken } from "../src/auth/api-token.js";
import { findPrincipal, loadPrincipalDirectory } from "../src/auth/principal.js";
import { DEFAULT_WORKERS_CAP, type Settings } from "../src/env.js";
import { loadConfig } from "../src/policy/config.js";
import { SERVER_ENTRY, startInstance, type Instance } from "../load/instances.js";
import { benchRequest, FINAL_ANSWER, USER_ID } from "./script.js";
import type { ScriptedEndpoint } from "./scripted-endpoint.js";
import { servedSummary, servedTable, servedTargets } from "./report-served.js";
import { rotate } from "./stats.js";

const CONCURRENT = 50;
const STEPS = 5;

export interface WorkerSetting {
  label: string;
  workers: number;
  /** createReactAgent served in one process: what the others are compared with. */
  reference?: boolean;
  runsPerSecond: number[];
  cpuMsPerStep: number[];
  machineCpuUse: number[];
  /** CPU ms a tool step of every `postgres` process on the machine (other users of the server included). */
  postgresCpuMsPerStep: number[];
  /** CPU ms a tool step of this process, the load generator (for createReactAgent: the agent itself, as above). */
  generatorCpuMsPerStep: number[];
}

/**
 * CPU ms of every process named `postgres` (the server and its backends), including backends that have exited:
 * the postmaster (a `postgres` process whose parent is not one) adds its reaped children's time (cutime, cstime).
 * A pool that closes idle connections between rounds would otherwise take their backends' CPU out of the sum.
 */
async function postgresCpuMs(): Promise<number> {
  const processes = new Map<number, number[]>();
  for (const entry of await fs.readdir("/proc")) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = await fs.readFile(`/proc/${entry}/stat`, "utf8");
      if (!stat.includes("(postgres)")) continue;
      processes.set(
        Number(entry),
        stat
          .slice(stat.lastIndexOf(")") + 2)
          .split(" ")
          .map(Number),
      );
    } catch {
      // exited while we looked
    }
  }
  let ticks = 0;
  for (const fields of processes.values()) {
    const [ppid = 0, utime = 0, stime = 0, cutime = 0, cstime = 0] = [1, 11, 12, 13, 14].map((at) => fields[at] ?? 0);
    ticks += utime + stime + (processes.has(ppid) ? 0 : cutime + cstime);
  }
  return ticks * 10;
}

const ownCpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

/** Busy and total jiffies of the whole machine. */
async function machineTicks(): Promise<{ busy: number; total: number }> {
  const line = (await fs.readFile("/proc/stat", "utf8")).split("\n")[0] ?? "";
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  const total = values.reduce((sum, value) => sum + value, 0);
  const idle = (values[3] ?? 0) + (values[4] ?? 0);
  return { busy: total - idle, total };
}

/** CPU ms of the server's Node processes (those running `entry`) in process group `group`: the primary and workers, not MCP children. */
async function serverCpuMs(group: number, entry: string): Promise<number> {
  const tick = 1000 / 100; // USER_HZ is 100 on Linux
  let ticks = 0;
  for (const pid of await fs.readdir("/proc")) {
    if (!/^[0-9]+$/.test(pid)) continue;
    try {
      const stat = await fs.readFile(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== group) continue;
      const command = await fs.readFile(`/proc/${pid}/cmdline`, "utf8");
      if (!command.includes(entry)) continue;
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // exited while we looked
    }
  }
  return ticks * tick;
}

/** One measured round: `run` for each of CONCURRENT threads at once; runs/s, CPU ms a step, machine CPU use. */
async function round(run: () => Promise<void>, cpuMs: () => Promise<number>) {
  const [machineBefore, cpuBefore, pgBefore] = [await machineTicks(), await cpuMs(), await postgresCpuMs()];
  const ownBefore = ownCpuMs();
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENT }, run));
  const seconds = (performance.now() - started) / 1000;
  const ownAfter = ownCpuMs();
  const [machineAfter, cpuAfter, pgAfter] = [await machineTicks(), await cpuMs(), await postgresCpuMs()];
  return {
    postgresCpuMsPerStep: (pgAfter - pgBefore) / (CONCURRENT * STEPS),
    generatorCpuMsPerStep: (ownAfter - ownBefore) / (CONCURRENT * STEPS),
    runsPerSecond: CONCURRENT / seconds,
    cpuMsPerStep: (cpuAfter - cpuBefore) / (CONCURRENT * STEPS),
    machineCpuUse: (machineAfter.busy - machineBefore.busy) / Math.max(1, machineAfter.total - machineBefore.total),
  };
}

/** The server environment for the bench: notes only, the scripted model, budgets no bench thread reaches. */
async function serverEnv(settings: Settings, endpoint: ScriptedEndpoint, dataDir: string, secretHex: string) {
  const shipped = await loadConfig(settings.configPath);
  const tools = Object.fromEntries(Object.entries(shipped.tools).filter(([, contract]) => contract.server === "notes"));
  const configPath = path.join(dataDir, "bench-notes.config.json");
  await fs.writeFile(configPath, JSON.stringify({ ...shipped, servers: { notes: shipped.servers["notes"] }, tools }));
  return {
    ...(settings.databaseUrl ? { DATABASE_URL: settings.databaseUrl } : {}),
    WARRANT_DATA_DIR: dataDir,
    WARRANT_CONFIG: configPath,
    WARRANT_AUTH_SECRET: secretHex,
    WARRANT_PLANNER: "model",
    WARRANT_MODEL: "openai-compatible:bench-scripted",
    OPENAI_BASE_URL: endpoint.baseUrl,
    OPENAI_API_KEY: "not-needed",
    WARRANT_MAX_ACTIVE_RUNS: String(CONCURRENT * 2),
    WARRANT_MAX_MODEL_TURNS: "1000",
    WARRANT_MAX_TOOL_CALLS: "1000",
    WARRANT_MAX_REPEATS: "1000",
    WARRANT_NO_PROGRESS_STEPS: "1000",
    WARRANT_DEADLINE_MS: "600000",
  };
}

const WARRANT_ENTRY = SERVER_ENTRY;
const REFERENCE_ENTRY = "bench/reference-server.ts";

/** A started setting: its results so far, one round of its threads, its server's CPU, its stop. */
interface Served {
  result: WorkerSetting;
  run(): Promise<void>;
  cpuMs(): Promise<number>;
  stop(): Promise<void>;
}

/** Starts a served setting: its server, and `threads.create` + `runs.stream` for each thread of a round. */
async function openServed(
  label: string,
  start: () => Promise<{
    instance: Instance;
    token?: string;
    entry: string;
    workers: number;
    cleanup(): Promise<void>;
  }>,
): Promise<Served> {
  const { instance, token, entry, workers, cleanup } = await start();
  const client = new Client({
    apiUrl: instance.url,
    ...(token === undefined ? {} : { defaultHeaders: { Authorization: `Bearer ${token}` } }),
    callerOptions: { maxRetries: 0 },
  });
  const run = async () => {
    const thread = await client.threads.create({ threadId: randomUUID() });
    const input = { messages: [{ role: "user" as const, content: benchRequest(STEPS) }] };
    let last: unknown;
    for await (const part of client.runs.stream(thread.thread_id, "agent", { input, streamMode: "values" })) {
      if (part.event === "error") throw new Error(`${label}: a served run failed: ${JSON.stringify(part.data)}`);
      if (part.event === "values") last = part.data;
    }
    checkFinal(label, last);
  };
  const result: WorkerSetting = {
    label,
    workers,
    reference: entry === REFERENCE_ENTRY,
    runsPerSecond: [],
    cpuMsPerStep: [],
    machineCpuUse: [],
    postgresCpuMsPerStep: [],
    generatorCpuMsPerStep: [],
  };
  return {
    result,
    run,
    cpuMs: () => serverCpuMs(instance.pid, entry),
    async stop() {
      await instance.stop();
      await cleanup();
    },
  };
}

/**
 * Every setting's server is started first; then each round runs the settings one after another, the first rotating,
 * after one unmeasured round of each. On a machine whose speed drifts, a setting measured right after another sees
 * about the same machine, so the ratios taken within a round (`servedSummary`) move less than a whole setting's rounds
 * measured before the next setting's. The servers that wait are idle (their pollers aside).
 */
async function measureInterleaved(
  settings: (() => Promise<Served>)[],
  rounds: number,
  progress: (line: string) => void,
): Promise<WorkerSetting[]> {
  const served: Served[] = [];
  try {
    for (const open of settings) served.push(await open());
    for (const setting of served) await round(setting.run, setting.cpuMs);
    for (let index = 0; index < rounds; index += 1) {
      for (const setting of rotate(served, index)) {
        const measured = await round(setting.run, setting.cpuMs);
        const { result } = setting;
        result.runsPerSecond.push(measured.runsPerSecond);
        result.cpuMsPerStep.push(measured.cpuMsPerStep);
        result.machineCpuUse.push(measured.machineCpuUse);
        result.postgresCpuMsPerStep.push(measured.postgresCpuMsPerStep);
        result.generatorCpuMsPerStep.push(measured.generatorCpuMsPerStep);
        progress(`${result.label}: round ${index + 1}/${rounds}: ${measured.runsPerSecond.toFixed(2)} runs/s`);
      }
    }
    return served.map((setting) => setting.result);
  } finally {
    for (const setting of served) await setting.stop();
  }
}

/** Throws unless a served thread's last `values` event is its finished state: the script's answer. */
function checkFinal(label: string, values: unknown): void {
  const state = (values ?? {}) as { status?: string; messages?: { content?: unknown }[] };
  // Warrant's state says `completed`; createReactAgent's ends with the model's final message.
  const done =
    state.status !== undefined ? state.status === "completed" : state.messages?.at(-1)?.content === FINAL_ANSWER;
  if (!done)
    throw new Error(
      `${label}: a served thread ended ${state.status ?? JSON.stringify(state.messages?.at(-1)).slice(0, 200)}`,
    );
}

/** Warrant as `npm start` serves it, with `workers` workers. */
function warrantServer(settings: Settings, endpoint: ScriptedEndpoint, workers: number) {
  return async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "warrant-bench-workers-"));
    const secretHex = randomBytes(32).toString("hex");
    const env = { ...(await serverEnv(settings, endpoint, dataDir, secretHex)), WARRANT_WORKERS: String(workers) };
    const instance = await startInstance(process.cwd(), env, 600_000);
    const directory = await loadPrincipalDirectory(settings.principalsPath);
    const token = await mintApiToken(Uint8Array.from(Buffer.from(secretHex, "hex")), findPrincipal(directory, USER_ID));
    const cleanup = () => fs.rm(dataDir, { recursive: true, force: true });
    return { instance, token, entry: WARRANT_ENTRY, workers, cleanup };
  };
}

/** createReactAgent served by LangGraph's embeddable API server in one process (bench/reference-server.ts). */
function referenceServer(databaseUrl: string, endpoint: ScriptedEndpoint) {
  return async () => {
    const env = { DATABASE_URL: databaseUrl, BENCH_ENDPOINT: endpoint.baseUrl, LANGSMITH_TRACING: "false" };
    const instance = await startInstance(process.cwd(), env, 600_000, REFERENCE_ENTRY);
    return { instance, entry: REFERENCE_ENTRY, workers: 1, cleanup: async () => undefined };
  };
}

/** The default worker count `npm start` would use on this machine. */
export function defaultWorkers(settings: Settings): number {
  return settings.workers ?? Math.min(os.availableParallelism(), DEFAULT_WORKERS_CAP);
}

export async function measureWorkers(
  settings: Settings,
  endpoint: ScriptedEndpoint,
  rounds: number,
  progress: (line: string) => void,
): Promise<WorkerSetting[]> {
  const settingsToMeasure: (() => Promise<Served>)[] = [];
  if (settings.databaseUrl !== undefined) {
    const reference = "createReactAgent, served in one process";
    settingsToMeasure.push(() => openServed(reference, referenceServer(settings.databaseUrl as string, endpoint)));
  } else progress("the served reference needs a Postgres server (DATABASE_URL): skipped");
  settingsToMeasure.push(() => openServed("warrant, 1 worker", warrantServer(settings, endpoint, 1)));
  const workers = defaultWorkers(settings);
  if (workers > 1)
    settingsToMeasure.push(() => openServed(`warrant, ${workers} workers`, warrantServer(settings, endpoint, workers)));
  return measureInterleaved(settingsToMeasure, rounds, progress);
}

export function renderWorkers(results: WorkerSetting[]): string {
  const summary = servedSummary(results);
  return servedTable(summary, servedTargets(summary));
}
