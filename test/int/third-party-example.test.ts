/**
 * The README's third-party example with no model (issue 22, item 6):
 * `WARRANT_CONFIG=examples/third-party.config.json npm run chat -- --user
 * alice "read welcome.txt"` reads the file through the filesystem MCP server
 * and answers with its text; a request the rules planner has no branch for
 * says it needs a model planner, never that the notes are missing alone.
 * Real processes (the CLI and the example's servers), real Postgres.
 */
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { REPO_ROOT } from "../../src/env.js";
import { lastJsonLine, outputOf } from "../support/child-output.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";

const EXAMPLE = "examples/third-party.config.json";

interface Output {
  status: string;
  result: { answer: string; abstained: boolean } | null;
  termination_reason: { code: string; detail: string } | null;
  ledger: { tool: string; status: string }[];
}

async function chat(
  request: string,
  databaseUrl: string,
): Promise<{ code: number | null; output: Output; stderr: string }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", path.join(REPO_ROOT, "src/cli/chat.ts"), "--user", "alice", "--json", request],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl, WARRANT_CONFIG: EXAMPLE },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const { code, stderr, stdout } = await outputOf(child);
  return { code, stderr, output: lastJsonLine<Output>({ stdout }, "null") };
}

describe("examples/third-party.config.json with the rules planner", () => {
  let database: TestDatabase;
  const fixture = useSandbox();
  beforeAll(async () => {
    database = fixture.add(await createTestDatabase());
  });

  it('"read welcome.txt" reads the file through the filesystem server and answers with its text', async () => {
    const { code, output, stderr } = await chat("read welcome.txt", database.url);
    expect(code, stderr).toBe(0);
    expect(output.status).toBe("completed");
    expect(output.ledger.map((row) => [row.tool, row.status])).toEqual([["read_text_file", "succeeded"]]);
    const text = await readFile(path.join(REPO_ROOT, "examples/files/welcome.txt"), "utf8");
    expect(output.result?.answer).toBe(`welcome.txt says:\n${text.trimEnd()}`);
  }, 120_000);

  it("a path that leaves the folder is not proposed at all: it needs a model planner", async () => {
    const { output } = await chat("read ../package.json", database.url);
    expect(output.ledger).toEqual([]);
    expect(output.termination_reason?.detail).toMatch(/^outside_repertoire/);
  }, 120_000);

  it("a request it has no branch for needs a model planner, not a notes tool", async () => {
    const { code, output } = await chat("echo hello from warrant", database.url);
    expect(code).toBe(0);
    expect(output.status).toBe("needs_human");
    expect(output.termination_reason?.detail).toMatch(/^outside_repertoire: .*needs a model planner/);
    expect(output.ledger).toEqual([]);
  }, 120_000);
});
