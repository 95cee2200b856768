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
 * The scenario list is the suite's own (`conformance list`, run with the Node 22 the suite needs:
 * test/int/support/conformance-suite.ts): a scenario a later suite version adds fails here until the client
 * handles it or REFUSED_BY_DESIGN names it with its reason (the README lists the same).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientScenarios, runScenario, verdicts } from "./support/conformance-suite.js";

let output: string;

beforeAll(async () => {
  output = await mkdtemp(path.join(tmpdir(), "warrant-conformance-"));
});

afterAll(async () => {
  await rm(output, { recursive: true, force: true });
});

const scenario = (name: string) => runScenario(name, path.join(output, name));

/**
 * Run with its exact verdicts by mcp-conformance-elicitation.test.ts (the
 * host's elicitation handler applies the form's defaults, SEP-1034).
 */
const RUN_ELSEWHERE = new Set(["elicitation-sep1034-client-defaults"]);
/** Scenarios the describe block above already runs with their exact verdicts. */
const RUN_ABOVE = new Set(["initialize", "tools_call", "sse-retry"]);
/**
 * Scenarios the host refuses by design, with the reason (the README's list is this one). Each still runs: the
 * client must end with the typed refusal, and the suite must see nothing of the flow.
 */
const REFUSED_BY_DESIGN: Record<string, { reason: string; code: string; failedChecks: string[] }> = {
  "auth/cross-app-access-complete-flow": {
    reason:
      "cross-app access (SEP-990: an enterprise IdP's ID token exchanged for an ID-JAG, then the jwt-bearer grant) " +
      "needs an identity-provider token for the run's owner, which Warrant does not hold; the config is refused",
    code: "config_invalid",
    failedChecks: ["complete-flow-token-exchange", "complete-flow-jwt-bearer"],
  },
};
/** Scenarios where the host must refuse (the server is not to be trusted or never grants enough). */
const REFUSED = new Set(["auth/scope-retry-limit", "auth/resource-mismatch"]);
/**
 * Checks a scenario must file as SUCCESS by id (the loop below also accepts INFO, which some of these would be
 * when the client chose not to do what they look for: offline_access, the metadata document's client id).
 */
const MUST_SUCCEED: Record<string, string[]> = {
  "auth/basic-cimd": ["cimd-client-id-used"],
  "auth/pre-registration": ["pre-registration-auth"],
  "auth/resource-mismatch": ["resource-mismatch-rejected"],
  "auth/offline-access-scope": ["sep-2207-offline-access-requested"],
  "auth/offline-access-not-supported": ["sep-2207-offline-access-not-requested"],
};

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

  it("the suite (0.1.16) lists its 26 client scenarios, 22 of them auth/*", () => {
    expect(scenarios).toHaveLength(26);
    expect(scenarios.filter((name) => name.startsWith("auth/"))).toHaveLength(22);
    for (const name of Object.keys(REFUSED_BY_DESIGN)) expect(scenarios).toContain(name);
  });

  const handledElsewhere = (name: string) => RUN_ELSEWHERE.has(name) || RUN_ABOVE.has(name);
  for (const name of scenarios.filter(
    (entry) => !handledElsewhere(entry) && !Object.hasOwn(REFUSED_BY_DESIGN, entry),
  )) {
    it(`${name}: every check SUCCESS, no warning, the client's call ended as the scenario expects`, async () => {
      const { exitCode, checks, printed } = await scenario(name);
      const notPassed = checks.filter((check) => check.status !== "SUCCESS" && check.status !== "INFO");
      expect(notPassed).toEqual([]);
      expect(checks.some((check) => check.status === "SUCCESS")).toBe(true);
      for (const id of MUST_SUCCEED[name] ?? []) expect(verdicts(checks)[id], id).toBe("SUCCESS");
      expect(printed).toMatchObject({ scenario: name });
      if (REFUSED.has(name)) expect(printed).toHaveProperty("refused");
      else expect(printed).toMatchObject({ result: { ok: true } });
      expect(exitCode).toBe(0);
    }, 120_000);
  }

  for (const [name, refusal] of Object.entries(REFUSED_BY_DESIGN)) {
    it(`${name}: refused by design with ${refusal.code}, before the host contacts any server`, async () => {
      const { checks, printed } = await scenario(name);
      expect(printed).toEqual({ scenario: name, refused: "config", code: refusal.code });
      // The suite saw no step of the flow: each of its checks is the one it files for a step never taken.
      expect(verdicts(checks)).toEqual(Object.fromEntries(refusal.failedChecks.map((id) => [id, "FAILURE"])));
    }, 120_000);
  }
});
