/**
 * Integration-test helpers: a throwaway database on the real server, a
 * throwaway directory for embedded PGlite, and both wrapped as "backends" so
 * one suite runs against each. Every helper removes only what it created.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import pg from "pg";
import { beforeAll } from "vitest";
import type { LedgerRow } from "../../../src/state/ledger.js";
import { openDatabase, type Database } from "../../../src/stores/open-database.js";
import { useSandbox } from "../../support/sandbox.js";

/** The server the tests may create databases on. */
export const ADMIN_URL = process.env.DATABASE_URL?.trim() || "postgres://postgres@127.0.0.1:5432/postgres";

/** A database created for one test, with the one way to remove it. */
export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A temporary directory created for one test. */
export interface EmbeddedDir {
  dir: string;
  remove(): Promise<void>;
}

/** One opened backend: the first Database, a way to open another on the same storage, and cleanup. */
export interface OpenedBackend {
  database: Database;
  /** Opens a NEW Database on the same URL/dir; closes nothing (close the first one yourself). */
  reopen(): Promise<Database>;
  /** Closes every Database this backend opened, then drops its database / removes its dir. */
  cleanup(): Promise<void>;
}

export interface Backend {
  name: "server" | "embedded";
  open(): Promise<OpenedBackend>;
}

/** Runs `work` on a short-lived admin connection. */
async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates `warrant_t_<random hex>` on the admin server. `drop()` removes exactly that database. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `warrant_t_${randomBytes(8).toString("hex")}`;
  // The name is generated from hex digits only, so quoting it is enough.
  await withAdmin((client) => client.query(`create database "${name}"`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    url: url.toString(),
    async drop() {
      if (dropped) return;
      dropped = true;
      await withAdmin(async (client) => {
        await client.query(
          "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()",
          [name],
        );
        await client.query(`drop database if exists "${name}"`);
      });
    },
  };
}

/** A fresh server database, opened (ledger, checkpoints, …); closing it also drops it. */
export async function openTestDatabase(): Promise<Database> {
  const test = await createTestDatabase();
  try {
    const database = await openDatabase({ databaseUrl: test.url, dataDir: os.tmpdir() });
    return {
      ...database,
      async close() {
        try {
          await database.close();
        } finally {
          await test.drop();
        }
      },
    };
  } catch (error) {
    await test.drop();
    throw error;
  }
}

/** A fresh temporary directory; `remove()` deletes it recursively. */
export async function createEmbeddedDir(): Promise<EmbeddedDir> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "warrant-pglite-"));
  return { dir, remove: () => fs.rm(dir, { recursive: true, force: true }) };
}

/** Closes each database, then runs `release`, even if a close fails. */
async function closeAllThen(databases: Database[], release: () => Promise<void>): Promise<void> {
  try {
    for (const database of databases) await database.close();
  } finally {
    await release();
  }
}

const serverBackend: Backend = {
  name: "server",
  async open() {
    const testDatabase = await createTestDatabase();
    const opened: Database[] = [];
    // Server mode never touches dataDir; point it somewhere that is never written.
    const openOne = async () => {
      const database = await openDatabase({ databaseUrl: testDatabase.url, dataDir: os.tmpdir() });
      opened.push(database);
      return database;
    };
    try {
      const database = await openOne();
      return { database, reopen: openOne, cleanup: () => closeAllThen(opened, testDatabase.drop) };
    } catch (error) {
      await testDatabase.drop();
      throw error;
    }
  },
};

const embeddedBackend: Backend = {
  name: "embedded",
  async open() {
    const directory = await createEmbeddedDir();
    const opened: Database[] = [];
    const openOne = async () => {
      const database = await openDatabase({ dataDir: directory.dir });
      opened.push(database);
      return database;
    };
    try {
      const database = await openOne();
      return { database, reopen: openOne, cleanup: () => closeAllThen(opened, directory.remove) };
    } catch (error) {
      await directory.remove();
      throw error;
    }
  },
};

/** Both backends, so a suite can `describe.each(backends)`. */
export const backends: Backend[] = [serverBackend, embeddedBackend];

/**
 * Opens `backend` before the suite's tests and cleans it up after them;
 * call it in a `describe` body and read the opened backend in the tests.
 */
export function useBackend(backend: Backend, timeoutMs = 60_000): () => OpenedBackend {
  const sandbox = useSandbox("all", timeoutMs);
  let opened: OpenedBackend | undefined;
  beforeAll(async () => {
    opened = sandbox.add(await backend.open());
  }, timeoutMs);
  return () => {
    if (!opened) throw new Error(`the ${backend.name} backend is not open`);
    return opened;
  };
}

/** A one-node graph that adds 1 to `count` per invocation: the smallest thing that writes checkpoints. */
export function compileCounterGraph(saver: BaseCheckpointSaver) {
  const State = Annotation.Root({
    count: Annotation<number>({ reducer: (total, increment) => total + increment, default: () => 0 }),
  });
  return new StateGraph(State)
    .addNode("increment", () => ({ count: 1 }))
    .addEdge(START, "increment")
    .addEdge("increment", END)
    .compile({ checkpointer: saver });
}

/** A valid `running` ledger row for a read tool; tests override fields as needed. */
export function sampleLedgerRow(callId: string, attempt: number, startedAt = new Date()): LedgerRow {
  return {
    call_id: callId,
    attempt,
    tool: "notes.search",
    server: "notes",
    risk: "read",
    fingerprint: "a".repeat(64),
    idempotency_key: null,
    status: "running",
    error_code: null,
    started_at: startedAt.toISOString(),
    finished_at: null,
    elapsed_ms: null,
  };
}

/** How many backends other than `admin`'s are executing exactly `text` right now (pg_stat_activity). */
async function executing(admin: pg.Client, text: string): Promise<number> {
  const result = await admin.query<{ n: number }>(
    "select count(*)::int as n from pg_stat_activity where query = $1 and state = 'active' and pid <> pg_backend_pid()",
    [text],
  );
  return result.rows[0]?.n ?? 0;
}

/**
 * Resolves once the server executes `text` (sent by another connection): a
 * fault injected after this falls while the statement is in flight, however
 * slowly the machine got it there (a fixed sleep assumes it arrived in time).
 */
export async function statementInFlight(admin: pg.Client, text: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await executing(admin, text)) === 0) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for the server to execute ${JSON.stringify(text)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Resolves once no backend executes `text` any more (it committed or failed on the server, whatever the client saw). */
export async function statementDone(admin: pg.Client, text: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await executing(admin, text)) > 0) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for the server to finish ${JSON.stringify(text)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
