/**
 * The conformance suite's `elicitation-sep1034-client-defaults` scenario
 * through the host (issue 25, item 3): the scenario's server elicits a form
 * whose every field has a default during a tool call; the host declares form
 * elicitation, routes the question to the call's answerer (here one that
 * accepts leaving every field empty) and fills in the defaults before the
 * answer goes back. Without the handler the server's request fails and all
 * five checks are FAILURE.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../src/env.js";

const run = promisify(execFile);
const CLI = path.join(REPO_ROOT, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
const CLIENT = `${process.execPath} --import tsx test/int/support/conformance-client.ts`;
const SCENARIO = "elicitation-sep1034-client-defaults";

let output: string;

beforeAll(async () => {
  output = await mkdtemp(path.join(tmpdir(), "warrant-conformance-elicitation-"));
});

afterAll(async () => {
  await rm(output, { recursive: true, force: true });
});

describe("MCP conformance: elicitation defaults (SEP-1034) through the host", () => {
  it("passes every check of the scenario", async () => {
    const exitCode = await run(
      process.execPath,
      [CLI, "client", "--command", CLIENT, "--scenario", SCENARIO, "--timeout", "60000", "-o", output],
      { cwd: REPO_ROOT, timeout: 90_000 },
    ).then(
      () => 0,
      (error: { code?: unknown }) => (typeof error.code === "number" ? error.code : -1),
    );
    const [result] = await readdir(output);
    if (!result) throw new Error("the suite saved no results");
    const checks = JSON.parse(await readFile(path.join(output, result, "checks.json"), "utf8")) as {
      id: string;
      status: string;
    }[];
    const verdicts = Object.fromEntries(
      checks.filter((check) => check.status !== "INFO").map((check) => [check.id, check.status]),
    );
    expect(verdicts).toEqual({
      "client-elicitation-sep1034-string-default": "SUCCESS",
      "client-elicitation-sep1034-integer-default": "SUCCESS",
      "client-elicitation-sep1034-number-default": "SUCCESS",
      "client-elicitation-sep1034-enum-default": "SUCCESS",
      "client-elicitation-sep1034-boolean-default": "SUCCESS",
    });
    const stdout = (await readFile(path.join(output, result, "stdout.txt"), "utf8")).trim();
    const printed = JSON.parse(stdout.split("\n").at(-1) ?? "{}") as { result?: { ok?: boolean; text?: string } };
    expect(printed.result?.ok).toBe(true);
    expect(printed.result?.text).toContain('"name":"John Doe"');
    expect(exitCode).toBe(0);
  }, 120_000);
});
