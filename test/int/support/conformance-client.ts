/**
 * Warrant's host as a client under the MCP conformance suite
 * (`@modelcontextprotocol/conformance client --command "<this> " --scenario S`).
 * The suite starts a test server per scenario, appends its URL to the command,
 * names the scenario in MCP_CONFORMANCE_SCENARIO and, for some, passes
 * credentials in MCP_CONFORMANCE_CONTEXT. This program builds the host from a
 * config naming that URL (one Streamable HTTP server, its `auth` when the
 * scenario is an OAuth one, a contract for the scenario's tool) and calls the
 * tool through `ToolHost.call`, the path the execute node uses. OAuth runs
 * through the host's OAuth client (src/mcp/oauth-*.ts, the SDK's auth); the
 * user's browser step is played by `authorize` below: it visits the
 * authorization URL and takes the code from the redirect, as a browser would.
 * It prints one JSON line: the scenario, the tools the host listed and the
 * call's normalized result; it exits 1 when the call did not return a result.
 *
 * SCENARIOS has one entry per client scenario of the suite; the whole-suite
 * test (test/int/mcp-conformance.test.ts) fails for a scenario missing here.
 *
 * Run as `node --import tsx test/int/support/conformance-client.ts <url>`.
 */
import { findPrincipal, loadPrincipalDirectory } from "../../../src/auth/principal.js";
import { loadSettings } from "../../../src/env.js";
import { WarrantError } from "../../../src/errors.js";
import type { Authorize } from "../../../src/oauth/authorization.js";
import { connectTools } from "../../../src/mcp/tool-host.js";
import { parseConfig } from "../../../src/policy/config.js";

/** What a scenario's server expects: the tool to call (and its arguments) and how to authorize. */
interface Scenario {
  call?: { tool: string; args: Record<string, unknown> };
  /**
   * `authorization_code`: the SDK's discovery, registration and PKCE, the browser step played here;
   * `authorization_code_preregistered`: the same with the client id and secret the suite gives (no registration);
   * `cross_app_access`: what such a config would ask for, refused by design at config load (src/oauth/config.ts).
   */
  auth?:
    | "authorization_code"
    | "authorization_code_preregistered"
    | "client_credentials_basic"
    | "client_credentials_jwt"
    | "cross_app_access";
  /** The server never grants enough: the host must give up after its authorization attempts (a typed refusal). */
  refused?: true;
  /** The host refuses the server's configuration by design: the client prints the error's code. */
  refusedByDesign?: true;
  /** Answered by the host's elicitation handler (src/mcp elicitation, issue 25 item 3). */
  elicitation?: true;
}

const AUTH_CALL = { tool: "test-tool", args: {} };
const authorizationCode: Scenario = { auth: "authorization_code", call: AUTH_CALL };

/** One entry per client scenario of `@modelcontextprotocol/conformance list`. */
const SCENARIOS: Record<string, Scenario> = {
  initialize: {},
  tools_call: { call: { tool: "add_numbers", args: { a: 2, b: 3 } } },
  "elicitation-sep1034-client-defaults": {
    elicitation: true,
    call: { tool: "test_client_elicitation_defaults", args: {} },
  },
  "sse-retry": { call: { tool: "test_reconnection", args: {} } },
  "auth/metadata-default": authorizationCode,
  "auth/metadata-var1": authorizationCode,
  "auth/metadata-var2": authorizationCode,
  "auth/metadata-var3": authorizationCode,
  "auth/basic-cimd": authorizationCode,
  "auth/2025-03-26-oauth-metadata-backcompat": authorizationCode,
  "auth/2025-03-26-oauth-endpoint-fallback": authorizationCode,
  "auth/scope-from-www-authenticate": authorizationCode,
  "auth/scope-from-scopes-supported": authorizationCode,
  "auth/scope-omitted-when-undefined": authorizationCode,
  "auth/scope-step-up": authorizationCode,
  "auth/scope-retry-limit": { ...authorizationCode, refused: true },
  "auth/token-endpoint-auth-basic": authorizationCode,
  "auth/token-endpoint-auth-post": authorizationCode,
  "auth/token-endpoint-auth-none": authorizationCode,
  "auth/client-credentials-jwt": { auth: "client_credentials_jwt", call: AUTH_CALL },
  "auth/client-credentials-basic": { auth: "client_credentials_basic", call: AUTH_CALL },
  "auth/pre-registration": { auth: "authorization_code_preregistered", call: AUTH_CALL },
  // The protected resource metadata names another resource: the host refuses before any authorization request.
  "auth/resource-mismatch": { ...authorizationCode, refused: true },
  "auth/offline-access-scope": authorizationCode,
  "auth/offline-access-not-supported": authorizationCode,
  "auth/cross-app-access-complete-flow": { auth: "cross_app_access", call: AUTH_CALL, refusedByDesign: true },
};

/** The client id the suite's CIMD scenario expects (an https URL: a Client ID Metadata Document). */
const CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json";
const REDIRECT_URI = "http://localhost:3000/callback";

const url = process.argv.at(-1) ?? "";
const name = process.env["MCP_CONFORMANCE_SCENARIO"] ?? "";
if (!/^https?:\/\//.test(url) || !Object.hasOwn(SCENARIOS, name)) {
  process.stderr.write(
    `usage: MCP_CONFORMANCE_SCENARIO=${Object.keys(SCENARIOS).join("|")} conformance-client <server-url>\n`,
  );
  process.exit(2);
}
const scenario = SCENARIOS[name] ?? {};
const context = JSON.parse(process.env["MCP_CONFORMANCE_CONTEXT"] ?? "{}") as Record<string, unknown>;
const text = (key: string): string => (typeof context[key] === "string" ? context[key] : "");

/** The server's `auth` block, and the values of the environment variables it names. */
function authFor(kind: Scenario["auth"]): { auth?: Record<string, unknown>; credentials: Record<string, string> } {
  switch (kind) {
    case undefined:
      return { credentials: {} };
    case "authorization_code":
      return {
        auth: {
          type: "oauth",
          grant: "authorization_code",
          client_name: "warrant-conformance",
          client_metadata_url: CLIENT_METADATA_URL,
          redirect_uri: REDIRECT_URI,
        },
        credentials: {},
      };
    case "authorization_code_preregistered":
      return {
        auth: {
          type: "oauth",
          grant: "authorization_code",
          client_id: text("client_id"),
          client_secret: "${CONFORMANCE_CLIENT_SECRET}",
          redirect_uri: REDIRECT_URI,
        },
        credentials: { CONFORMANCE_CLIENT_SECRET: text("client_secret") },
      };
    case "cross_app_access":
      return {
        auth: {
          type: "oauth",
          grant: "urn:ietf:params:oauth:grant-type:jwt-bearer",
          client_id: text("client_id"),
          client_secret: "${CONFORMANCE_CLIENT_SECRET}",
        },
        credentials: { CONFORMANCE_CLIENT_SECRET: text("client_secret") },
      };
    case "client_credentials_basic":
      return {
        auth: {
          type: "oauth",
          grant: "client_credentials",
          client_id: text("client_id"),
          client_secret: "${CONFORMANCE_CLIENT_SECRET}",
          token_endpoint_auth_method: "client_secret_basic",
        },
        credentials: { CONFORMANCE_CLIENT_SECRET: text("client_secret") },
      };
    case "client_credentials_jwt":
      return {
        auth: {
          type: "oauth",
          grant: "client_credentials",
          client_id: text("client_id"),
          private_key: "${CONFORMANCE_PRIVATE_KEY}",
          signing_algorithm: text("signing_algorithm") || "ES256",
        },
        credentials: { CONFORMANCE_PRIVATE_KEY: text("private_key_pem") },
      };
  }
}

/** The user's browser: follows the authorization URL to its redirect and hands back the code. */
const authorize: Authorize = async ({ url: authorizationUrl }) => {
  const response = await fetch(authorizationUrl, { redirect: "manual" });
  await response.body?.cancel().catch(() => undefined);
  const location = response.headers.get("location");
  const code = location ? new URL(location, authorizationUrl).searchParams.get("code") : null;
  if (!code) throw new Error(`the authorization server did not redirect with a code (HTTP ${response.status})`);
  return code;
};

const { auth, credentials } = authFor(scenario.auth);
const call = scenario.call;
const config = parseConfigOrRefuse(
  JSON.stringify({
    servers: {
      conformance: {
        transport: "http",
        url,
        audience: "conformance",
        ...(auth ? { auth } : {}),
        ...(scenario.elicitation ? { elicitation: true } : {}),
      },
    },
    tools: call ? { [call.tool]: { server: "conformance", risk: "read", timeout_ms: 10_000 } } : {},
  }),
  "conformance config",
);
const settings = loadSettings({});

/** The config, or (a scenario refused by design) one line naming the typed error's code, and exit 0. */
function parseConfigOrRefuse(text: string, source: string): ReturnType<typeof parseConfig> {
  try {
    return parseConfig(text, source);
  } catch (error) {
    if (!scenario.refusedByDesign) throw error;
    const code = error instanceof WarrantError ? error.code : "unknown";
    process.stdout.write(`${JSON.stringify({ scenario: name, refused: "config", code })}\n`);
    process.exit(0);
  }
}
const principal = findPrincipal(await loadPrincipalDirectory(settings.principalsPath), "dana");
/** One line for the test: the scenario, the listed tools and the call's result (or the refusal). */
const print = (line: Record<string, unknown>): void =>
  void process.stdout.write(`${JSON.stringify({ scenario: name, ...line })}\n`);
const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));

// The suite's "user" accepts every question leaving each field empty: the host fills in the defaults (SEP-1034).
const host = await connectTools(config, undefined, {
  oauth: { credentials, authorize, catalogOwner: principal.user_id },
  ...(scenario.elicitation ? { elicitation: { ask: async () => ({ action: "accept" as const, content: {} }) } } : {}),
}).catch((error: unknown) => {
  if (scenario.refused) print({ refused: "start", reason: reason(error) });
  else process.stderr.write(`conformance client: ${reason(error)}\n`);
  process.exit(scenario.refused ? 0 : 1);
});
let exitCode = 0;
try {
  const listed = host.catalog().map((tool) => tool.name);
  if (!call) {
    print({ listed });
  } else {
    const tool = host.catalog().find((candidate) => candidate.name === call.tool);
    if (!tool) throw new Error(`the server did not list ${call.tool}`);
    const result = await host.call(tool, call.args, {
      timeoutMs: tool.contract.timeout_ms,
      principal,
      threadId: `conformance-${name}`,
    });
    print(scenario.refused && !result.ok ? { listed, refused: "call", result } : { listed, result });
    if (result.ok === Boolean(scenario.refused)) exitCode = 1;
  }
} catch (error) {
  process.stderr.write(`conformance client: ${reason(error)}\n`);
  exitCode = 1;
} finally {
  await host.close();
}
process.exit(exitCode);
