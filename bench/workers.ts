/**
 * `npm run bench -- --only workers`: throughput of Warrant as `npm start`
 * serves it, with `WARRANT_WORKERS=1` and with the default (the available
 * parallelism, at most 8), beside createReactAgent served in one process
 * (invoked in this process, as the throughput rounds of bench/main.ts do).
 * Each round: 50 concurrent 5-step notes threads (the scripted model,
 * bench/script.ts) through the SDK's `runs.wait`.
 *
 * Reported per setting: runs/s (median of rounds), CPU ms per tool step
 * (process CPU time of the server's own processes, primary and workers
 * without their MCP children, ÷ steps; for createReactAgent, this process's
 * CPU ÷ steps), and the machine's CPU use during the rounds (/proc/stat), so
 * a ceiling is visible. Server mode needs DATABASE_URL (a scratch database
 * is created on it and dropped); embedded otherwise.
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
import { startInstance } from "../load/instances.js";
import { benchRequest, USER_ID } from "./script.js";
import type { ScriptedEndpoint } from "./scripted-endpoint.js";
import { summarize } from "./stats.js";
import type { Variant } from "./variants.js";

const CONCURRENT = 50;
const STEPS = 5;

export interface WorkerSetting {
  label: string;
  workers: number;
  runsPerSecond: number[];
  cpuMsPerStep: number[];
  machineCpuUse: number[];
  /** CPU ms a tool step of every `postgres` process on the machine (other users of the server included). */
  postgresCpuMsPerStep: number[];
  /** CPU ms a tool step of this process, the load generator (for createReactAgent: the agent itself, as above). */
  generatorCpuMsPerStep: number[];
}

/** CPU ms of every process named `postgres` (the server and its backends). */
async function postgresCpuMs(): Promise<number> {
  let ticks = 0;
  for (const entry of await fs.readdir("/proc")) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = await fs.readFile(`/proc/${entry}/stat`, "utf8");
      if (!stat.includes("(postgres)")) continue;
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // exited while we looked
    }
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

/** CPU ms of the server's Node processes in process group `group`: the primary and workers, not MCP children. */
async function serverCpuMs(group: number): Promise<number> {
  const tick = 1000 / 100; // USER_HZ is 100 on Linux
  let ticks = 0;
  for (const entry of await fs.readdir("/proc")) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = await fs.readFile(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== group) continue;
      const command = await fs.readFile(`/proc/${entry}/cmdline`, "utf8");
      if (!command.includes("src/server/main.ts")) continue;
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

/** Measures Warrant served with `workers` workers, `rounds` rounds after one unmeasured. */
async function measureServed(
  settings: Settings,
  endpoint: ScriptedEndpoint,
  workers: number,
  rounds: number,
  progress: (line: string) => void,
): Promise<WorkerSetting> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "warrant-bench-workers-"));
  const secretHex = randomBytes(32).toString("hex");
  const env = { ...(await serverEnv(settings, endpoint, dataDir, secretHex)), WARRANT_WORKERS: String(workers) };
  const instance = await startInstance(process.cwd(), env, 600_000);
  try {
    const directory = await loadPrincipalDirectory(settings.principalsPath);
    const token = await mintApiToken(Uint8Array.from(Buffer.from(secretHex, "hex")), findPrincipal(directory, USER_ID));
    const client = new Client({
      apiUrl: instance.url,
      defaultHeaders: { Authorization: `Bearer ${token}` },
      callerOptions: { maxRetries: 0 },
    });
    const group = instance.pid;
    const run = async () => {
      const thread = await client.threads.create({ threadId: randomUUID() });
      const input = { messages: [{ role: "user" as const, content: benchRequest(STEPS) }] };
      const values = (await client.runs.wait(thread.thread_id, "agent", { input })) as { status?: string };
      if (values.status !== "completed") throw new Error(`a served thread ended ${values.status}`);
    };
    const result: WorkerSetting = {
      label: `warrant, ${workers} worker(s)`,
      workers,
      runsPerSecond: [],
      cpuMsPerStep: [],
      machineCpuUse: [],
      postgresCpuMsPerStep: [],
      generatorCpuMsPerStep: [],
    };
    await round(run, () => serverCpuMs(group));
    for (let index = 0; index < rounds; index += 1) {
      const measured = await round(run, () => serverCpuMs(group));
      result.runsPerSecond.push(measured.runsPerSecond);
      result.cpuMsPerStep.push(measured.cpuMsPerStep);
      result.machineCpuUse.push(measured.machineCpuUse);
      result.postgresCpuMsPerStep.push(measured.postgresCpuMsPerStep);
      result.generatorCpuMsPerStep.push(measured.generatorCpuMsPerStep);
      progress(`${result.label}: round ${index + 1}/${rounds}: ${measured.runsPerSecond.toFixed(2)} runs/s`);
    }
    return result;
  } finally {
    await instance.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

/** createReactAgent in this process: the same rounds, this process's CPU. */
async function measureInProcess(variant: Variant, rounds: number): Promise<WorkerSetting> {
  const cpuMs = async () => {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1000;
  };
  const run = () => variant.run(STEPS, randomUUID());
  const result: WorkerSetting = {
    label: `${variant.name}, one process`,
    workers: 1,
    runsPerSecond: [],
    cpuMsPerStep: [],
    machineCpuUse: [],
    postgresCpuMsPerStep: [],
    generatorCpuMsPerStep: [],
  };
  await round(run, cpuMs);
  for (let index = 0; index < rounds; index += 1) {
    const measured = await round(run, cpuMs);
    result.runsPerSecond.push(measured.runsPerSecond);
    result.cpuMsPerStep.push(measured.cpuMsPerStep);
    result.machineCpuUse.push(measured.machineCpuUse);
    result.postgresCpuMsPerStep.push(measured.postgresCpuMsPerStep);
    result.generatorCpuMsPerStep.push(measured.generatorCpuMsPerStep);
  }
  return result;
}

/** The default worker count `npm start` would use on this machine. */
export function defaultWorkers(settings: Settings): number {
  return settings.workers ?? Math.min(os.availableParallelism(), DEFAULT_WORKERS_CAP);
}

export async function measureWorkers(
  settings: Settings,
  endpoint: ScriptedEndpoint,
  reference: Variant,
  rounds: number,
  progress: (line: string) => void,
): Promise<WorkerSetting[]> {
  const results = [await measureInProcess(reference, rounds)];
  progress(`${results[0]!.label}: ${summarize(results[0]!.runsPerSecond).median.toFixed(2)} runs/s`);
  results.push(await measureServed(settings, endpoint, 1, rounds, progress));
  const workers = defaultWorkers(settings);
  if (workers > 1) results.push(await measureServed(settings, endpoint, workers, rounds, progress));
  return results;
}

export function renderWorkers(results: WorkerSetting[]): string[] {
  const reference = summarize(results[0]?.runsPerSecond ?? [0]).median;
  return results.map((result) => {
    const runs = summarize(result.runsPerSecond).median;
    const cpu = summarize(result.cpuMsPerStep).median;
    const machine = summarize(result.machineCpuUse).median;
    const postgres = summarize(result.postgresCpuMsPerStep).median;
    const generator = summarize(result.generatorCpuMsPerStep).median;
    return (
      `${result.label}: ${runs.toFixed(2)} runs/s (${(runs / reference).toFixed(2)}×), ${cpu.toFixed(2)} CPU ms a tool step, ` +
      `postgres ${postgres.toFixed(2)}, bench process ${generator.toFixed(2)} CPU ms a step, machine CPU ${(machine * 100).toFixed(0)}%`
    );
  });
}
