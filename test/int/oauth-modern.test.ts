/**
 * A `client_credentials` OAuth server on 2026-07-28 (issue 39 item 1): the
 * test's own authorization server and an OAuth-protected MCP server on
 * loopback (support/oauth-client-credentials-servers.ts) answering both
 * revisions through the v2 SDK's handler, or 2025-11-25 only through the v1
 * SDK. The host negotiates as with any HTTP server (`server/discover` with the
 * deployment's token), reads and writes on 2026-07-28 with the token the
 * authorization server issued, gets a new one after a 401 as on 2025-11-25,
 * fails the same way on both revisions when the authorization server is not
 * the configured issuer, and speaks 2025-11-25 to a v1-only server.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Revision } from "../../src/mcp/connection.js";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import { parseConfig } from "../../src/policy/config.js";
import { useSandbox } from "../support/sandbox.js";
import { principal } from "./support/agent.js";
import {
  type ClientCredentialsServers,
  startClientCredentialsServers,
} from "./support/oauth-client-credentials-servers.js";

const SECRET = `cc-modern-${process.pid}-do-not-leak`;
const CREDENTIALS = { WARRANT_TEST_CC_SECRET: SECRET };
const TIMEOUT_MS = 60_000;

let modern: ClientCredentialsServers;
let legacyOnly: ClientCredentialsServers;
const fixture = useSandbox();

beforeAll(async () => {
  const clients = [{ client_id: "warrant", client_secret: SECRET }];
  modern = fixture.add(await startClientCredentialsServers(clients, { modern: true }));
  legacyOnly = fixture.add(await startClientCredentialsServers(clients));
}, TIMEOUT_MS);

interface HostSettings {
  protocol?: Revision;
  issuer?: string;
  /** A required server's failed open fails the start (its error is what the test sees). */
  required?: boolean;
}

async function hostFor(servers: ClientCredentialsServers, settings: HostSettings = {}): Promise<ToolHost> {
  const auth = {
    type: "oauth",
    grant: "client_credentials",
    client_id: "warrant",
    client_secret: "${WARRANT_TEST_CC_SECRET}",
    issuer: settings.issuer ?? servers.issuer,
  };
  const server = { transport: "http", url: servers.mcpUrl, audience: "reports", optional: !settings.required, auth };
  const config = parseConfig(
    JSON.stringify({
      servers: { reports: settings.protocol ? { ...server, protocol: settings.protocol } : server },
      tools: {
        whoami: { server: "reports", risk: "read", timeout_ms: 10_000 },
        add_entry: { server: "reports", risk: "write_irreversible", timeout_ms: 10_000 },
        leak: { server: "reports", risk: "read", timeout_ms: 10_000 },
      },
    }),
  );
  return fixture.add(await connectTools(config, undefined, { oauth: { credentials: CREDENTIALS } }));
}

async function call(host: ToolHost, name: string, args: Record<string, unknown> = {}) {
  const tool = host.catalog().find((entry) => entry.name === name) ?? expect.fail(`${name} not listed`);
  return host.call(tool, args, { timeoutMs: 10_000, principal: await principal("alice"), threadId: "oauth-modern" });
}

describe("a client_credentials server that speaks 2026-07-28", () => {
  it.each([
    ["unpinned", undefined],
    ["pinned", "2026-07-28" as const],
  ])(
    "%s: negotiated 2026-07-28, a read and a write run on the issued token",
    async (_label, protocol) => {
      const issuedBefore = modern.issued.length;
      const seenBefore = modern.seen.length;
      const entriesBefore = modern.entries.length;
      const host = await hostFor(modern, protocol ? { protocol } : {});
      expect(host.revision?.("reports")).toBe("2026-07-28");

      const read = await call(host, "whoami");
      expect(read).toMatchObject({ ok: true, text: "client warrant" });
      const write = await call(host, "add_entry", { text: "quarterly" });
      expect(write.ok).toBe(true);

      // One token for the deployment (the probe got it; the calls reuse it), sent on every request.
      const issued = modern.issued.slice(issuedBefore).map((entry) => entry.token);
      expect(issued).toHaveLength(1);
      expect(modern.seen.slice(seenBefore)).toEqual(issued);
      expect(modern.entries.slice(entriesBefore)).toEqual([{ text: "quarterly", token: issued[0] }]);
      expect(modern.refused).toEqual([]);
    },
    TIMEOUT_MS,
  );
  it(
    "a token the v2 client obtained is redacted from a result like one the v1 client obtained",
    async () => {
      const host = await hostFor(modern);
      expect(host.revision?.("reports")).toBe("2026-07-28");
      const result = await call(host, "leak");
      const text = result.ok ? result.text : expect.fail("leak failed");
      expect(text).toMatch(
        /^your token is \[redacted:oauth_token:\w+\] and your client secret is \[redacted:client_secret:/,
      );
      for (const secret of [SECRET, ...modern.issued.map((entry) => entry.token)]) expect(text).not.toContain(secret);
    },
    TIMEOUT_MS,
  );
});

describe("a refused token on either revision", () => {
  it.each([
    ["2026-07-28", () => modern],
    ["2025-11-25", () => legacyOnly],
  ])(
    "%s: a 401 gets a new token from the authorization server and the call succeeds",
    async (revision, serversOf) => {
      const servers = serversOf();
      const host = await hostFor(servers);
      expect(host.revision?.("reports")).toBe(revision);
      expect((await call(host, "whoami")).ok).toBe(true);
      const issuedBefore = servers.issued.length;
      servers.revokeAll();

      expect(await call(host, "whoami")).toMatchObject({ ok: true, text: "client warrant" });
      const renewed = servers.issued.slice(issuedBefore).map((entry) => entry.token);
      expect(renewed).toHaveLength(1);
      expect(servers.seen.at(-1)).toBe(renewed[0]);
    },
    TIMEOUT_MS,
  );
});

describe("an authorization server that is not the configured issuer", () => {
  it.each([
    ["2026-07-28", () => modern],
    ["2025-11-25", () => legacyOnly],
  ])(
    "%s: no token is asked for, the start fails typed (an optional server stays down)",
    async (_revision, serversOf) => {
      const servers = serversOf();
      const issuedBefore = servers.issued.length;
      // The SDK reads a client stamped with another issuer as absent, and this server offers no registration.
      await expect(hostFor(servers, { issuer: "http://127.0.0.1:9/", required: true })).rejects.toMatchObject({
        code: "mcp_start_failed",
      });
      const host = await hostFor(servers, { issuer: "http://127.0.0.1:9/" });
      expect(host.isHealthy("reports")).toBe(false);
      expect(host.catalog()).toEqual([]);
      expect(servers.issued.length).toBe(issuedBefore);
    },
    TIMEOUT_MS,
  );
});

describe("a v1-only OAuth server", () => {
  it(
    "is spoken to in 2025-11-25 after the probe, with the same token",
    async () => {
      const issuedBefore = legacyOnly.issued.length;
      const host = await hostFor(legacyOnly);
      expect(host.revision?.("reports")).toBe("2025-11-25");
      expect(await call(host, "whoami")).toMatchObject({ ok: true, text: "client warrant" });
      // The discover probe and the 2025-11-25 session share the deployment's provider: one token.
      expect(legacyOnly.issued.slice(issuedBefore)).toHaveLength(1);
    },
    TIMEOUT_MS,
  );
});
