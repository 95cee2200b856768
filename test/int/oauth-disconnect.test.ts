/**
 * `npm run tools -- disconnect SERVER --user ID` (issue 25 item 2): with a
 * real Postgres database and the test's own authorization server and
 * OAuth-protected MCP server on loopback (support/oauth-servers.ts), alice
 * authorizes and her sealed token is stored; disconnect removes alice's row
 * only (bob keeps his), and alice's next call is asked again
 * (`authorization_required`). Typed refusals: an unknown server, a server
 * without per-user OAuth, nothing stored, and usage errors (exit 2).
 */
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { loadApiSecret } from "../../src/auth/api-token.js";
import { createOAuthTokenStore } from "../../src/stores/oauth-token-store.js";
import type { Principal } from "../../src/auth/principal.js";
import { REPO_ROOT } from "../../src/env.js";
import type { Authorize } from "../../src/oauth/authorization.js";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import { openDatabase, type Database } from "../../src/stores/open-database.js";
import { parseConfig } from "../../src/policy/config.js";
import { startOAuthServers, ticketsServer, WHOAMI_CONTRACT, type OAuthServers } from "./support/oauth-servers.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";
import { AuthorizationRequired } from "../../src/errors.js";

const run = promisify(execFile);
let servers: OAuthServers;
let test: TestDatabase;
let database: Database;
let host: ToolHost;
let dir: string;
let configPath: string;
let store: ReturnType<typeof createOAuthTokenStore>;
const consenting = new Set(["ops", "alice", "bob"]);
const asked: string[] = [];

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

const fixture = useSandbox();
beforeAll(async () => {
  servers = fixture.add(await startOAuthServers());
  test = fixture.add(await createTestDatabase());
  dir = await fixture.tempDir("warrant-disconnect-");
  database = fixture.add(await openDatabase({ databaseUrl: test.url, dataDir: dir }));
  const text = JSON.stringify({
    servers: {
      tickets: ticketsServer(servers.mcpUrl),
      plain: { transport: "http", url: "http://127.0.0.1:9/mcp", audience: "plain", optional: true },
    },
    tools: { whoami: WHOAMI_CONTRACT },
  });
  configPath = path.join(dir, "warrant.config.json");
  await writeFile(configPath, text);
  // The deployment secret the CLI derives the same key from (<dataDir>/auth-secret).
  const secret = await loadApiSecret({ configured: undefined, dataDir: dir });
  store = createOAuthTokenStore(database.pool, database.schema, secret);
  const only = parseConfig(text);
  only.servers = { tickets: only.servers["tickets"] as never };
  host = fixture.add(await connectTools(only, undefined, { oauth: { store, authorize, catalogOwner: "ops" } }));
}, 60_000);

async function callAs(user: string) {
  const tool = host.catalog().find((candidate) => candidate.name === "whoami");
  if (!tool) throw new Error("whoami not listed");
  return host.call(tool, {}, { timeoutMs: 10_000, principal: principal(user), threadId: `thread-${user}` });
}

const owners = async () =>
  (
    await database.pool.query<{ owner: string }>(
      `select owner from "${database.schema}".oauth_credentials where server = 'tickets' order by owner`,
    )
  ).rows.map((row) => row.owner);

const cli = (...args: string[]) =>
  run(process.execPath, ["--import", "tsx", "src/cli/tools.ts", ...args], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      DATABASE_URL: test.url,
      WARRANT_DATA_DIR: dir,
      WARRANT_CONFIG: configPath,
      WARRANT_AUTH_SECRET: "",
    },
    timeout: 60_000,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: unknown; stdout?: string; stderr?: string }) => ({
      code: typeof error.code === "number" ? error.code : -1,
      stdout: error.stdout ?? "",
      stderr: error.stderr ?? "",
    }),
  );

describe("tools disconnect", () => {
  it("removes that owner's stored token for that server only; the owner's next call asks again", async () => {
    expect(await callAs("alice")).toMatchObject({ ok: true });
    expect(await callAs("bob")).toMatchObject({ ok: true });
    expect(await owners()).toEqual(["alice", "bob", "ops"]);

    const done = await cli("disconnect", "tickets", "--user", "alice");
    expect(done.code).toBe(0);
    expect(done.stdout).toContain("tickets: disconnected alice");
    expect(await owners()).toEqual(["bob", "ops"]);

    const again = await cli("disconnect", "tickets", "--user", "alice");
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^warrant: not_connected: /m);

    consenting.delete("alice");
    const before = asked.filter((owner) => owner === "alice").length;
    expect(await callAs("alice")).toMatchObject({ ok: false, code: "authorization_required" });
    expect(asked.filter((owner) => owner === "alice").length).toBeGreaterThan(before);
    expect((await store.load("alice", "tickets")).tokens).toBeUndefined();
    expect(await callAs("bob")).toMatchObject({ ok: true });

    // The authorization alice was asked for is in progress (its PKCE verifier is kept); disconnect forgets it too.
    expect(await owners()).toEqual(["alice", "bob", "ops"]);
    expect((await cli("disconnect", "tickets", "--user", "alice")).code).toBe(0);
    expect(await owners()).toEqual(["bob", "ops"]);
  }, 120_000);

  it("refuses an unknown server and a server that keeps no per-user tokens, with typed codes", async () => {
    const unknown = await cli("disconnect", "nosuch", "--user", "bob");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^warrant: unknown_server: /m);
    const plain = await cli("disconnect", "plain", "--user", "bob");
    expect(plain.code).toBe(1);
    expect(plain.stderr).toMatch(/^warrant: not_oauth: /m);
    expect(await owners()).toEqual(["bob", "ops"]);
  }, 120_000);

  it("usage errors (exit 2): missing or malformed server or user, extra arguments, --user elsewhere", async () => {
    const cases = [
      ["disconnect"],
      ["disconnect", "tickets"],
      ["disconnect", "--user", "bob"],
      ["disconnect", "tickets", "--user"],
      ["disconnect", "tickets", "--user", "Bob!"],
      ["disconnect", "tickets", "--user", `b\u0007ob`],
      ["disconnect", "tickets", "--user", "b".repeat(65)],
      ["disconnect", "tick/ets", "--user", "bob"],
      ["disconnect", "tickets", "extra", "--user", "bob"],
      ["disconnect", "tickets", "--user", "bob", "--json"],
      ["list", "--user", "bob"],
    ];
    for (const args of cases) {
      const result = await cli(...args);
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toMatch(/^warrant: usage: /m);
    }
    expect(await owners()).toEqual(["bob", "ops"]);
  }, 300_000);
});
