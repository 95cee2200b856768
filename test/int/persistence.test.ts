/**
 * Persistence against both backends (real Postgres server, embedded PGlite):
 * setup, checkpoints through a real LangGraph graph, the ledger, restarts,
 * concurrent opens, configuration errors and an embedded crash.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { REPO_ROOT } from "../../src/env.js";
import type { LedgerRow } from "../../src/state/ledger.js";
import { openDatabase, type Database } from "../../src/stores/open-database.js";
import {
  ADMIN_URL,
  backends,
  compileCounterGraph,
  createEmbeddedDir,
  createTestDatabase,
  sampleLedgerRow,
} from "./support/postgres.js";
import { uniqueThread } from "../support/threads.js";

const SLOW = { timeout: 120_000 };
const CHILD_SCRIPT = fileURLToPath(new URL("./support/embedded-child.ts", import.meta.url));

async function countOf(database: Database, threadId: string): Promise<unknown> {
  const state = await compileCounterGraph(database.saver).getState({ configurable: { thread_id: threadId } });
  return (state.values as { count?: unknown }).count;
}

async function checkpointMigrationVersions(database: Database): Promise<number[]> {
  const result = await database.pool.query<{ v: number }>("select v from public.checkpoint_migrations order by v");
  return result.rows.map((row) => row.v);
}

/** Writes three attempts (one finished) and checks every ledger operation; returns the expected rows. */
async function exerciseLedger(database: Database, threadId: string): Promise<LedgerRow[]> {
  const { ledger } = database;
  const base = Date.parse("2025-01-02T03:04:05.678Z");
  const first = sampleLedgerRow("call-a", 1, new Date(base));
  await ledger.begin(threadId, first);
  await expect(ledger.begin(threadId, first)).rejects.toMatchObject({ code: "23505" });

  const outcome = {
    status: "failed" as const,
    error_code: "tool_timeout" as const,
    finished_at: new Date(base + 1_500).toISOString(),
    elapsed_ms: 1_500,
  };
  await ledger.finish(threadId, "call-a", 1, outcome);
  const retry = {
    ...sampleLedgerRow("call-a", 2, new Date(base + 2_000)),
    risk: "write_reversible" as const,
    idempotency_key: "key-1",
  };
  await ledger.begin(threadId, retry);
  const other = sampleLedgerRow("call-b", 1, new Date(base + 3_000));
  await ledger.begin(threadId, other);
  await expect(ledger.finish(threadId, "call-missing", 1, outcome)).rejects.toMatchObject({ name: "InvariantError" });

  const expected = [{ ...first, ...outcome }, retry, other];
  expect(await ledger.list(threadId)).toEqual(expected);
  expect(await ledger.list("some-other-thread")).toEqual([]);
  expect(await ledger.latest(threadId, "call-a")).toEqual(retry);
  expect(await ledger.latest(threadId, "call-missing")).toBeUndefined();
  return expected;
}

describe.each(backends)("persistence on the $name backend", (backend) => {
  test("sets up, round-trips checkpoints and ledger rows, and keeps them across a restart", SLOW, async () => {
    const opened = await backend.open();
    try {
      const { database } = opened;
      expect(database.mode).toBe(backend.name);
      expect(await checkpointMigrationVersions(database)).toEqual([0, 1, 2, 3, 4]);
      const ledgerTable = await database.pool.query<{ name: string | null }>(
        "select to_regclass('warrant.ledger')::text as name",
      );
      expect(ledgerTable.rows[0]?.name).toBe("warrant.ledger");

      const threadId = uniqueThread();
      const graph = compileCounterGraph(database.saver);
      await graph.invoke({ count: 0 }, { configurable: { thread_id: threadId } });
      await graph.invoke({ count: 0 }, { configurable: { thread_id: threadId } });
      expect(await countOf(database, threadId)).toBe(2);
      expect(await database.saver.getTuple({ configurable: { thread_id: threadId } })).toBeDefined();

      const expectedRows = await exerciseLedger(database, threadId);

      await database.close();
      await database.close(); // idempotent

      const reopened = await opened.reopen();
      expect(await countOf(reopened, threadId)).toBe(2);
      expect(await reopened.ledger.list(threadId)).toEqual(expectedRows);
      // Setup ran again on existing tables without adding anything.
      expect(await checkpointMigrationVersions(reopened)).toEqual([0, 1, 2, 3, 4]);
      await reopened.close();
    } finally {
      await opened.cleanup();
    }
  });

  // The embedded pool has one connection: this would hang if any path held a client while waiting for another.
  test("parallel graph runs, ledger writes and failing queries share the pool without deadlock", SLOW, async () => {
    const opened = await backend.open();
    try {
      const { database } = opened;
      const graph = compileCounterGraph(database.saver);
      const threads = Array.from({ length: 5 }, uniqueThread);
      const failing = database.pool.query("select 1/0").then(
        () => "resolved",
        (error: unknown) => (error as { code?: unknown }).code,
      );
      await Promise.all([
        ...threads.map((threadId) => graph.invoke({ count: 0 }, { configurable: { thread_id: threadId } })),
        ...threads.map((threadId) => database.ledger.begin(threadId, sampleLedgerRow("call-parallel", 1))),
      ]);
      expect(await failing).toBe("22012");
      for (const threadId of threads) {
        expect(await countOf(database, threadId)).toBe(1);
        expect(await database.ledger.latest(threadId, "call-parallel")).toMatchObject({
          attempt: 1,
          status: "running",
        });
      }
    } finally {
      await opened.cleanup();
    }
  });
});

describe("server backend", () => {
  test("concurrent opens on one fresh database all succeed (setup is serialized)", SLOW, async () => {
    const testDatabase = await createTestDatabase();
    const databases: Database[] = [];
    try {
      const results = await Promise.allSettled(
        Array.from({ length: 4 }, () => openDatabase({ databaseUrl: testDatabase.url, dataDir: "unused" })),
      );
      for (const result of results) if (result.status === "fulfilled") databases.push(result.value);
      expect(results.map((result) => result.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "fulfilled"]);
      const [first] = databases;
      if (first === undefined) throw new Error("no database opened");
      expect(await checkpointMigrationVersions(first)).toEqual([0, 1, 2, 3, 4]);
    } finally {
      for (const database of databases) await database.close();
      await testDatabase.drop();
    }
  });

  test.each(["not a url", "mysql://x", "postgres://"])(
    "malformed DATABASE_URL %j is config_invalid",
    async (databaseUrl) => {
      await expect(openDatabase({ databaseUrl, dataDir: "unused" })).rejects.toMatchObject({
        name: "ConfigError",
        code: "config_invalid",
        message: expect.stringMatching(/^DATABASE_URL /),
      });
    },
  );

  test("an invalid schema name is config_invalid", async () => {
    await expect(
      openDatabase({ databaseUrl: "postgres://postgres@127.0.0.1:1/x", dataDir: "unused", schema: 'x"; drop' }),
    ).rejects.toMatchObject({
      code: "config_invalid",
    });
  });

  test("an unreachable server is database_unreachable, fast, and the password stays secret", async () => {
    const started = Date.now();
    const error: unknown = await openDatabase({
      databaseUrl: "postgres://postgres:s3cret-pw@127.0.0.1:1/x",
      dataDir: "unused",
    }).catch((caught: unknown) => caught);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(error).toMatchObject({ name: "ConfigError", code: "database_unreachable" });
    const message = error instanceof Error ? error.message : "";
    expect(message).toContain("127.0.0.1:1/x");
    expect(message).not.toContain("s3cret-pw");
    expect(message).not.toContain("\n");
  });

  test("an unknown database is database_unreachable", async () => {
    const url = new URL(ADMIN_URL);
    url.pathname = `/warrant_missing_${randomBytes(6).toString("hex")}`;
    await expect(openDatabase({ databaseUrl: url.toString(), dataDir: "unused" })).rejects.toMatchObject({
      code: "database_unreachable",
      message: expect.stringContaining(url.pathname.slice(1)),
    });
  });
});

describe("embedded backend", () => {
  test("committed data survives SIGKILL of the process that wrote it", SLOW, async () => {
    const directory = await createEmbeddedDir();
    const threadId = uniqueThread();
    try {
      // While the child holds the data directory, nobody else may open it (PGlite is single-process).
      await runChildUntilReadyThenKill(directory.dir, threadId, async () => {
        await expect(openDatabase({ dataDir: directory.dir })).rejects.toMatchObject({
          code: "database_unreachable",
          message: expect.stringMatching(/in use by process \d+/),
        });
      });
      // Its lock outlived it (SIGKILL): it is stale now and taken over.
      const database = await openDatabase({ dataDir: directory.dir });
      try {
        const rows = await database.ledger.list(threadId);
        expect(rows.map((row) => [row.call_id, row.attempt, row.status])).toEqual([["call-crash", 1, "running"]]);
        expect(await countOf(database, threadId)).toBe(1);
      } finally {
        await database.close();
      }
    } finally {
      await directory.remove();
    }
  });
});

/** Spawns the child writer, waits for "ready", SIGKILLs it and waits for it to exit. */
async function runChildUntilReadyThenKill(
  dataDir: string,
  threadId: string,
  whileAlive: () => Promise<void> = async () => undefined,
): Promise<void> {
  const child = spawn(process.execPath, ["--import", "tsx", CHILD_SCRIPT, dataDir, threadId], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.once("exit", (code, signal) => resolve(signal ?? code)),
  );
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    await new Promise<void>((resolve, reject) => {
      let stdout = "";
      const timer = setTimeout(() => reject(new Error(`child not ready after 60 s: ${stderr}`)), 60_000);
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes("ready\n")) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`child exited (${code}) before ready: ${stderr}`));
      });
    });
    await whileAlive();
  } finally {
    child.kill("SIGKILL");
  }
  expect(await exited).toBe("SIGKILL");
}
