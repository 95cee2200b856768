/**
 * One load: server instances on one database, N threads from the load
 * principals at once, every response checked, figures collected. In server
 * mode the database is a scratch database created on `adminUrl`'s server
 * and dropped afterwards; in embedded mode one instance keeps PGlite in a
 * temporary directory. Everything listens and connects on loopback only.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { mintApiToken } from "../src/auth/api-token.js";
import { findPrincipal, loadPrincipalDirectory } from "../src/auth/principal.js";
import { REPO_ROOT } from "../src/env.js";
import { startInstance, type Instance } from "./instances.js";
import { problemsOf, type ConnectionSamples, type LoadFigures } from "./report.js";
import { forbiddenFor, Ownership } from "./visibility.js";
import { driveThread, type LoadLedger, type LoadPrincipal } from "./workload.js";

/** The load principals (dev principals, three tenants) and what each asks; the rules planner answers all of them. */
export const LOAD_REQUESTS: Readonly<Record<string, string>> = {
  alice: "Compare self-attention with cross-attention using my notes",
  bob: "Explain two-phase locking using my notes",
  sam: "Explain gradient descent using my notes",
  dana: "Investigate claim C-102: are its documents complete?",
  gil: "Investigate claim C-202: are its documents complete?",
};

export interface LoadOptions {
  mode: "server" | "embedded";
  /** Server mode: a Postgres server on loopback where a scratch database may be created. */
  adminUrl?: string | undefined;
  threads: number;
  /** Server mode only; embedded is single-process. */
  instances: number;
  users: readonly string[];
  maxActiveRuns: number;
  poolMax: number;
  /** The whole load (threads and their backoffs) must end within this. */
  timeoutMs: number;
  /** Progress lines (stderr). */
  log: (line: string) => void;
}

export interface LoadResult extends LoadFigures {
  problems: string[];
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const scratch =
    options.mode === "server" ? await createScratchDatabase(requireLoopback(options.adminUrl)) : undefined;
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "warrant-load-"));
  const instances: Instance[] = [];
  let unhandledRejections = 0;
  const onRejection = () => (unhandledRejections += 1);
  process.on("unhandledRejection", onRejection);
  try {
    const secretHex = randomBytes(32).toString("hex");
    const env = {
      ...(scratch ? { DATABASE_URL: scratch.url } : {}),
      WARRANT_DATA_DIR: dataDir,
      WARRANT_AUTH_SECRET: secretHex,
      WARRANT_CALENDAR_DATA: path.join(dataDir, "calendar.json"),
      WARRANT_PLANNER: "rules",
      WARRANT_MAX_ACTIVE_RUNS: String(options.maxActiveRuns),
      WARRANT_PG_POOL_MAX: String(options.poolMax),
    };
    const count = options.mode === "server" ? options.instances : 1;
    // One after another: the first runs the migrations, the rest find them done.
    for (let index = 0; index < count; index += 1) {
      instances.push(await startInstance(REPO_ROOT, env));
      options.log(`instance ${index + 1}/${count} listening on ${instances[index]!.url}`);
    }
    const principals = await loadPrincipals(options.users, Uint8Array.from(Buffer.from(secretHex, "hex")));
    const ledger: LoadLedger = {
      ownership: new Ownership(),
      leaks: [],
      errors: new Map(),
      serverErrors: 0,
      pending: [],
    };
    const sampler = scratch ? await sampleConnections(scratch.url) : undefined;
    const started = performance.now();
    const deadline = Date.now() + options.timeoutMs;
    options.log(`${options.threads} threads from ${principals.length} principals at once`);
    const outcomes = await Promise.all(
      Array.from({ length: options.threads }, (_, index) =>
        driveThread(instances[index % instances.length]!.url, principals[index % principals.length]!, ledger, deadline),
      ),
    );
    const wallMs = performance.now() - started;
    await Promise.all(ledger.pending);
    const connections = await sampler?.stop();
    const serverTrouble = instances.flatMap((instance, index) => {
      const exit = instance.exit();
      return [
        ...instance.trouble(),
        ...(exit ? [`instance ${index + 1} exited during the load (${exit.code ?? exit.signal})`] : []),
      ];
    });
    const tenants = new Set(principals.map((principal) => principal.tenant)).size;
    const database =
      options.mode === "server"
        ? `server Postgres, ${count} instances on one scratch database`
        : "embedded PGlite, 1 instance";
    const poolSize = options.mode === "server" ? options.poolMax : 1;
    const figures: LoadFigures = {
      label:
        `${database}; ${options.threads} threads from ${principals.length} principals in ${tenants} tenants; ` +
        `rules planner; run limit ${options.maxActiveRuns} per principal; pool ${poolSize} per instance`,
      wallMs,
      outcomes,
      errors: ledger.errors,
      serverErrors: ledger.serverErrors,
      leaks: ledger.leaks,
      connections,
      serverTrouble,
      unhandledRejections,
    };
    return { ...figures, problems: problemsOf(figures) };
  } finally {
    process.off("unhandledRejection", onRejection);
    await Promise.allSettled(instances.map((instance) => instance.stop()));
    await scratch
      ?.drop()
      .catch((error: unknown) => options.log(`could not drop the scratch database: ${String(error)}`));
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

export function requireLoopback(adminUrl: string | undefined): string {
  if (!adminUrl)
    throw new Error("server mode needs DATABASE_URL (a Postgres server on loopback); or run with --embedded");
  const host = new URL(adminUrl).hostname;
  if (!LOOPBACK.has(host)) throw new Error(`the load runs on loopback only; DATABASE_URL points at ${host}`);
  return adminUrl;
}

export async function loadPrincipals(users: readonly string[], secret: Uint8Array): Promise<LoadPrincipal[]> {
  const directory = await loadPrincipalDirectory(path.join(REPO_ROOT, "src/domains/dev-principals.json"));
  return Promise.all(
    users.map(async (user) => {
      const principal = findPrincipal(directory, user);
      const request = Object.hasOwn(LOAD_REQUESTS, user) ? LOAD_REQUESTS[user] : undefined;
      if (request === undefined)
        throw new Error(`no load request for ${user}; known: ${Object.keys(LOAD_REQUESTS).join(", ")}`);
      return {
        user,
        tenant: principal.tenant,
        token: await mintApiToken(secret, principal),
        request,
        forbidden: await forbiddenFor(principal, REPO_ROOT),
      };
    }),
  );
}

interface Scratch {
  url: string;
  drop(): Promise<void>;
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** `warrant_load_<hex>` on the admin URL's server; `drop()` removes exactly that database. */
export async function createScratchDatabase(adminUrl: string): Promise<Scratch> {
  const name = `warrant_load_${randomBytes(6).toString("hex")}`;
  await withClient(adminUrl, (client) => client.query(`create database "${name}"`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () =>
      withClient(adminUrl, async (client) => {
        await client.query(
          "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()",
          [name],
        );
        await client.query(`drop database if exists "${name}"`);
      }),
  };
}

/** Samples the database's backends every 100 ms until `stop()`. */
async function sampleConnections(url: string): Promise<{ stop(): Promise<ConnectionSamples> }> {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => undefined);
  await client.connect();
  const name = new URL(url).pathname.slice(1);
  const totals: number[] = [];
  let peakActive = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const row = await client.query<{ total: number; active: number }>(
        "select count(*)::int as total, count(*) filter (where state = 'active')::int as active " +
          "from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()",
        [name],
      );
      totals.push(row.rows[0]?.total ?? 0);
      peakActive = Math.max(peakActive, row.rows[0]?.active ?? 0);
      await sleep(100);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop.catch(() => undefined);
      await client.end().catch(() => undefined);
      const mean = totals.reduce((sum, value) => sum + value, 0) / Math.max(1, totals.length);
      return { peak: Math.max(0, ...totals), mean, peakActive, samples: totals.length };
    },
  };
}
