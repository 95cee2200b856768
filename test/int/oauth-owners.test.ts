/**
 * An authorization_code server through the host, per owner (issue 25 item 2,
 * host half): the test's own authorization server and OAuth-protected MCP
 * server on loopback (support/oauth-servers.ts). alice's call carries
 * alice's token; bob is asked separately (his call ends
 * `authorization_required` until he authorizes, and then carries his own
 * token, never alice's); after alice's token is removed (revoked), alice is
 * asked again. The interrupt, callback route and page card are not built yet;
 * the browser step is `authorize`, the way the conformance client plays it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal.js";
import { memoryCredentialStore } from "../../src/oauth/provider.js";
import type { Authorize } from "../../src/oauth/authorization.js";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import { parseConfig } from "../../src/policy/config.js";
import { startOAuthServers, ticketsServer, WHOAMI_CONTRACT, type OAuthServers } from "./support/oauth-servers.js";
import { AuthorizationRequired } from "../../src/errors.js";

let servers: OAuthServers;
let host: ToolHost;
const store = memoryCredentialStore();
const asked: string[] = [];
/** Owners whose browser is signed in at the authorization server and consents. */
const consenting = new Set(["alice"]);

const authorize: Authorize = async ({ server, owner, url }) => {
  asked.push(owner);
  if (!consenting.has(owner)) throw new AuthorizationRequired(server, owner, url.href);
  const response = await fetch(url, { redirect: "manual" });
  await response.body?.cancel().catch(() => undefined);
  const code = new URL(response.headers.get("location") ?? "", url).searchParams.get("code");
  if (!code) throw new Error(`no code (HTTP ${response.status})`);
  return code;
};

const principal = (user_id: string): Principal => ({ user_id, tenant: "t1", scopes: [], courses: [] }) as never;

beforeAll(async () => {
  servers = await startOAuthServers();
  const config = parseConfig(
    JSON.stringify({
      servers: {
        tickets: ticketsServer(servers.mcpUrl),
      },
      tools: { whoami: WHOAMI_CONTRACT },
    }),
  );
  host = await connectTools(config, undefined, { oauth: { store, authorize, catalogOwner: "alice" } });
}, 60_000);

afterAll(async () => {
  await host?.close();
  await servers?.close();
});

async function callAs(user: string) {
  const tool = host.catalog().find((candidate) => candidate.name === "whoami");
  if (!tool) throw new Error("whoami not listed");
  return host.call(tool, {}, { timeoutMs: 10_000, principal: principal(user), threadId: `thread-${user}` });
}

describe("authorization_code server, per owner", () => {
  it("alice's call carries alice's token", async () => {
    expect(await callAs("alice")).toMatchObject({ ok: true });
    const alice = (await store.load("alice", "tickets")).tokens?.access_token;
    expect(alice).toBeTruthy();
    expect(servers.seen.at(-1)).toBe(alice);
  });

  it("bob is asked separately: authorization_required, then his own token", async () => {
    const before = servers.seen.length;
    expect(await callAs("bob")).toMatchObject({ ok: false, code: "authorization_required" });
    expect(asked).toContain("bob");
    expect(servers.seen.length).toBe(before);
    consenting.add("bob");
    expect(await callAs("bob")).toMatchObject({ ok: true });
    const bob = (await store.load("bob", "tickets")).tokens?.access_token;
    const alice = (await store.load("alice", "tickets")).tokens?.access_token;
    expect(servers.seen.at(-1)).toBe(bob);
    expect(bob).not.toBe(alice);
  });

  it("a revoked token asks again", async () => {
    await store.remove("alice", "tickets");
    const askedBefore = asked.filter((owner) => owner === "alice").length;
    consenting.delete("alice");
    expect(await callAs("alice")).toMatchObject({ ok: false, code: "authorization_required" });
    expect(asked.filter((owner) => owner === "alice").length).toBe(askedBefore + 1);
  });
});
