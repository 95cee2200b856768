/**
 * A `client_credentials` server end to end (issue 25 item 1): the test's own
 * authorization server and OAuth-protected MCP server on loopback
 * (support/oauth-client-credentials-servers.ts), one per client
 * authentication method (`client_secret_basic`, `client_secret_post`,
 * `private_key_jwt`), configured as warrant.config.json would be with the
 * secret or key named `${NAME}` and given through the environment only. A
 * full agent run on real Postgres calls the tool with no user step and no
 * interrupt, the resource server sees a token issued to the deployment's
 * client by the configured method, and the run completes. Config mistakes
 * are typed `config_invalid` errors at start.
 */
import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { credentialValues } from "../../src/env.js";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import type { Database } from "../../src/stores/open-database.js";
import { parseConfig } from "../../src/policy/config.js";
import { credentialNames } from "../../src/oauth/config.js";
import { calls, proposal, scriptedPlanner } from "../support/scripted-planner.js";
import { traceparentOf } from "../../src/trace-ids.js";
import { agentHarness, principal } from "./support/agent.js";
import {
  type ClientAuthMethod,
  type ClientCredentialsServers,
  startClientCredentialsServers,
} from "./support/oauth-client-credentials-servers.js";
import { openTestDatabase } from "./support/postgres.js";

const SECRET = `cc-secret-${process.pid}-do-not-leak`;
const keys = generateKeyPairSync("ec", { namedCurve: "P-256" });
const PRIVATE_KEY = keys.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
const PUBLIC_KEY = keys.publicKey.export({ type: "spki", format: "pem" }).toString();

let servers: ClientCredentialsServers;
let database: Database;
const hosts: ToolHost[] = [];

/** warrant.config.json for one server of the test's own, authenticating by `method`. */
function configText(method: ClientAuthMethod, auth: Record<string, unknown> = {}) {
  const credential =
    method === "private_key_jwt"
      ? { private_key: "${WARRANT_TEST_CC_KEY}" }
      : { client_secret: "${WARRANT_TEST_CC_SECRET}", token_endpoint_auth_method: method };
  return JSON.stringify({
    servers: {
      reports: {
        transport: "http",
        url: servers.mcpUrl,
        audience: "reports",
        auth: {
          type: "oauth",
          grant: "client_credentials",
          client_id: method === "private_key_jwt" ? "warrant-jwt" : "warrant",
          issuer: servers.issuer,
          ...credential,
          ...auth,
        },
      },
    },
    tools: {
      whoami: { server: "reports", risk: "read", timeout_ms: 10_000 },
      traceparent: { server: "reports", risk: "read", timeout_ms: 10_000 },
    },
  });
}

/** The host as bootstrap builds it: the credentials the config names, read from the environment. */
async function hostFor(method: ClientAuthMethod) {
  const config = parseConfig(configText(method));
  const host = await connectTools(config, undefined, {
    oauth: { credentials: credentialValues(credentialNames(config.servers), process.env) },
  });
  hosts.push(host);
  return host;
}

beforeAll(async () => {
  process.env["WARRANT_TEST_CC_SECRET"] = SECRET;
  process.env["WARRANT_TEST_CC_KEY"] = PRIVATE_KEY;
  servers = await startClientCredentialsServers([
    { client_id: "warrant", client_secret: SECRET },
    { client_id: "warrant-jwt", public_key: PUBLIC_KEY },
  ]);
  database = await openTestDatabase();
}, 60_000);

afterAll(async () => {
  for (const host of hosts) await host.close();
  await servers?.close();
  await database?.close();
  delete process.env["WARRANT_TEST_CC_SECRET"];
  delete process.env["WARRANT_TEST_CC_KEY"];
});

describe("client_credentials server through a full run", () => {
  for (const method of ["client_secret_basic", "client_secret_post", "private_key_jwt"] as const) {
    it(`${method}: the tool runs on the deployment's token, no user step, the run completes`, async () => {
      const issuedBefore = servers.issued.length;
      const seenBefore = servers.seen.length;
      const tools = await hostFor(method);
      const planner = scriptedPlanner([
        calls(proposal("whoami", {})),
        { type: "final", answer: "Checked the reports server.", citations: [], abstained: false },
      ]);
      const agent = agentHarness({ database, tools, planner });
      const { threadId, state } = await agent.run("alice", "Who am I on the reports server?");
      planner.assertDone();

      expect(state.status).toBe("completed");
      expect(await agent.interrupts(threadId)).toEqual([]);
      expect(state.ledger.map((row) => [row.tool, row.status])).toEqual([["whoami", "succeeded"]]);

      // A token was issued to the deployment's client, by the configured method, for this resource.
      const issued = servers.issued.slice(issuedBefore);
      expect(issued.length).toBeGreaterThanOrEqual(1);
      for (const entry of issued) {
        expect(entry.method).toBe(method);
        expect(entry.client_id).toBe(method === "private_key_jwt" ? "warrant-jwt" : "warrant");
        expect(entry.resource).toBe(servers.mcpUrl);
      }
      const seen = servers.seen.slice(seenBefore);
      expect(seen).toHaveLength(1);
      expect(issued.map((entry) => entry.token)).toContain(seen[0]);
      expect(servers.refused).toEqual([]);

      // Neither the secret nor the token is in the run's state (checkpoints).
      const dump = JSON.stringify(state);
      for (const secret of [SECRET, PRIVATE_KEY, ...issued.map((entry) => entry.token)])
        expect(dump).not.toContain(secret);
    }, 60_000);
  }
});

describe("traceparent on an OAuth-protected server", () => {
  it("arrives in a tool call attempt's _meta", async () => {
    const host = await hostFor("client_secret_basic");
    const tool = host.catalog().find((entry) => entry.name === "traceparent") ?? expect.fail("traceparent not listed");
    const runId = "7d1e4c2a-3b5f-4e6a-8c9d-0a1b2c3d4e5f";
    const options = { timeoutMs: 10_000, principal: await principal("alice"), threadId: "oauth-trace" };
    const result = await host.call(tool, {}, { ...options, record: { call_id: "c9", run_id: runId, attempt: 2 } });
    expect(result.ok && result.text).toBe(traceparentOf(runId, "c9", 2));
  }, 60_000);
});

describe("client_credentials config, validated at start", () => {
  function configError(text: string): { code: unknown; message: string } {
    try {
      parseConfig(text);
    } catch (error) {
      return { code: (error as { code?: unknown }).code, message: error instanceof Error ? error.message : "" };
    }
    throw new Error("parsed");
  }

  it("refuses a secret written in the file, an unknown grant and an unknown method", () => {
    const literal = configError(configText("client_secret_basic", { client_secret: SECRET }));
    expect(literal.code).toBe("config_invalid");
    expect(literal.message).toMatch(/environment variable/);
    expect(literal.message).not.toContain(SECRET);
    const grant = configError(configText("client_secret_basic", { grant: "password" }));
    expect(grant.code).toBe("config_invalid");
    expect(grant.message).toMatch(/grant/);
    const method = configError(configText("client_secret_basic", { token_endpoint_auth_method: "tls_client_auth" }));
    expect(method.code).toBe("config_invalid");
    expect(method.message).toMatch(/token_endpoint_auth_method/);
    const mismatch = configError(configText("private_key_jwt", { token_endpoint_auth_method: "client_secret_post" }));
    expect(mismatch.code).toBe("config_invalid");
    expect(mismatch.message).toMatch(/private_key_jwt/);
  });

  it("refuses to start when the environment variable the config names is not set", async () => {
    const config = parseConfig(configText("client_secret_basic"));
    await expect(
      connectTools(config, undefined, {
        oauth: { credentials: credentialValues(credentialNames(config.servers), {}) },
      }),
    ).rejects.toMatchObject({ code: "config_invalid", message: expect.stringMatching(/WARRANT_TEST_CC_SECRET/) });
  });
});
