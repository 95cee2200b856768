/**
 * `npm run load -- --fault cut|outage:<N>s|latency:<N>ms [--threads N]`: what a
 * database fault does to runs in flight. Two server instances share a
 * scratch database that they reach through a TCP fault proxy
 * (test/int/support/fault-proxy.ts); N threads start a run each
 * (`runs/wait`, rules planner) and, 300 ms later, the fault hits: `cut`
 * resets every connection three times, 400 ms apart (a failover);
 * `outage:Ns` resets them and refuses new ones for N seconds; `latency:Nms`
 * delays every chunk both ways, on open connections too, for the rest of the
 * load. Default settings otherwise (lease 30 s, pool 10, retry budget 5 s). Each first answer
 * is counted (finished, ended `database_unavailable`, refused 503 with its
 * code, anything else = untyped); then every thread is continued
 * (`input: null`, or its message again when no run had started) until it
 * finishes. Also measured: how long after the database is back both
 * instances answer `/healthz` again. Any answer with Postgres text, or a 5xx
 * without a database code, is a problem (exit 1).
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { REPO_ROOT } from "../src/env.js";
import { startFaultProxy } from "../test/int/support/fault-proxy.js";
import { startInstance, type Instance } from "./instances.js";
import { createScratchDatabase, LOAD_REQUESTS, loadPrincipals, requireLoopback } from "./run.js";

export type Fault = { kind: "cut" } | { kind: "outage"; ms: number } | { kind: "latency"; ms: number };

export function parseFault(text: string): Fault {
  if (text === "cut") return { kind: "cut" };
  const outage = /^outage:([0-9]{1,3})s$/.exec(text);
  if (outage) return { kind: "outage", ms: Number(outage[1]) * 1000 };
  const latency = /^latency:([0-9]{1,4})ms$/.exec(text);
  if (latency) return { kind: "latency", ms: Number(latency[1]) };
  throw new Error("--fault takes cut, outage:<seconds>s or latency:<milliseconds>ms");
}

/** The SQLSTATE codes of a shutdown (57P01-57P03), a lost connection (08000, 08003, 08006), a serialization failure or a deadlock. */
export const POSTGRES_CODES = String.raw`\b(57P0[1-3]|0800[036]|40001|40P01)\b`;
/** The words of a database or connection error in a message, as alternatives. */
export const POSTGRES_WORDS = [
  "ECONN",
  "EPIPE",
  "terminating connection",
  "Connection terminated",
  "duplicate key",
  "violates",
  "syntax error",
  "SQLSTATE",
].join("|");
const POSTGRES_TEXT = new RegExp(`${POSTGRES_CODES}|${POSTGRES_WORDS}`, "i");

export interface FaultFigures {
  fault: string;
  threads: number;
  /** First answers: `finished`, `ended database_unavailable`, `503 database_unavailable`, … */
  first: Record<string, number>;
  /** Threads that finished (agent status completed/abstained), after continuations. */
  finished: number;
  /** Continuation requests sent in all. */
  continuations: number;
  /** From the database's return to both instances' `/healthz` answering ok. */
  healthyAfterMs: number | undefined;
  postgresText: number;
  /** Up to three of them, cut around the match (to find where they came from). */
  leaks: string[];
  untyped5xx: number;
  wallMs: number;
}

export async function runFaultLoad(options: {
  adminUrl: string | undefined;
  fault: Fault;
  faultText: string;
  threads: number;
  log: (line: string) => void;
}): Promise<FaultFigures> {
  const scratch = await createScratchDatabase(requireLoopback(options.adminUrl));
  const target = new URL(scratch.url);
  const proxy = await startFaultProxy({ host: target.hostname, port: Number(target.port || 5432) });
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "warrant-fault-"));
  const instances: Instance[] = [];
  let postgresText = 0;
  let untyped5xx = 0;
  const leaks: string[] = [];
  try {
    const secretHex = randomBytes(32).toString("hex");
    const env = {
      DATABASE_URL: proxy.urlFor(scratch.url),
      WARRANT_DATA_DIR: dataDir,
      WARRANT_AUTH_SECRET: secretHex,
      WARRANT_CALENDAR_DATA: path.join(dataDir, "calendar.json"),
      WARRANT_PLANNER: "rules",
      WARRANT_MAX_ACTIVE_RUNS: String(options.threads),
    };
    for (let index = 0; index < 2; index += 1) instances.push(await startInstance(REPO_ROOT, env));
    options.log(`2 instances through the fault proxy: ${instances.map((instance) => instance.url).join(", ")}`);
    const principals = await loadPrincipals(Object.keys(LOAD_REQUESTS), Uint8Array.from(Buffer.from(secretHex, "hex")));
    const request = async (url: string, token: string, pathname: string, body?: unknown) => {
      const response = await fetch(`${url}${pathname}`, {
        method: body === undefined ? "GET" : "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }).catch(() => undefined);
      const text = response ? await response.text().catch(() => "") : "";
      if (POSTGRES_TEXT.test(text)) {
        postgresText += 1;
        const at = text.search(POSTGRES_TEXT);
        if (leaks.length < 3) leaks.push(`${pathname}: …${text.slice(Math.max(0, at - 300), at + 100)}…`);
      }
      const status = response?.status ?? 0;
      if (status >= 500 && !/"error":"database_(unavailable|busy)"/.test(text)) untyped5xx += 1;
      let json: Record<string, unknown> = {};
      try {
        json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      } catch {
        // not JSON: counted by its status
      }
      return { status, json };
    };
    const jobs = Array.from({ length: options.threads }, (_, index) => ({
      url: instances[index % 2]!.url,
      principal: principals[index % principals.length]!,
    }));
    const threads = await Promise.all(
      jobs.map(async (job) => {
        const created = await request(job.url, job.principal.token, "/threads", {});
        return String(created.json["thread_id"]);
      }),
    );
    const started = performance.now();
    const firstAnswers = Promise.all(
      jobs.map((job, index) =>
        request(job.url, job.principal.token, `/threads/${threads[index]}/runs/wait`, {
          assistant_id: "agent",
          input: { messages: [{ role: "user", content: job.principal.request }] },
        }),
      ),
    );
    await sleep(300);
    let backAt = Date.now();
    if (options.fault.kind === "cut") {
      for (let cut = 0; cut < 3; cut += 1) {
        proxy.cut();
        if (cut < 2) await sleep(400);
      }
      backAt = Date.now();
    } else if (options.fault.kind === "outage") {
      proxy.refuse(options.fault.ms);
      backAt = Date.now() + options.fault.ms;
    } else {
      proxy.latency(options.fault.ms);
    }
    const healthy = (async () => {
      await sleep(Math.max(0, backAt - Date.now()));
      for (;;) {
        const answers = await Promise.all(instances.map((instance) => request(instance.url, "", "/healthz")));
        if (answers.every((answer) => answer.status === 200)) return Date.now() - backAt;
        if (Date.now() - backAt > 60_000) return undefined;
        await sleep(50);
      }
    })();
    const first: Record<string, number> = {};
    const answers = await firstAnswers;
    answers.forEach((answer) => {
      const error = (answer.json["__error__"] as { error?: string } | undefined)?.error;
      const key =
        answer.status === 200
          ? error
            ? `ended ${error}`
            : "finished"
          : `${answer.status} ${String(answer.json["error"] ?? "untyped")}`;
      first[key] = (first[key] ?? 0) + 1;
    });
    const healthyAfterMs = await healthy;
    let continuations = 0;
    const done = await Promise.all(
      jobs.map(async (job, index) => {
        const deadline = Date.now() + 120_000;
        const pathname = `/threads/${threads[index]}`;
        while (Date.now() < deadline) {
          const state = await request(job.url, job.principal.token, `${pathname}/state`);
          const values = state.json["values"] as { status?: string } | undefined;
          const next = state.json["next"] as string[] | undefined;
          if (
            state.status === 200 &&
            next?.length === 0 &&
            (values?.status === "completed" || values?.status === "abstained")
          )
            return true;
          if (state.status !== 200) {
            await sleep(250);
            continue;
          }
          continuations += 1;
          // No run reached a checkpoint: send the message again; else continue from the last checkpoint.
          const input = next?.length === 0 ? { messages: [{ role: "user", content: job.principal.request }] } : null;
          const answer = await request(job.url, job.principal.token, `${pathname}/runs/wait`, {
            assistant_id: "agent",
            input,
          });
          if (answer.status !== 200) await sleep(500);
        }
        return false;
      }),
    );
    return {
      fault: options.faultText,
      threads: options.threads,
      first,
      finished: done.filter(Boolean).length,
      continuations,
      healthyAfterMs,
      postgresText,
      leaks,
      untyped5xx,
      wallMs: performance.now() - started,
    };
  } finally {
    await Promise.allSettled(instances.map((instance) => instance.stop()));
    await proxy.close();
    await scratch
      .drop()
      .catch((error: unknown) => options.log(`could not drop the scratch database: ${String(error)}`));
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

export function formatFaultFigures(figures: FaultFigures): string[] {
  return [
    `fault ${figures.fault}; ${figures.threads} runs in flight on 2 instances (server Postgres through a TCP fault proxy; rules planner)`,
    `first answers: ${Object.entries(figures.first)
      .map(([key, count]) => `${count} ${key}`)
      .join(", ")}`,
    `finished after continuation: ${figures.finished}/${figures.threads} (${figures.continuations} continuation requests)`,
    `healthy again after the database: ${figures.healthyAfterMs === undefined ? "not within 60 s" : `${figures.healthyAfterMs} ms`}`,
    ...figures.leaks.map((leak) => `Postgres text in ${leak}`),
    `answers with Postgres text: ${figures.postgresText}; untyped 5xx: ${figures.untyped5xx}; wall ${Math.round(figures.wallMs)} ms`,
  ];
}
