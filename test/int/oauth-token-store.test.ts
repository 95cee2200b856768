/**
 * OAuth credentials in Postgres, encrypted at rest (src/stores/oauth-token-store.ts):
 * a stored token reads back for its owner and server only; the table holds
 * no token text (a dump of every column finds neither the access nor the
 * refresh token); a row moved to another owner, a tampered row or another
 * deployment's key does not open; remove() is a revocation.
 */
import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createOAuthTokenStore } from "../../src/stores/oauth-token-store.js";
import type { Database } from "../../src/stores/open-database.js";
import { openTestDatabase } from "./support/postgres.js";
import { useSandbox } from "../support/sandbox.js";

let database: Database;
const fixture = useSandbox();
const secret = new Uint8Array(randomBytes(32));
const ACCESS = `at-${randomBytes(12).toString("hex")}`;
const REFRESH = `rt-${randomBytes(12).toString("hex")}`;

beforeAll(async () => {
  database = fixture.add(await openTestDatabase());
}, 60_000);

async function dump(): Promise<string> {
  const s = `"${database.schema}"`;
  const credentials = await database.pool.query(`select * from ${s}.oauth_credentials`);
  const clients = await database.pool.query(`select * from ${s}.oauth_clients`);
  const verifiers = await database.pool.query(`select * from ${s}.oauth_verifiers`);
  return JSON.stringify([credentials.rows, clients.rows, verifiers.rows], (_key, value: unknown) =>
    Buffer.isBuffer(value) ? value.toString("latin1") : value,
  );
}

describe("OAuth token store", () => {
  it("keeps tokens per owner and server, sealed: no token text in any column", async () => {
    const store = createOAuthTokenStore(database.pool, database.schema, secret);
    const tokens = { access_token: ACCESS, token_type: "Bearer", refresh_token: REFRESH };
    await store.save("alice", "tickets", { tokens });
    await store.saveVerifier("alice", "tickets", "authorization-1", "v".repeat(43));
    await store.saveClient("tickets", { client_id: "warrant", client_secret: `cs-${REFRESH}` });
    expect((await store.load("alice", "tickets")).tokens).toEqual(tokens);
    expect(await store.load("bob", "tickets")).toEqual({});
    expect(await store.load("alice", "other")).toEqual({});
    expect(await store.loadClient("tickets")).toMatchObject({ client_id: "warrant" });
    const text = await dump();
    expect(text).not.toContain(ACCESS);
    expect(text).not.toContain(REFRESH);
    expect(text).not.toContain("v".repeat(43));
  });

  it("a row moved to another owner, a tampered row and another deployment's key do not open", async () => {
    const store = createOAuthTokenStore(database.pool, database.schema, secret);
    await store.save("alice", "tickets", { tokens: { access_token: ACCESS, token_type: "Bearer" } });
    const s = `"${database.schema}"`;
    await database.pool.query(
      `insert into ${s}.oauth_credentials (owner, server, sealed)
       select 'mallory', server, sealed from ${s}.oauth_credentials where owner = 'alice' and server = 'tickets'`,
    );
    await expect(store.load("mallory", "tickets")).rejects.toThrow();
    const other = createOAuthTokenStore(database.pool, database.schema, new Uint8Array(randomBytes(32)));
    await expect(other.load("alice", "tickets")).rejects.toThrow();
    await database.pool.query(
      `update ${s}.oauth_credentials ` +
        "set sealed = set_byte(sealed, length(sealed) - 1, (get_byte(sealed, length(sealed) - 1) + 1) % 256) " +
        "where owner = 'alice'",
    );
    await expect(store.load("alice", "tickets")).rejects.toThrow();
  });

  it("a row copied to another server of the same owner does not open", async () => {
    const store = createOAuthTokenStore(database.pool, database.schema, secret);
    await store.save("dora", "tickets", { tokens: { access_token: ACCESS, token_type: "Bearer" } });
    const s = `"${database.schema}"`;
    const copied = await database.pool.query(
      `insert into ${s}.oauth_credentials (owner, server, sealed)
       select owner, 'calendar', sealed from ${s}.oauth_credentials where owner = 'dora' and server = 'tickets'`,
    );
    expect(copied.rowCount).toBe(1);
    await expect(store.load("dora", "calendar")).rejects.toThrow();
    expect((await store.load("dora", "tickets")).tokens?.access_token).toBe(ACCESS);
  });

  it("keeps one verifier per authorization: several in progress, each its own, bound to owner, server and authorization", async () => {
    const store = createOAuthTokenStore(database.pool, database.schema, secret);
    await store.saveVerifier("erin", "tickets", "first", "a".repeat(43));
    await store.saveVerifier("erin", "tickets", "second", "b".repeat(43));
    expect(await store.loadVerifier("erin", "tickets", "first")).toBe("a".repeat(43));
    expect(await store.loadVerifier("erin", "tickets", "second")).toBe("b".repeat(43));
    expect(await store.loadVerifier("erin", "calendar", "first")).toBeUndefined();
    expect(await store.loadVerifier("frank", "tickets", "first")).toBeUndefined();
    // Tokens saved (one link completed) leave the other link's verifier in place.
    await store.save("erin", "tickets", { tokens: { access_token: ACCESS, token_type: "Bearer" } });
    await store.removeVerifier("erin", "tickets", "first");
    expect(await store.loadVerifier("erin", "tickets", "first")).toBeUndefined();
    expect(await store.loadVerifier("erin", "tickets", "second")).toBe("b".repeat(43));
    // A verifier row moved to another authorization, owner or server does not open.
    const s = `"${database.schema}"`;
    await database.pool.query(
      `insert into ${s}.oauth_verifiers (owner, server, authorization_id, sealed)
       select owner, server, 'moved', sealed from ${s}.oauth_verifiers where owner = 'erin' and authorization_id = 'second'`,
    );
    await expect(store.loadVerifier("erin", "tickets", "moved")).rejects.toThrow();
    // Older than a link lives: not read, and dropped at the next save.
    await database.pool.query(
      `update ${s}.oauth_verifiers set created_at = now() - interval '1 hour' where authorization_id = 'second'`,
    );
    expect(await store.loadVerifier("erin", "tickets", "second")).toBeUndefined();
    await store.saveVerifier("erin", "tickets", "third", "c".repeat(43));
    const left = await database.pool.query(`select authorization_id from ${s}.oauth_verifiers where owner = 'erin'`);
    expect(left.rows.map((row: { authorization_id: string }) => row.authorization_id).sort()).toEqual([
      "moved",
      "third",
    ]);
  });

  it("remove() revokes: the owner has no token afterwards", async () => {
    const store = createOAuthTokenStore(database.pool, database.schema, secret);
    await store.save("carol", "tickets", { tokens: { access_token: ACCESS, token_type: "Bearer" } });
    await store.remove("carol", "tickets");
    expect(await store.load("carol", "tickets")).toEqual({});
  });
});
