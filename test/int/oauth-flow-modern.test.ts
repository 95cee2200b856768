/**
 * Per-user OAuth on 2026-07-28 (issue 39 item 1): the scenario of oauth-flow.test.ts with a resource server that
 * speaks 2026-07-28 (the v2 SDK's handler). The host negotiates 2026-07-28 with it; alice's call without a token
 * pauses with `authorization_required` and the link; her callback (its RFC 9207 `iss` checked) stores her token;
 * the resumed call runs on 2026-07-28 under her token; bob's call does not use it, and asks bob.
 */
import { describe, expect, it } from "vitest";
import {
  callback,
  clientOf,
  codeFrom,
  host,
  oauth,
  runAs,
  settled,
  tokensOf,
  useOAuthFlow,
} from "./support/oauth-flow.js";

useOAuthFlow({ modern: true });

/**
 * `user`'s call without a token: it pauses for the tickets link and reaches the resource server no more;
 * then the user's browser follows the link. Returns the client, the user's token, the resource server's
 * count of calls before, the paused run and the code and state the browser came back with.
 */
async function pauseForLink(user: string) {
  const { client, token } = await clientOf(user);
  const before = oauth.seen.length;
  const paused = await runAs(client);
  expect(paused.status).toBe("waiting_approval");
  expect(paused.asks.map((ask) => ask.server)).toEqual(["tickets"]);
  expect(oauth.seen.length).toBe(before);
  const browser = await codeFrom(paused.asks[0]?.authorization_url ?? "");
  return { client, token, before, paused, browser };
}

describe("per-user OAuth on 2026-07-28", () => {
  it("alice's call pauses for her link; her callback (iss checked) lets it run on 2026-07-28 with her token", async () => {
    expect(host.revision?.("tickets")).toBe("2026-07-28");
    const { client, token, before, paused, browser } = await pauseForLink("alice");
    const mixedUp = await callback(token, { code: browser.code, state: browser.state, iss: `${oauth.issuer}x` });
    expect(mixedUp.status).toBe(400);
    expect(((await mixedUp.json()) as { error: string }).error).toBe("authorization_failed");
    expect(await tokensOf("alice")).toBeUndefined();

    const done = await callback(token, { code: browser.code, state: browser.state, iss: oauth.issuer });
    expect(done.status).toBe(200);
    const after = await settled(client, paused.thread_id);
    expect(after.status).toBe("completed");
    const alices = (await tokensOf("alice"))?.access_token;
    expect(alices).toBeTruthy();
    expect(oauth.seen.slice(before)).toEqual([alices]);
    expect(oauth.revisions.at(-1)).toBe("2026-07-28");
  });

  it("bob's call does not use alice's token: it asks bob, then runs on 2026-07-28 with his own", async () => {
    const { client, token, before, paused, browser } = await pauseForLink("bob");
    expect((await callback(token, { code: browser.code, state: browser.state, iss: oauth.issuer })).status).toBe(200);
    expect((await settled(client, paused.thread_id)).status).toBe("completed");
    const bobs = (await tokensOf("bob"))?.access_token;
    expect(bobs).toBeTruthy();
    expect(bobs).not.toBe((await tokensOf("alice"))?.access_token);
    expect(oauth.seen.slice(before)).toEqual([bobs]);
    expect(oauth.revisions.at(-1)).toBe("2026-07-28");
  });

  it("a token the server revoked: the 2026-07-28 call fails authorization_required, the token is forgotten", async () => {
    const { client } = await clientOf("bob");
    oauth.revoked.add((await tokensOf("bob"))?.access_token ?? "");
    const failed = await runAs(client);
    const { ledger } = (await client.threads.getState(failed.thread_id)).values as {
      ledger: { tool: string; error_code: string | null }[];
    };
    expect(ledger.filter((row) => row.tool === "whoami").map((row) => row.error_code)).toEqual([
      "authorization_required",
    ]);
    expect(await tokensOf("bob")).toBeUndefined();
    expect((await tokensOf("alice"))?.access_token).toBeTruthy();
    expect((await runAs(client)).asks.map((ask) => ask.server)).toEqual(["tickets"]);
  });
});
