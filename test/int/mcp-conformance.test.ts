/**
 * The MCP conformance suite's client scenarios against Warrant's host layer
 * (issue 11, item 6; issue 25: the whole suite, OAuth included). `@modelcontextprotocol/conformance` starts each
 * scenario's test server and runs test/int/support/conformance-client.ts,
 * which builds the host from a config naming that server and calls its tool
 * through `ToolHost.call`. Every check must pass (no failure, no warning),
 * and the call must have returned its result, not just reached the server:
 * before the GET-stream fix, `tools_call`'s server ran the tool and the host
 * recorded `server_unavailable`.
 *
 * The scenario list is the suite's own (`conformance list`): a scenario a
 * later suite version adds fails here until the client handles it.
 */
import { execFile, execFileSync } from "node:child_process";
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

/** The suite's client scenarios, as `conformance list` prints them. */
function clientScenarios(): string[] {
  const listing = execFileSync(process.execPath, [CLI, "list"], { cwd: REPO_ROOT, encoding: "utf8" });
  const section = listing.split(/Client scenarios[^\n]*\n/)[1] ?? "";
  return [...section.matchAll(/^\s+- (\S+)$/gm)].map((match) => match[1] ?? "");
}

/**
 * Run with its exact verdicts by mcp-conformance-elicitation.test.ts (the
 * host's elicitation handler applies the form's defaults, SEP-1034).
 */
const RUN_ELSEWHERE = new Set(["elicitation-sep1034-client-defaults"]);
/** Scenarios the describe block above already runs with their exact verdicts. */
const RUN_ABOVE = new Set(["initialize", "tools_call", "sse-retry"]);

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

describe("MCP conformance, every client scenario of the suite, through ToolHost", () => {
  const scenarios = clientScenarios();

  it("the suite lists its 21 client scenarios, 17 of them auth/*", () => {
    expect(scenarios).toHaveLength(21);
    expect(scenarios.filter((name) => name.startsWith("auth/"))).toHaveLength(17);
  });

  for (const name of scenarios.filter((entry) => !RUN_ELSEWHERE.has(entry) && !RUN_ABOVE.has(entry))) {
    it(`${name}: every check SUCCESS, no warning, the client's call ended as the scenario expects`, async () => {
      const { exitCode, checks, printed } = await scenario(name);
      const notPassed = checks.filter((check) => check.status !== "SUCCESS" && check.status !== "INFO");
      expect(notPassed).toEqual([]);
      expect(checks.some((check) => check.status === "SUCCESS")).toBe(true);
      expect(printed).toMatchObject({ scenario: name });
      if (name === "auth/scope-retry-limit") expect(printed).toHaveProperty("refused");
      else if (name !== "initialize") expect(printed).toMatchObject({ result: { ok: true } });
      expect(exitCode).toBe(0);
    }, 120_000);
  }
});
