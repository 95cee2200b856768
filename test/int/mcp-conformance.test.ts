/**
 * The MCP conformance suite's client scenarios against Warrant's host layer
 * (issue 11, item 6). `@modelcontextprotocol/conformance` starts each
 * scenario's test server and runs test/int/support/conformance-client.ts,
 * which builds the host from a config naming that server and calls its tool
 * through `ToolHost.call`. Every check must pass (no failure, no warning),
 * and the call must have returned its result, not just reached the server:
 * before the GET-stream fix, `tools_call`'s server ran the tool and the host
 * recorded `server_unavailable`.
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
// The suite splits the command on spaces and appends the server's URL.
const CLIENT = `${process.execPath} --import tsx test/int/support/conformance-client.ts`;

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | string;
  errorMessage?: string;
}

let output: string;

beforeAll(async () => {
  output = await mkdtemp(path.join(tmpdir(), "warrant-conformance-"));
});

afterAll(async () => {
  await rm(output, { recursive: true, force: true });
});

/** Runs one scenario; returns the suite's exit code, its checks and what the client printed. */
async function scenario(
  name: string,
): Promise<{ exitCode: number; checks: Check[]; printed: Record<string, unknown> }> {
  const directory = path.join(output, name);
  const exitCode = await run(
    process.execPath,
    [CLI, "client", "--command", CLIENT, "--scenario", name, "--timeout", "60000", "-o", directory],
    {
      cwd: REPO_ROOT,
      timeout: 90_000,
    },
  ).then(
    () => 0,
    (error: { code?: unknown }) => (typeof error.code === "number" ? error.code : -1),
  );
  const [result] = await readdir(directory);
  if (!result) throw new Error(`the suite saved no results for ${name}`);
  const checks = JSON.parse(await readFile(path.join(directory, result, "checks.json"), "utf8")) as Check[];
  const stdout = (await readFile(path.join(directory, result, "stdout.txt"), "utf8")).trim();
  const printed = stdout ? (JSON.parse(stdout.split("\n").at(-1) ?? "{}") as Record<string, unknown>) : {};
  return { exitCode, checks, printed };
}

function verdicts(checks: Check[]): Record<string, string> {
  return Object.fromEntries(checks.filter((check) => check.status !== "INFO").map((check) => [check.id, check.status]));
}

describe("MCP conformance, client scenarios, against ToolHost", () => {
  it("initialize: the handshake conforms", async () => {
    const { exitCode, checks, printed } = await scenario("initialize");
    expect(verdicts(checks)).toEqual({ "mcp-client-initialization": "SUCCESS" });
    expect(printed).toMatchObject({ scenario: "initialize", listed: [] });
    expect(exitCode).toBe(0);
  }, 120_000);

  it("tools_call: the call returns its result although the server refuses the GET stream with 404", async () => {
    const { exitCode, checks, printed } = await scenario("tools_call");
    expect(verdicts(checks)).toEqual({ "tool-add-numbers": "SUCCESS" });
    expect(printed).toMatchObject({ scenario: "tools_call", result: { ok: true, text: "The sum of 2 and 3 is 5" } });
    expect(exitCode).toBe(0);
  }, 120_000);

  it("sse-retry: the host reconnects after the retry interval with Last-Event-ID and gets the result", async () => {
    const { exitCode, checks, printed } = await scenario("sse-retry");
    expect(verdicts(checks)).toEqual({
      "client-sse-graceful-reconnect": "SUCCESS",
      "client-sse-retry-timing": "SUCCESS",
      "client-sse-last-event-id": "SUCCESS",
    });
    expect(printed).toMatchObject({
      scenario: "sse-retry",
      result: { ok: true, text: "Reconnection test completed successfully" },
    });
    expect(exitCode).toBe(0);
  }, 120_000);
});
