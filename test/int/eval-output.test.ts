/**
 * Where `npm run eval` writes (issue 22): with no `--out`, a fresh scratch
 * directory that it prints, leaving the tracked sample report in
 * `eval/results/` byte for byte as it was; with `--out DIR`, DIR. A real
 * process on a one-task run (the fixed workflow, no model).
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../src/env.js";
import { outputDirectory } from "../../eval/output-dir.js";
import { ADMIN_URL } from "./support/postgres.js";

const SAMPLE = path.join(REPO_ROOT, "eval/results");
const FILES = ["report.md", "runs.json", "success-rate.svg", "cost-per-success.svg"];
const ONE_TASK = ["--tasks", "notes-bm25", "--configurations", "workflow", "--repeats", "1"];
const made: string[] = [];

async function digests(dir: string): Promise<Record<string, string>> {
  const entries = await Promise.all(
    FILES.map(async (name) => [
      name,
      createHash("sha256")
        .update(await fs.readFile(path.join(dir, name)))
        .digest("hex"),
    ]),
  );
  return Object.fromEntries(entries);
}

function runEval(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(REPO_ROOT, "eval/main.ts"), ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, DATABASE_URL: ADMIN_URL },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stderr })));
}

afterAll(async () => {
  for (const dir of made) await fs.rm(dir, { recursive: true, force: true });
});

describe("npm run eval's output directory", () => {
  it("writes a one-task run to a printed scratch directory and leaves eval/results untouched", async () => {
    const before = await digests(SAMPLE);
    const finished = await runEval(ONE_TASK);
    expect(finished.code, finished.stderr).toBe(0);
    const dir = /wrote (\S+)\/report\.md/.exec(finished.stderr)?.[1] ?? "";
    made.push(dir);
    expect(path.isAbsolute(dir)).toBe(true);
    expect(dir.startsWith(os.tmpdir())).toBe(true);
    for (const name of FILES) expect(existsSync(path.join(dir, name)), name).toBe(true);
    expect(JSON.parse(await fs.readFile(path.join(dir, "runs.json"), "utf8")).runs).toHaveLength(1);
    expect(await digests(SAMPLE)).toEqual(before);
  }, 300_000);

  it("writes where --out says, creating it", async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), "eval-out-test-"));
    made.push(root);
    const target = path.join(root, "nested", "results");
    expect(await outputDirectory(target)).toEqual({ dir: target, scratch: false });
    const scratch = await outputDirectory(undefined, root);
    expect(scratch.scratch).toBe(true);
    expect(path.dirname(scratch.dir)).toBe(root);
    expect(existsSync(scratch.dir)).toBe(true);
  });
});
