/**
 * The revocation store on the real server (src/auth/revocations.ts): tokens
 * revoked one after the other are all refused (revoking the second keeps the
 * first), a user's "not before" survives another user's revocation, and only
 * rows older than the longest token lifetime are dropped.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createRevocationStore } from "../../src/stores/revocation-store.js";
import type { Database } from "../../src/stores/open-database.js";
import { openTestDatabase } from "./support/postgres.js";
import { useSandbox } from "../support/sandbox.js";

let database: Database;
const fixture = useSandbox();

beforeAll(async () => {
  database = fixture.add(await openTestDatabase());
}, 60_000);

describe("revocation store", () => {
  it("two tokens revoked one after the other are both refused", async () => {
    const store = createRevocationStore(database.pool, database.schema);
    await store.revokeToken("first-token");
    await store.revokeToken("second-token");
    await store.revokeToken("third-token");
    const { tokens } = await store.load();
    expect([...tokens].sort()).toEqual(["first-token", "second-token", "third-token"]);
  });

  it("two users revoked one after the other are both refused", async () => {
    const store = createRevocationStore(database.pool, database.schema);
    const alice = await store.revokeUser("alice");
    const bob = await store.revokeUser("bob");
    const { notBefore } = await store.load();
    expect(notBefore.get("alice")).toBe(alice);
    expect(notBefore.get("bob")).toBe(bob);
  });

  it("drops only revocations older than the longest token lifetime", async () => {
    const store = createRevocationStore(database.pool, database.schema);
    const s = `"${database.schema}"`;
    await database.pool.query(
      `insert into ${s}.token_revocations (jti, revoked_at) values ('ancient-token', now() - interval '400 days')`,
    );
    await store.revokeToken("fresh-token");
    const rows = await database.pool.query<{ jti: string }>(`select jti from ${s}.token_revocations order by jti`);
    expect(rows.rows.map((row) => row.jti)).not.toContain("ancient-token");
    expect(rows.rows.map((row) => row.jti)).toEqual(expect.arrayContaining(["first-token", "fresh-token"]));
  });
});
