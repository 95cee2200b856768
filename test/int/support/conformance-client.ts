/**
 * Warrant's host as a client under the MCP conformance suite
 * (`@modelcontextprotocol/conformance client --command "<this> " --scenario S`).
 * The suite starts a test server per scenario, appends its URL to the command
 * and names the scenario in MCP_CONFORMANCE_SCENARIO. This program builds the
 * host from a config naming that URL (one Streamable HTTP server, a contract
 * for the scenario's tool) and calls the tool through `ToolHost.call`, the
 * path the execute node uses. It prints one JSON line: the scenario, the
 * tools the host listed and the call's normalized result; it exits 1 when the
 * call did not return a result.
 *
 * Run as `node --import tsx test/int/support/conformance-client.ts <url>`.
 */
import { findPrincipal, loadPrincipalDirectory } from "../../../src/auth/principal.js";
import { loadSettings } from "../../../src/env.js";
import { connectTools } from "../../../src/mcp/tool-host.js";
import { parseConfig } from "../../../src/policy/config.js";

/** What each client scenario's server offers to call: its tool and the arguments it expects. */
const CALLS: Record<string, { tool: string; args: Record<string, unknown> } | undefined> = {
  initialize: undefined,
  tools_call: { tool: "add_numbers", args: { a: 2, b: 3 } },
  "sse-retry": { tool: "test_reconnection", args: {} },
  "elicitation-sep1034-client-defaults": { tool: "test_client_elicitation_defaults", args: {} },
};

const url = process.argv.at(-1) ?? "";
const scenario = process.env["MCP_CONFORMANCE_SCENARIO"] ?? "";
if (!/^https?:\/\//.test(url) || !Object.hasOwn(CALLS, scenario)) {
  process.stderr.write(
    `usage: MCP_CONFORMANCE_SCENARIO=${Object.keys(CALLS).join("|")} conformance-client <server-url>\n`,
  );
  process.exit(2);
}
const call = CALLS[scenario];

const config = parseConfig(
  JSON.stringify({
    servers: { conformance: { transport: "http", url, audience: "conformance", elicitation: true } },
    tools: call ? { [call.tool]: { server: "conformance", risk: "read", timeout_ms: 10_000 } } : {},
  }),
  "conformance config",
);
const settings = loadSettings({});
const principal = findPrincipal(await loadPrincipalDirectory(settings.principalsPath), "dana");

// The suite's "user" accepts every question leaving each field empty: the host fills in the defaults (SEP-1034).
const host = await connectTools(config, undefined, {
  elicitation: { ask: async () => ({ action: "accept", content: {} }) },
});
let exitCode = 0;
try {
  const listed = host.catalog().map((tool) => tool.name);
  if (!call) {
    process.stdout.write(`${JSON.stringify({ scenario, listed })}\n`);
  } else {
    const tool = host.catalog().find((candidate) => candidate.name === call.tool);
    if (!tool) throw new Error(`the server did not list ${call.tool}`);
    const result = await host.call(tool, call.args, {
      timeoutMs: tool.contract.timeout_ms,
      principal,
      threadId: `conformance-${scenario}`,
    });
    process.stdout.write(`${JSON.stringify({ scenario, listed, result })}\n`);
    if (!result.ok) exitCode = 1;
  }
} catch (error) {
  process.stderr.write(`conformance client: ${error instanceof Error ? error.message : String(error)}\n`);
  exitCode = 1;
} finally {
  await host.close();
}
process.exit(exitCode);
