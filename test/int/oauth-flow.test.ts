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
import pg from "pg";
import { describe, expect, it } from "vitest";
import { createOAuthTokenStore } from "../../src/stores/oauth-token-store.js";
import { authorizationIdOf } from "../../src/oauth/provider.js";
import {
  oauth,
  db,
  database,
  host,
  server,
  DEADLINE_MS,
  plannerInputs,
  logLines,
  secret,
  issued,
  tokensOf,
  codeFrom,
  clientOf,
  callback,
  runAs,
  asksOf,
  settled,
  useOAuthFlow,
  type AuthorizationAsk,
} from "./support/oauth-flow.js";

useOAuthFlow();

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
