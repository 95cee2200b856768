/**
 * The tamper-evident audit (issue 11, item 3) on real Postgres (server and
 * embedded): real runs of the agent graph against the real calendar MCP
 * server (two parallel reads, a reviewed write, a denied proposal, the run's
 * end) leave audit events chained per run, with every ledger and approval
 * write hashed in. An untouched database verifies; changing one column of a
 * ledger, approval or audit row, or deleting a row, is named by `verify`
 * (table, primary key, column when it can be told). `npm run audit -- verify`
 * exits 0 / 1 accordingly.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../src/env.js";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import { openDatabase, type Database } from "../../src/stores/open-database.js";
import { loadConfig, type WarrantConfig } from "../../src/policy/config.js";
import { runStartOf } from "../../src/audit/chain.js";
import { settings } from "./support/agent.js";
import { backends, createTestDatabase, sampleLedgerRow, type TestDatabase, useBackend } from "./support/postgres.js";
import { calendarConfig as calendarConfigIn, recordedRun } from "./support/recorded-run.js";

const TIMEOUT_MS = 90_000;

let shipped: WarrantConfig;
let directory: string;
beforeAll(async () => {
  shipped = await loadConfig(settings.configPath);
  directory = await mkdtemp(path.join(os.tmpdir(), "audit-chain-"));
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

const calendarConfig = () => calendarConfigIn(shipped, directory);

async function sql(database: Database, text: string, values: unknown[] = []): Promise<Record<string, unknown>[]> {
  return (await database.pool.query(text, values)).rows as Record<string, unknown>[];
}

describe.each(backends)("the audit chain on $name Postgres", (backend) => {
  const opened = useBackend(backend, TIMEOUT_MS);
  let database: Database;
  let tools: ToolHost;

  beforeAll(async () => {
    database = opened().database;
    tools = await connectTools(calendarConfig());
  }, TIMEOUT_MS);
  afterAll(async () => {
    await tools?.close();
  });

  it(
    "chains every event of a run and hashes its ledger and approval writes in; an untouched database verifies",
    async () => {
      const { threadId, runId } = await recordedRun(database, tools);
      const chain = await sql(
        database,
        "select seq, kind, prev_hash, hash from warrant.audit_events where run_id = $1 order by seq",
        [runId],
      );
      // denied, approval, 3 × (begin, finish) of the ledger, run_ended: one unbroken sequence.
      expect(chain.map((event) => event["kind"]).sort()).toEqual([
        "approval",
        "denied",
        "ledger",
        "ledger",
        "ledger",
        "ledger",
        "ledger",
        "ledger",
        "run_ended",
      ]);
      expect(chain.map((event) => event["seq"])).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      for (const [index, event] of chain.slice(1).entries()) expect(event["prev_hash"]).toBe(chain[index]?.["hash"]);
      const [head] = await sql(database, "select seq, hash, thread_id from warrant.audit_runs where run_id = $1", [
        runId,
      ]);
      expect(head).toEqual({ seq: 9, hash: chain[8]?.["hash"], thread_id: threadId });
      expect(await sql(database, "select count(*)::int as n from warrant.ledger where run_id = $1", [runId])).toEqual([
        { n: 3 },
      ]);

      const all = await database.verifyAudit();
      expect(all.breaks).toEqual([]);
      expect(all).toMatchObject({ runs: 1, events: 9, rows: 4 });
      expect((await database.verifyAudit(runId)).breaks).toEqual([]);
    },
    TIMEOUT_MS,
  );

  it(
    "names a changed column of a ledger row",
    async () => {
      const { threadId, runId } = await recordedRun(database, tools);
      const [write] = await sql(
        database,
        "select call_id from warrant.ledger where thread_id = $1 and tool = 'create_study_event'",
        [threadId],
      );
      await sql(
        database,
        "update warrant.ledger set status = 'failed' where thread_id = $1 and tool = 'create_study_event'",
        [threadId],
      );
      const { breaks } = await database.verifyAudit(runId);
      expect(breaks[0]).toMatchObject({
        table: "ledger",
        key: { thread_id: threadId, call_id: write?.["call_id"], attempt: "1" },
        column: "status",
      });
      expect(breaks).toHaveLength(1);
    },
    TIMEOUT_MS,
  );

  it(
    "names a changed column of an approval row",
    async () => {
      const { threadId, runId } = await recordedRun(database, tools);
      await sql(database, "update warrant.approvals set approver = 'mallory' where thread_id = $1", [threadId]);
      const { breaks } = await database.verifyAudit(runId);
      expect(breaks[0]).toMatchObject({
        table: "approvals",
        key: { thread_id: threadId, version: "1" },
        column: "approver",
      });
      expect(breaks).toHaveLength(1);
    },
    TIMEOUT_MS,
  );

  it(
    "names a changed audit event",
    async () => {
      const { threadId, runId } = await recordedRun(database, tools);
      await sql(
        database,
        "update warrant.audit_events set detail = 'nothing happened' where thread_id = $1 and kind = 'denied'",
        [threadId],
      );
      const { breaks } = await database.verifyAudit(runId);
      expect(breaks[0]).toMatchObject({
        table: "audit_events",
        key: { thread_id: threadId, run_id: runId, kind: "denied" },
      });
      expect(breaks[0]?.problem).toMatch(/does not match its hash/);
    },
    TIMEOUT_MS,
  );

  it(
    "catches a deleted ledger row, approval row, audit event, and the run's last event",
    async () => {
      const ledgerRun = await recordedRun(database, tools);
      await sql(database, "delete from warrant.ledger where thread_id = $1 and tool = 'create_study_event'", [
        ledgerRun.threadId,
      ]);
      expect((await database.verifyAudit(ledgerRun.runId)).breaks[0]).toMatchObject({
        table: "ledger",
        key: { thread_id: ledgerRun.threadId, attempt: "1" },
        problem: expect.stringMatching(/deleted/),
      });

      const approvalRun = await recordedRun(database, tools);
      await sql(database, "delete from warrant.approvals where thread_id = $1", [approvalRun.threadId]);
      expect((await database.verifyAudit(approvalRun.runId)).breaks[0]).toMatchObject({
        table: "approvals",
        key: { thread_id: approvalRun.threadId },
        problem: expect.stringMatching(/deleted/),
      });

      const eventRun = await recordedRun(database, tools);
      await sql(database, "delete from warrant.audit_events where run_id = $1 and seq = 3", [eventRun.runId]);
      expect((await database.verifyAudit(eventRun.runId)).breaks[0]).toMatchObject({
        table: "audit_events",
        key: { run_id: eventRun.runId },
        column: "seq",
        problem: expect.stringMatching(/link 3 .*missing/),
      });

      const tailRun = await recordedRun(database, tools);
      await sql(database, "delete from warrant.audit_events where run_id = $1 and kind = 'run_ended'", [tailRun.runId]);
      expect((await database.verifyAudit(tailRun.runId)).breaks[0]).toMatchObject({
        table: "audit_runs",
        key: { run_id: tailRun.runId },
        column: "seq",
        problem: expect.stringMatching(/events deleted/),
      });

      // Verifying everything finds each of them, and nothing in the runs nobody touched.
      const all = await database.verifyAudit();
      const broken = new Set(all.breaks.map((entry) => entry.key["thread_id"] ?? entry.key["run_id"]));
      for (const run of [ledgerRun, approvalRun, eventRun, tailRun])
        expect(broken.has(run.threadId) || broken.has(run.runId)).toBe(true);
    },
    4 * TIMEOUT_MS,
  );

  it(
    "keeps one unbroken chain when many writes of one run land at once",
    async () => {
      const start = runStartOf("thread-parallel", {
        run_id: `run-parallel-${backend.name}`,
        owner: "alice",
        request: "many at once",
        started_at: new Date().toISOString(),
      });
      if (!start) throw new Error("no start record");
      await Promise.all(
        Array.from({ length: 24 }, (_, index) =>
          database.ledger.begin("thread-parallel", sampleLedgerRow(`call-${index}`, 1), start),
        ),
      );
      const seqs = await sql(database, "select seq from warrant.audit_events where run_id = $1 order by seq", [
        start.run_id,
      ]);
      expect(seqs.map((row) => row["seq"])).toEqual(Array.from({ length: 24 }, (_, index) => index + 1));
      expect((await database.verifyAudit(start.run_id)).breaks).toEqual([]);
    },
    TIMEOUT_MS,
  );
});

describe("npm run audit -- verify", () => {
  const run = promisify(execFile);
  let test: TestDatabase;
  let database: Database;
  let tools: ToolHost;

  beforeAll(async () => {
    test = await createTestDatabase();
    database = await openDatabase({ databaseUrl: test.url, dataDir: os.tmpdir() });
    tools = await connectTools(calendarConfig());
  }, TIMEOUT_MS);
  afterAll(async () => {
    await tools?.close();
    await database?.close();
    await test?.drop();
  });

  const verify = (...args: string[]) =>
    run(process.execPath, ["--import", "tsx", "src/cli/audit.ts", "verify", ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, DATABASE_URL: test.url },
      timeout: 60_000,
    }).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (error: { code?: unknown; stdout?: string }) => ({
        code: typeof error.code === "number" ? error.code : -1,
        stdout: error.stdout ?? "",
      }),
    );

  it(
    "exits 0 on an untouched database and 1 naming the first broken link after a change",
    async () => {
      const { threadId, runId } = await recordedRun(database, tools);
      expect(await verify()).toEqual({
        code: 0,
        stdout: "audit chain intact: 1 run(s), 9 event(s), 4 ledger/approval row(s)\n",
      });
      expect((await verify(runId)).code).toBe(0);

      await sql(
        database,
        "update warrant.ledger set error_code = 'tool_failed' where thread_id = $1 and tool = 'list_events'",
        [threadId],
      );
      const broken = await verify(runId, "--json");
      expect(broken.code).toBe(1);
      const report = JSON.parse(broken.stdout) as {
        ok: boolean;
        first: { table: string; column: string; key: Record<string, string> };
      };
      expect(report).toMatchObject({
        ok: false,
        first: { table: "ledger", column: "error_code", key: { thread_id: threadId } },
      });
      const text = await verify();
      expect(text.code).toBe(1);
      expect(text.stdout).toMatch(
        /^audit chain broken: first broken link: ledger \(thread_id="[^"]+", call_id="[^"]+", attempt="1"\) column error_code/,
      );
    },
    2 * TIMEOUT_MS,
  );

  it(
    "is a usage error without the verify command",
    async () => {
      expect((await verify("a", "b")).code).toBe(2);
    },
    TIMEOUT_MS,
  );
});
