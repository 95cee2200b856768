/**
 * The terminal entry point as a user runs it: a real process, real MCP
 * server, real Postgres. Includes the crash test: a run killed mid-call is
 * continued by a new process with --thread and finishes.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { REPO_ROOT } from "../../src/env.js";
import { type Finished, outputOf, warrantLines } from "../support/child-output.js";
import type { LedgerRow } from "../../src/state/ledger.js";
import { createEmbeddedDir, createTestDatabase, type EmbeddedDir, type TestDatabase } from "./support/postgres.js";

const CLI = path.join(REPO_ROOT, "src/cli/chat.ts");
const QUESTION = "Compare self-attention with cross-attention using my notes";

function baseEnvironment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const environment: NodeJS.ProcessEnv = { ...process.env, ...extra };
  if (!("DATABASE_URL" in extra)) delete environment["DATABASE_URL"];
  return environment;
}

function startCli(args: string[], extra: Record<string, string>): ChildProcess {
  // Its own process group, so the test can kill the CLI together with its MCP child.
  return spawn(process.execPath, ["--import", "tsx", CLI, ...args], {
    cwd: REPO_ROOT,
    env: baseEnvironment(extra),
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

function runCli(args: string[], extra: Record<string, string>): Promise<Finished> {
  return outputOf(startCli(args, extra));
}

/** The last stdout line, parsed (the CLI's --json output). */
function jsonOutput(finished: Finished): {
  status: string;
  ledger: LedgerRow[];
  termination_reason: { code: string } | null;
  result: { citations: { source_id: string }[] } | null;
} {
  const line = finished.stdout.trim().split("\n").at(-1) ?? "";
  return JSON.parse(line);
}

interface Storage {
  name: string;
  environment: Record<string, string>;
  cleanup(): Promise<void>;
}

const storages: { name: string; create(): Promise<Storage> }[] = [
  {
    name: "server",
    async create() {
      const database: TestDatabase = await createTestDatabase();
      return { name: "server", environment: { DATABASE_URL: database.url }, cleanup: () => database.drop() };
    },
  },
  {
    name: "embedded",
    async create() {
      const directory: EmbeddedDir = await createEmbeddedDir();
      return { name: "embedded", environment: { WARRANT_DATA_DIR: directory.dir }, cleanup: () => directory.remove() };
    },
  },
];

describe.each(storages)("chat CLI on $name Postgres", (kind) => {
  let storage: Storage;
  const fixture = useSandbox();
  beforeAll(async () => {
    storage = fixture.add(await kind.create());
  });

  it("answers alice citing only cs301 and ends with its termination reason", async () => {
    const finished = await runCli(["--user", "alice", "--json", QUESTION], storage.environment);
    expect(finished.code).toBe(0);
    const output = jsonOutput(finished);
    expect(output.status).toBe("completed");
    expect(output.termination_reason?.code).toBe("final_answer");
    expect(output.result?.citations.every((citation) => citation.source_id.startsWith("cs301/"))).toBe(true);
  });

  it("continues a run killed in the middle of a tool call, in a new process", async () => {
    const child = startCli(["--user", "alice", "--json", QUESTION], {
      ...storage.environment,
      WARRANT_NOTES_DELAY_MS: "60000",
    });
    const finished = outputOf(child);
    // The thread id is on stderr as soon as the run starts.
    let threadId = "";
    let stderr = "";
    // Wait until a read_note call is in flight (the notes server says so), then kill everything.
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the run never reached read_note")), 75_000);
      child.stderr?.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        threadId ||= /^thread: ([0-9a-f-]{36})/m.exec(stderr)?.[1] ?? "";
        if (chunk.toString().includes("read_note delayed")) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    process.kill(-(child.pid as number), "SIGKILL");
    expect((await finished).code).not.toBe(0);
    expect(threadId).not.toBe("");

    const resumed = await runCli(["--user", "alice", "--thread", threadId, "--json"], storage.environment);
    expect(resumed.code).toBe(0);
    const output = jsonOutput(resumed);
    expect(output.status).toBe("completed");
    const reads = output.ledger.filter((row) => row.tool === "read_note");
    // Every read the killed process started is recorded as abandoned, then ran again once.
    const abandoned = reads.filter((row) => row.status === "abandoned");
    expect(abandoned.length).toBeGreaterThan(0);
    for (const row of abandoned) {
      const retries = reads.filter((other) => other.call_id === row.call_id && other.attempt === row.attempt + 1);
      expect(retries.map((retry) => retry.status)).toEqual(["succeeded"]);
    }
    // The search finished before the crash and was not repeated.
    expect(output.ledger.filter((row) => row.tool === "search_notes")).toHaveLength(1);
  }, 180_000);
});

describe("chat CLI refuses bad input with one clear line", () => {
  it.each([
    ["a malformed DATABASE_URL", { DATABASE_URL: "not a url" }, "warrant: config_invalid"],
    ["a non-postgres DATABASE_URL", { DATABASE_URL: "mysql://root@127.0.0.1/x" }, "warrant: config_invalid"],
    [
      "an unreachable database",
      { DATABASE_URL: "postgres://postgres@127.0.0.1:1/warrant" },
      "warrant: database_unreachable",
    ],
    [
      "an MCP server that fails to start",
      { WARRANT_NOTES_FAIL_START: "1", DATABASE_URL: "postgres://postgres@127.0.0.1:5432/postgres" },
      "warrant: mcp_start_failed",
    ],
    ["a bad budget", { WARRANT_MAX_TOOL_CALLS: "lots" }, "warrant: config_invalid"],
    ["a missing config file", { WARRANT_CONFIG: "/nonexistent/warrant.config.json" }, "warrant: config_invalid"],
  ])(
    "%s",
    async (_label, environment, expected) => {
      const finished = await runCli(["--user", "alice", "hello"], environment);
      expect(finished.code).toBe(1);
      const lines = warrantLines(finished.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]?.startsWith(expected)).toBe(true);
      expect(finished.stderr).not.toMatch(/^\s+at /m);
    },
    30_000,
  );

  it("a config with a JSON syntax error: fails before any thread is opened, naming the line and column", async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), "warrant-bad-config-"));
    const file = path.join(directory, "warrant.config.json");
    await writeFile(file, '{\n  "servers": {\n    "notes": {,\n  }\n}\n');
    try {
      const finished = await runCli(["--user", "alice", "hello"], {
        WARRANT_CONFIG: file,
        DATABASE_URL: "postgres://postgres@127.0.0.1:5432/postgres",
      });
      expect(finished.code).toBe(1);
      expect(finished.stderr).not.toMatch(/^thread:/m);
      const lines = warrantLines(finished.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^warrant: config_invalid: .*not valid JSON at line 3, column 15: /);
      expect(lines[0]).not.toMatch(/position \d+/);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  }, 30_000);

  it("rejects an unknown user", async () => {
    const finished = await runCli(["--user", "mallory", "hello"], {});
    expect(finished.code).toBe(1);
    expect(warrantLines(finished.stderr)[0]).toMatch(/^warrant: principal_unknown/);
  });

  it.each([
    [["hello"]],
    [["--user", "alice"]],
    [["--user", "alice", "--thread", "../../etc", "hi"]],
    [["--user", "alice", "--thread", "t1", "--resume", "{not json"]],
    [["--user", "alice", "--thread", "t1", "--resume", "null"]],
    [["--user", "alice", "--bogus", "hi"]],
  ])("exits 2 on usage errors: %j", async (args) => {
    const finished = await runCli(args, {});
    expect(finished.code).toBe(2);
    expect(warrantLines(finished.stderr)).toHaveLength(1);
  });
});
