/**
 * The pieces of revocation without a server: the authoritative principal
 * directory, the cached revocation list, the request gate that combines them,
 * and which HOST values count as loopback for the dev sign-in.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { principalDirectory, verifiedOnly } from "../../src/auth/principal-directory.js";
import type { Principal } from "../../src/auth/principal.js";
import { requestGate } from "../../src/auth/request-gate.js";
import { RevocationList, type Revocations } from "../../src/auth/revocations.js";
import { createRuntime } from "../../src/bootstrap.js";
import { loadSettings } from "../../src/env.js";
import { devLoginEnabled, isLoopbackHost } from "../../src/server/web.js";

const alice: Principal = {
  user_id: "alice",
  tenant: "uni",
  role: "student",
  scopes: ["calendar:write"],
  grants: {},
};
let dir: string | undefined;
afterEach(async () => {
  if (dir) await fs.rm(dir, { recursive: true, force: true });
  dir = undefined;
});

async function directoryFile(principals: Principal[]): Promise<string> {
  dir ??= await fs.mkdtemp(path.join(os.tmpdir(), "warrant-revocation-"));
  const file = path.join(dir, "principals.json");
  await fs.writeFile(file, JSON.stringify({ principals }));
  return file;
}

function fakeStore(initial: Revocations) {
  const store = { revocations: initial, loads: 0 };
  return {
    store,
    load: async () => {
      store.loads += 1;
      return store.revocations;
    },
  };
}

describe("the principal directory is authoritative", () => {
  it("answers the listed entry, and principal_revoked for an unlisted user or another tenant", async () => {
    const file = await directoryFile([{ ...alice, scopes: ["calendar:read"] }]);
    const directory = principalDirectory(file);
    // The directory's permissions, not the token's.
    expect((await directory.current(alice)).scopes).toEqual(["calendar:read"]);
    await expect(directory.current({ ...alice, user_id: "mallory" })).rejects.toMatchObject({
      code: "principal_revoked",
    });
    await expect(directory.current({ ...alice, tenant: "acme" })).rejects.toMatchObject({ code: "principal_revoked" });
    await directoryFile([{ ...alice, user_id: "bob" }]);
    await expect(directory.current(alice)).rejects.toMatchObject({ code: "principal_revoked" });
    // Without a directory the verified claims stand.
    expect(await verifiedOnly.current({ ...alice, user_id: "mallory" })).toMatchObject({ user_id: "mallory" });
  });

  it("is what runs are checked against unless WARRANT_VERIFIED_CLAIMS_ONLY=1", async () => {
    const file = await directoryFile([alice]);
    const listed = createRuntime(loadSettings({ WARRANT_PRINCIPALS: file }));
    await expect(listed.host.currentPrincipal({ ...alice, user_id: "mallory" })).rejects.toMatchObject({
      code: "principal_revoked",
    });
    const claims = createRuntime(loadSettings({ WARRANT_PRINCIPALS: file, WARRANT_VERIFIED_CLAIMS_ONLY: "1" }));
    expect(claims.principals).toBe(verifiedOnly);
    expect(await claims.host.currentPrincipal({ ...alice, user_id: "mallory" })).toMatchObject({ user_id: "mallory" });
    await Promise.all([listed.close(), claims.close()]);
  });
});

describe("the revocation list", () => {
  it("refuses a revoked jti and tokens issued before a user's not-before; reads again once older than refreshMs", async () => {
    let now = 1_000_000;
    const { store, load } = fakeStore({ tokens: new Set(["t-1"]), notBefore: new Map([["bob", 500]]) });
    const list = new RevocationList({ load }, { refreshMs: 1_000, now: () => now });
    expect(await list.refusal({ user_id: "alice", jti: "t-1", issued_at: 900 })).toMatch(/revoked/);
    expect(await list.refusal({ user_id: "alice", jti: "t-2", issued_at: 900 })).toBeUndefined();
    expect(await list.refusal({ user_id: "bob", jti: "t-3", issued_at: 499 })).toMatch(/revoked/);
    expect(await list.refusal({ user_id: "bob", jti: "t-4", issued_at: 500 })).toBeUndefined();
    expect(store.loads).toBe(1);

    store.revocations = { tokens: new Set(["t-1", "t-2"]), notBefore: new Map() };
    now += 999;
    expect(await list.refusal({ user_id: "alice", jti: "t-2", issued_at: 900 })).toBeUndefined();
    now += 1;
    expect(await list.refusal({ user_id: "alice", jti: "t-2", issued_at: 900 })).toMatch(/revoked/);
    expect(store.loads).toBe(2);
  });

  it("concurrent stale checks share one read, and a failed read fails the check (never admits on a stale list)", async () => {
    let now = 0;
    let fail = false;
    let loads = 0;
    const list = new RevocationList(
      {
        load: async () => {
          loads += 1;
          if (fail) throw new Error("connection refused");
          return { tokens: new Set<string>(), notBefore: new Map() };
        },
      },
      { refreshMs: 1_000, now: () => now },
    );
    const token = { user_id: "alice", jti: "t", issued_at: 0 };
    await Promise.all([list.refusal(token), list.refusal(token), list.refusal(token)]);
    expect(loads).toBe(1);
    fail = true;
    now = 5_000;
    await expect(list.refusal(token)).rejects.toThrow("connection refused");
  });
});

describe("the request gate", () => {
  it("token_revoked before the directory; principal_revoked for an unlisted user; else the directory's principal", async () => {
    const file = await directoryFile([{ ...alice, display_name: "Alice A." }]);
    const revocations = new RevocationList({
      load: async () => ({ tokens: new Set(["gone"]), notBefore: new Map() }),
    });
    const gate = requestGate({ revocations, directory: principalDirectory(file) });
    expect(await gate.admit({ principal: alice, token: { jti: "gone", issued_at: 1 } })).toMatchObject({
      ok: false,
      code: "token_revoked",
    });
    expect(
      await gate.admit({ principal: { ...alice, user_id: "bob" }, token: { jti: "ok", issued_at: 1 } }),
    ).toMatchObject({ ok: false, code: "principal_revoked" });
    expect(await gate.admit({ principal: alice, token: { jti: "ok", issued_at: 1 } })).toMatchObject({
      ok: true,
      principal: { user_id: "alice", display_name: "Alice A." },
    });
  });
});

describe("dev sign-in", () => {
  it("loopback hosts only, unless WARRANT_DEV_LOGIN says otherwise", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]", "0:0:0:0:0:0:0:1"])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ["0.0.0.0", "::", "192.168.1.10", "example.com", "127.0.0.1.example.com", "::ffff:10.0.0.1"])
      expect(isLoopbackHost(host), host).toBe(false);
    expect(devLoginEnabled(loadSettings({}))).toBe(true);
    expect(devLoginEnabled(loadSettings({ HOST: "0.0.0.0" }))).toBe(false);
    expect(devLoginEnabled(loadSettings({ HOST: "0.0.0.0", WARRANT_DEV_LOGIN: "1" }))).toBe(true);
    expect(devLoginEnabled(loadSettings({ WARRANT_DEV_LOGIN: "0" }))).toBe(false);
    expect(devLoginEnabled(loadSettings({ WARRANT_PRINCIPALS: "/etc/warrant/principals.json" }))).toBe(false);
  });
});
