/**
 * Per-user OAuth through the API (issue 25): the test's own authorization
 * server and OAuth-protected MCP server on loopback (support/oauth-servers.ts),
 * Warrant's real server on a fresh database with a planner that calls the
 * protected tool. alice's run pauses with `authorization_required` and the
 * URL; the test follows the URL as a browser would and posts the callback as
 * alice; the run resumes and the call carries alice's token. bob cannot
 * complete alice's authorization, and his own run asks him. After alice's
 * tokens are removed (disconnect), she is asked again. No token text is in
 * any table of the database, the server's log or the state.
 */
import { randomBytes } from "node:crypto";
import { Client } from "@langchain/langgraph-sdk";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { mintApiToken } from "../../src/auth/api-token.js";
import { createOAuthTokenStore } from "../../src/stores/oauth-token-store.js";
import { findPrincipal, loadPrincipalDirectory } from "../../src/auth/principal.js";
import { loadSettings } from "../../src/env.js";
import { authorizationIdOf } from "../../src/oauth/provider.js";
import { HOST_OWNER, type Authorize } from "../../src/oauth/authorization.js";
import { stateKeyFrom } from "../../src/oauth/state.js";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import { openDatabase, type Database } from "../../src/stores/open-database.js";
import type { Planner } from "../../src/planners/planner.js";
import { parseConfig } from "../../src/policy/config.js";
import { startServer, type StartedServer } from "../../src/server/server.js";
import { startOAuthServers, ticketsServer, WHOAMI_CONTRACT, type OAuthServers } from "./support/oauth-servers.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";
import { AuthorizationRequired } from "../../src/errors.js";

let oauth: OAuthServers;
let db: TestDatabase;
let database: Database;
let host: ToolHost;
let server: StartedServer;
let dataDir: string;
const logLines: string[] = [];
const DEADLINE_MS = 8_000;
/** What the planner was shown, turn by turn (what a model would be sent). */
const plannerInputs: string[] = [];
const secretHex = randomBytes(32).toString("hex");
const secret = Uint8Array.from(Buffer.from(secretHex, "hex"));
/** Every access and refresh token the authorization server issued to an owner (checked against every dump). */
const issued = new Set<string>();

async function tokensOf(owner: string) {
  const tokens = (await createOAuthTokenStore(database.pool, database.schema, secret).load(owner, "tickets")).tokens;
  for (const token of [tokens?.access_token, tokens?.refresh_token]) if (token) issued.add(token);
  return tokens;
}

/** Only the deployment's own listing is consented without a user (as an operator would set it up). */
const hostConsents: Authorize = async ({ server: name, owner, url }) => {
  if (owner !== HOST_OWNER) throw new AuthorizationRequired(name, owner, url.href);
  return codeFrom(url.href).then((answer) => answer.code);
};

/** Visits the authorization URL as a signed-in, consenting browser does: the code and state it is sent back with. */
async function codeFrom(url: string): Promise<{ code: string; state: string; location: URL }> {
  const response = await fetch(url, { redirect: "manual" });
  await response.body?.cancel().catch(() => undefined);
  const location = new URL(response.headers.get("location") ?? "", url);
  const code = location.searchParams.get("code");
  if (!code) throw new Error(`no code (HTTP ${response.status})`);
  return { code, state: location.searchParams.get("state") ?? "", location };
}

/** Calls `whoami` (or, asked to file a ticket, `file_ticket`) once, then answers. */
const planner: Planner = {
  kind: "scripted",
  async plan(input) {
    plannerInputs.push(JSON.stringify({ messages: input.messages, tools: input.tools, evidence: input.evidence }));
    const done = input.messages.some((message) => message.getType() === "tool");
    const usage = { input_tokens: 0, output_tokens: 0 };
    if (done) return { outcome: { type: "final", answer: "Checked.", citations: [], abstained: false }, usage };
    const filing = /\bfile\b/.test(input.request);
    const call = {
      call_id: `call_${randomBytes(6).toString("hex")}`,
      name: filing ? "file_ticket" : "whoami",
      raw_arguments: filing ? JSON.stringify({ title: "Projector in room 2 is broken" }) : "{}",
    };
    return { outcome: { type: "tool_calls", calls: [call] }, usage };
  },
};

async function clientOf(user: string): Promise<{ client: Client; token: string }> {
  const settings = loadSettings({ WARRANT_DATA_DIR: dataDir });
  const principal = findPrincipal(await loadPrincipalDirectory(settings.principalsPath), user);
  const token = await mintApiToken(secret, principal);
  return { client: new Client({ apiUrl: server.url, defaultHeaders: { Authorization: `Bearer ${token}` } }), token };
}

const callback = (token: string | undefined, body: unknown) =>
  fetch(`${server.url}/oauth/callback`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });

interface AuthorizationAsk {
  server: string;
  authorization_url: string;
  expires_at: string;
  action_ids: string[];
}

/** Starts a run as `user` and waits for it to pause or end; the pause's authorization asks. */
async function runAs(client: Client, content = "Use the tickets server to check who I am") {
  const thread = await client.threads.create();
  await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ role: "user", content }] } });
  return { thread_id: thread.thread_id, ...(await asksOf(client, thread.thread_id)) };
}

async function asksOf(client: Client, threadId: string) {
  const state = await client.threads.getState(threadId);
  const values = state.values as { status?: string };
  const asks = state.tasks.flatMap((task) =>
    task.interrupts.flatMap((entry) => {
      const value = entry.value as { authorization_required?: AuthorizationAsk[] };
      return value.authorization_required ?? [];
    }),
  );
  return { status: values.status, asks };
}

async function settled(client: Client, threadId: string) {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const runs = await client.runs.list(threadId);
    if (runs.every((run) => run.status !== "pending" && run.status !== "running")) return asksOf(client, threadId);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the resumed run did not finish");
}

const fixture = useSandbox();
beforeAll(async () => {
  oauth = fixture.add(await startOAuthServers());
  db = fixture.add(await createTestDatabase());
  dataDir = await fixture.tempDir("warrant-oauth-flow-");
  database = fixture.add(await openDatabase({ databaseUrl: db.url, dataDir }));
  const config = parseConfig(
    JSON.stringify({
      servers: {
        tickets: ticketsServer(oauth.mcpUrl),
      },
      tools: {
        whoami: WHOAMI_CONTRACT,
        file_ticket: {
          server: "tickets",
          risk: "write_reversible",
          timeout_ms: 10_000,
          max_attempts: 1,
          injected: { idempotency_key: "action.idempotency_key" },
        },
      },
    }),
  );
  host = fixture.add(
    await connectTools(config, undefined, {
      oauth: {
        store: createOAuthTokenStore(database.pool, database.schema, secret),
        stateKey: stateKeyFrom(secret),
        authorize: hostConsents,
      },
    }),
  );
  const settings = loadSettings({
    DATABASE_URL: db.url,
    WARRANT_DATA_DIR: dataDir,
    WARRANT_AUTH_SECRET: secretHex,
    // Short, so that the owner's time at the authorization server would stop the run if it counted.
    WARRANT_DEADLINE_MS: String(DEADLINE_MS),
    PORT: "0",
    HOST: "127.0.0.1",
  });
  server = fixture.add(
    await startServer({
      settings,
      overrides: { planner, tools: host },
      log: (line) => void logLines.push(line),
      heartbeatMs: 100,
    }),
  );
}, 120_000);

describe("per-user OAuth: authorization_required, the callback, the resume", () => {
  let aliceAsk: AuthorizationAsk | undefined;
  let aliceThread = "";

  it("alice's run pauses with authorization_required carrying the URL; nothing was called", async () => {
    const { client } = await clientOf("alice");
    const before = oauth.seen.length;
    const paused = await runAs(client);
    expect(paused.status).toBe("waiting_approval");
    expect(paused.asks).toHaveLength(1);
    aliceAsk = paused.asks[0];
    aliceThread = paused.thread_id;
    expect(aliceAsk).toMatchObject({ server: "tickets" });
    expect(aliceAsk?.action_ids).toHaveLength(1);
    const url = new URL(aliceAsk?.authorization_url ?? "");
    expect(url.searchParams.get("code_challenge")).toBeTruthy();
    expect(url.searchParams.get("state")).toBeTruthy();
    expect(oauth.seen.length).toBe(before);
  });

  it("a resume value that claims the authorization does not: the run asks again", async () => {
    const { client } = await clientOf("alice");
    await client.runs.wait(aliceThread, "agent", { command: { resume: { authorized: ["tickets"] } } });
    const again = await asksOf(client, aliceThread);
    expect(again.asks.map((ask) => ask.server)).toEqual(["tickets"]);
    aliceAsk = again.asks[0];
  });

  it("bob cannot complete alice's authorization (403), bad bodies are typed 422; alice's link still works after the deadline", async () => {
    const { token: bob } = await clientOf("bob");
    const { token: alice, client } = await clientOf("alice");
    const browser = await codeFrom(aliceAsk?.authorization_url ?? "");
    const stolen = await callback(bob, { code: browser.code, state: browser.state });
    expect(stolen.status).toBe(403);
    expect(((await stolen.json()) as { error: string }).error).toBe("authorization_forbidden");
    expect((await callback(undefined, { code: browser.code, state: browser.state })).status).toBe(401);
    for (const body of [
      {},
      { code: "x" },
      { code: "x", state: "y", extra: 1 },
      { code: "\u0000", state: "a.b" },
      "nope",
    ]) {
      const answer = await callback(alice, body);
      expect(answer.status).toBe(422);
      expect(((await answer.json()) as { error: string }).error).toBe("invalid_request");
    }
    const forged = await callback(alice, { code: browser.code, state: `${browser.state.split(".")[0]}.AAAA` });
    expect(((await forged.json()) as { error: string }).error).toBe("invalid_state");

    // The page the authorization server sends the browser back to is served without a token.
    const page = await fetch(`${server.url}/oauth/callback?${browser.location.searchParams}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("/oauth/callback.js");

    // RFC 9207: a response naming another authorization server (a mix-up) is refused before its code is used.
    for (const iss of [
      "https://attacker.example/",
      `${oauth.issuer}x`,
      oauth.issuer.replace("127.0.0.1", "localhost"),
    ]) {
      const mixedUp = await callback(alice, { code: browser.code, state: browser.state, iss });
      expect(mixedUp.status).toBe(400);
      expect(await mixedUp.json()).toMatchObject({
        error: "authorization_failed",
        message: expect.stringContaining("(iss)"),
      });
    }
    expect(await tokensOf("alice")).toBeUndefined();

    // alice takes longer than the run's whole deadline to consent: that wait is not the run's.
    await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS + 500));
    const done = await callback(alice, { code: browser.code, state: browser.state, iss: oauth.issuer });
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({ server: "tickets", thread_id: aliceThread });
    const after = await settled(client, aliceThread);
    expect(after.asks).toEqual([]);
    expect(after.status).toBe("completed");
    const state = await client.threads.getState(aliceThread);
    const ledger = (state.values as { ledger: { tool: string; status: string }[] }).ledger;
    expect(ledger.filter((row) => row.tool === "whoami").map((row) => row.status)).toContain("succeeded");
    // The call carried alice's own token.
    const alicesToken = (await tokensOf("alice"))?.access_token;
    expect(alicesToken).toBeTruthy();
    expect(oauth.seen.at(-1)).toBe(alicesToken);
  });

  it("bob's run asks bob, and his call carries his own token; alice is not asked again while hers holds", async () => {
    const { client: bob, token: bobToken } = await clientOf("bob");
    const paused = await runAs(bob);
    expect(paused.asks.map((ask) => ask.server)).toEqual(["tickets"]);
    const browser = await codeFrom(paused.asks[0]?.authorization_url ?? "");
    expect((await callback(bobToken, { code: browser.code, state: browser.state })).status).toBe(200);
    expect((await settled(bob, paused.thread_id)).status).toBe("completed");
    const bobs = (await tokensOf("bob"))?.access_token;
    const alices = (await tokensOf("alice"))?.access_token;
    expect(oauth.seen.at(-1)).toBe(bobs);
    expect(bobs).not.toBe(alices);

    const { client: alice } = await clientOf("alice");
    const again = await runAs(alice);
    expect(again.asks).toEqual([]);
    expect(again.status).toBe("completed");
    expect(oauth.seen.at(-1)).toBe(alices);
  });

  it("a reviewer's approval of alice's write acts with alice's token, never the reviewer's", async () => {
    const { client: rita, token: ritaToken } = await clientOf("rita");
    const ritaAsk = await runAs(rita);
    const browser = await codeFrom(ritaAsk.asks[0]?.authorization_url ?? "");
    expect((await callback(ritaToken, { code: browser.code, state: browser.state })).status).toBe(200);
    expect((await settled(rita, ritaAsk.thread_id)).status).toBe("completed");
    const ritas = (await tokensOf("rita"))?.access_token;

    const { client: alice } = await clientOf("alice");
    const paused = await runAs(alice, "Please file a ticket about the projector");
    expect(paused.asks).toEqual([]);
    expect(paused.status).toBe("waiting_approval");
    expect(oauth.filed).toHaveLength(0);
    // The reviewer decides from the inbox, with her own token.
    const decided = await fetch(`${server.url}/reviews/${paused.thread_id}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ritaToken}` },
      body: JSON.stringify({ decisions: [{ type: "approve" }] }),
    });
    expect(decided.status).toBeLessThan(300);
    expect((await settled(alice, paused.thread_id)).status).toBe("completed");
    expect(oauth.filed).toHaveLength(1);
    const alices = (await tokensOf("alice"))?.access_token;
    expect(oauth.filed[0]?.token).toBe(alices);
    expect(oauth.filed[0]?.token).not.toBe(ritas);
  });

  it("a token the server revoked: the call ends authorization_required, the token is forgotten, the next run asks", async () => {
    const { client: bob } = await clientOf("bob");
    oauth.revoked.add((await tokensOf("bob"))?.access_token ?? "");
    const failed = await runAs(bob);
    const state = await bob.threads.getState(failed.thread_id);
    const ledger = (state.values as { ledger: { tool: string; status: string; error_code: string | null }[] }).ledger;
    expect(ledger.filter((row) => row.tool === "whoami")).toMatchObject([
      { status: "failed", error_code: "authorization_required" },
    ]);
    expect((await tokensOf("bob"))?.access_token).toBeUndefined();
    const again = await runAs(bob);
    expect(again.asks.map((ask) => ask.server)).toEqual(["tickets"]);
  });

  it("after alice's tokens are removed (disconnect), her next run asks again", async () => {
    const store = createOAuthTokenStore(database.pool, database.schema, secret);
    expect(await store.remove("alice", "tickets")).toBe(true);
    const { client } = await clientOf("alice");
    const paused = await runAs(client);
    expect(paused.asks.map((ask) => ask.server)).toEqual(["tickets"]);
  });

  it("two threads of alice paused on tickets: each link its own state and verifier, both work, one callback resumes both", async () => {
    const { client, token } = await clientOf("alice");
    expect(await tokensOf("alice")).toBeUndefined();
    const first = await runAs(client);
    const second = await runAs(client);
    expect(first.asks.map((ask) => ask.server)).toEqual(["tickets"]);
    expect(second.asks.map((ask) => ask.server)).toEqual(["tickets"]);
    const firstUrl = new URL(first.asks[0]?.authorization_url ?? "");
    const secondUrl = new URL(second.asks[0]?.authorization_url ?? "");
    // Two authorizations in progress: the newer link did not replace the older one.
    expect(firstUrl.searchParams.get("state")).not.toBe(secondUrl.searchParams.get("state"));
    expect(firstUrl.searchParams.get("code_challenge")).not.toBe(secondUrl.searchParams.get("code_challenge"));
    const s = `"${database.schema}"`;
    const verifiers = await database.pool.query(`select 1 from ${s}.oauth_verifiers where owner = 'alice'`);
    expect(verifiers.rowCount).toBeGreaterThanOrEqual(2);

    // The same user id in another tenant is not alice: refused before any exchange, nothing stored.
    const older = await codeFrom(firstUrl.href);
    const elsewhere = await host.completeAuthorization?.(older.state, older.code, {
      user_id: "alice",
      tenant: "other",
    });
    expect(elsewhere).toMatchObject({ ok: false, code: "authorization_forbidden" });
    expect(await tokensOf("alice")).toBeUndefined();

    // The OLDER link, completed after the newer one was issued: connected, and both threads resume.
    const done = await callback(token, { code: older.code, state: older.state });
    expect(done.status).toBe(200);
    const body = (await done.json()) as { thread_id: string; run_id: string | null; resumed: { thread_id: string }[] };
    expect(body.thread_id).toBe(first.thread_id);
    expect(body.run_id).toBeTruthy();
    expect(body.resumed.map((entry) => entry.thread_id)).toContain(second.thread_id);
    for (const threadId of [first.thread_id, second.thread_id]) {
      const after = await settled(client, threadId);
      expect(after.asks).toEqual([]);
      expect(after.status).toBe("completed");
      const state = await client.threads.getState(threadId);
      const ledger = (state.values as { ledger: { tool: string; status: string }[] }).ledger;
      expect(ledger.filter((row) => row.tool === "whoami").map((row) => row.status)).toEqual(["succeeded"]);
    }
    const connected = (await tokensOf("alice"))?.access_token;
    expect(connected).toBeTruthy();

    // The newer link still works too (its own verifier): no authorization_failed because another completed.
    const newer = await codeFrom(secondUrl.href);
    const also = await callback(token, { code: newer.code, state: newer.state });
    expect(also.status).toBe(200);
    expect(((await also.json()) as { thread_id: string }).thread_id).toBe(second.thread_id);
    expect((await tokensOf("alice"))?.access_token).toBeTruthy();
    // Each completed link consumed its own verifier.
    for (const url of [firstUrl, secondUrl]) {
      const id = authorizationIdOf(url.searchParams.get("state") ?? "");
      const row = await database.pool.query(`select 1 from ${s}.oauth_verifiers where authorization_id = $1`, [id]);
      expect(row.rowCount).toBe(0);
    }
  });

  it("no token text in any table, the server's log, the planner's input or a thread's state", async () => {
    for (const token of oauth.seen) issued.add(token);
    const tokens = [...issued].filter((token) => token.length > 8);
    expect(tokens.length).toBeGreaterThanOrEqual(2);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const tables = await client.query<{ schema: string; name: string }>(
        `select table_schema as schema, table_name as name from information_schema.tables
         where table_schema not in ('pg_catalog', 'information_schema')`,
      );
      for (const { schema, name } of tables.rows) {
        const dump = await client.query(`select t::text as row from "${schema}"."${name}" t`);
        const text = dump.rows.map((row: { row: string }) => row.row).join("\n");
        for (const token of tokens) expect(text.includes(token), `${schema}.${name}`).toBe(false);
      }
    } finally {
      await client.end();
    }
    const shown = plannerInputs.join("\n");
    expect(plannerInputs.length).toBeGreaterThan(3);
    for (const token of tokens) expect(shown.includes(token)).toBe(false);
    const log = logLines.join("\n");
    for (const token of tokens) expect(log.includes(token)).toBe(false);
    const { client: alice } = await clientOf("alice");
    const state = JSON.stringify(await alice.threads.getState(aliceThread));
    for (const token of tokens) expect(state.includes(token)).toBe(false);
  });
});
