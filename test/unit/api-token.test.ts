import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { SignJWT } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import {
  authenticate,
  authenticateRequest,
  loadApiSecret,
  mintApiToken,
  verifyApiToken,
  MAX_API_TOKEN_TTL_SECONDS,
} from "../../src/auth/api-token.js";
import type { Principal } from "../../src/auth/principal.js";

const secret = new Uint8Array(randomBytes(32));
const alice: Principal = {
  user_id: "alice",
  tenant: "uni",
  role: "student",
  scopes: ["notes:read"],
  grants: { courses: ["cs301"] },
};
const claims = { tenant: "uni", role: "student", scopes: ["notes:read"], grants: { courses: ["cs301"] } };

async function signed(
  overrides: {
    payload?: Record<string, unknown>;
    issuer?: string;
    audience?: string;
    ttl?: number;
    iat?: number;
    alg?: string;
    key?: Uint8Array;
  } = {},
) {
  const iat = overrides.iat ?? Math.floor(Date.now() / 1000);
  return new SignJWT({ ...claims, ...overrides.payload })
    .setProtectedHeader({ alg: overrides.alg ?? "HS256" })
    .setIssuer(overrides.issuer ?? "warrant-api")
    .setAudience(overrides.audience ?? "warrant-api")
    .setSubject("alice")
    .setIssuedAt(iat)
    .setExpirationTime(iat + (overrides.ttl ?? 600))
    .setJti("t1")
    .sign(overrides.key ?? secret);
}

describe("API tokens", () => {
  it("round-trips the principal", async () => {
    const token = await mintApiToken(secret, { ...alice, display_name: "Alice" });
    expect(await verifyApiToken(secret, token)).toEqual({
      ok: true,
      principal: { ...alice, display_name: "Alice" },
      token: { jti: expect.stringMatching(/^[0-9a-f-]{36}$/), issued_at: expect.any(Number) },
    });
  });

  it("refuses every bad token with a typed code, signature before claims", async () => {
    const good = await mintApiToken(secret, alice);
    const [header, payload] = good.split(".");
    const cases: [unknown, string][] = [
      [undefined, "token_missing"],
      ["", "token_missing"],
      [42, "token_malformed"],
      ["a.b", "token_malformed"],
      ["x".repeat(9000), "token_malformed"],
      [`${header}.${payload}.`, "token_malformed"],
      [`${header}.${payload}.AAAA`, "token_invalid"],
      [await mintApiToken(new Uint8Array(32).fill(1), alice), "token_invalid"],
      [await signed({ alg: "HS512", key: new Uint8Array(64).fill(2) }), "token_invalid"],
      [await signed({ issuer: "other" }), "token_malformed"],
      [await signed({ audience: "caseops" }), "token_malformed"],
      [await signed({ payload: { extra: true } }), "token_malformed"],
      [await signed({ payload: { scopes: "notes:read" } }), "token_malformed"],
      [await signed({ payload: { tenant: "UNI; drop" } }), "token_malformed"],
      [await signed({ ttl: MAX_API_TOKEN_TTL_SECONDS + 10 }), "token_malformed"],
      [await signed({ iat: Math.floor(Date.now() / 1000) + 3600 }), "token_malformed"],
      [await signed({ iat: Math.floor(Date.now() / 1000) - 7200, ttl: 60 }), "token_expired"],
    ];
    for (const [token, code] of cases) {
      const result = await verifyApiToken(secret, token);
      expect({ token: String(token).slice(0, 40), code: result.ok ? "ok" : result.code }).toEqual({
        token: String(token).slice(0, 40),
        code,
      });
    }
  });

  it("a token verified once is checked again for its lifetime, and only against the secret that signed it", async () => {
    const issued = Date.now();
    const token = await mintApiToken(secret, alice, { ttlSeconds: 60, now: issued });
    expect((await verifyApiToken(secret, token, issued)).ok).toBe(true);
    expect((await verifyApiToken(secret, token, issued + 1_000)).ok).toBe(true);
    const late = await verifyApiToken(secret, token, issued + 3_600_000);
    expect(late.ok ? "ok" : late.code).toBe("token_expired");
    const early = await verifyApiToken(secret, token, issued - 3_600_000);
    expect(early.ok ? "ok" : early.code).toBe("token_malformed");
    const other = await verifyApiToken(new Uint8Array(secret), token, issued);
    expect(other.ok).toBe(true);
    const foreign = await verifyApiToken(new Uint8Array(32).fill(7), token, issued);
    expect(foreign.ok ? "ok" : foreign.code).toBe("token_invalid");
  });

  it("reads only 'Bearer <token>' from the Authorization header", async () => {
    const token = await mintApiToken(secret, alice);
    expect((await authenticate(secret, `Bearer ${token}`)).ok).toBe(true);
    expect((await authenticate(secret, `bearer ${token}`)).ok).toBe(true);
    for (const [header, code] of [
      [undefined, "token_missing"],
      [`Basic ${token}`, "token_malformed"],
      [`Bearer ${token} extra`, "token_malformed"],
      [`Bearer`, "token_malformed"],
    ] as const) {
      const result = await authenticate(secret, header);
      expect(result.ok ? "ok" : result.code).toBe(code);
    }
  });

  it("reads X-Api-Key exactly like a bearer token; two different tokens in one request are refused", async () => {
    const token = await mintApiToken(secret, alice);
    const other = await mintApiToken(secret, { ...alice, user_id: "bob" });
    const viaKey = await authenticateRequest(secret, { authorization: undefined, apiKey: token });
    expect(viaKey).toEqual(await authenticate(secret, `Bearer ${token}`));
    expect(viaKey.ok && viaKey.principal.user_id).toBe("alice");
    for (const bad of [
      "not-a-jwt",
      `${token}x`,
      await signed({ ttl: -10 }),
      await signed({ key: new Uint8Array(randomBytes(32)) }),
    ]) {
      const byKey = await authenticateRequest(secret, { authorization: undefined, apiKey: bad });
      const byBearer = await authenticate(secret, `Bearer ${bad}`);
      expect(byKey.ok).toBe(false);
      expect(!byKey.ok && byKey.code).toBe(!byBearer.ok && byBearer.code);
    }
    expect(await authenticateRequest(secret, { authorization: undefined, apiKey: "" })).toMatchObject({
      ok: false,
      code: "token_missing",
    });
    expect(await authenticateRequest(secret, { authorization: `Bearer ${token}`, apiKey: token })).toMatchObject({
      ok: true,
    });
    expect(await authenticateRequest(secret, { authorization: `Bearer ${other}`, apiKey: token })).toMatchObject({
      ok: false,
      code: "token_invalid",
    });
    expect(await authenticateRequest(secret, { authorization: "Basic eA==", apiKey: token })).toMatchObject({
      ok: false,
      code: "token_malformed",
    });
  });

  it("refuses to mint with a short secret or an out-of-range lifetime", async () => {
    await expect(mintApiToken(new Uint8Array(16), alice)).rejects.toThrow(RangeError);
    await expect(mintApiToken(secret, alice, { ttlSeconds: 0 })).rejects.toThrow(RangeError);
    await expect(mintApiToken(secret, alice, { ttlSeconds: MAX_API_TOKEN_TTL_SECONDS + 1 })).rejects.toThrow(
      RangeError,
    );
  });
});

describe("the API secret", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await fs.rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("is generated once into the data dir with mode 0600 and reused", async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "warrant-secret-"));
    const dataDir = path.join(dir, "data");
    const first = await loadApiSecret({ configured: undefined, dataDir });
    const stat = await fs.stat(path.join(dataDir, "auth-secret"));
    expect(stat.mode & 0o777).toBe(0o600);
    expect(first.byteLength).toBe(32);
    expect(Buffer.from(await loadApiSecret({ configured: undefined, dataDir })).equals(Buffer.from(first))).toBe(true);
  });

  it("uses WARRANT_AUTH_SECRET when set and rejects a weak or undecodable one", async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "warrant-secret-"));
    const hex = "cd".repeat(32);
    expect(Buffer.from(await loadApiSecret({ configured: hex, dataDir: dir })).toString("hex")).toBe(hex);
    await expect(loadApiSecret({ configured: "abcd", dataDir: dir })).rejects.toMatchObject({ code: "config_invalid" });
    await expect(loadApiSecret({ configured: "not a secret!", dataDir: dir })).rejects.toMatchObject({
      code: "config_invalid",
    });
    // Nothing was generated when a secret was configured.
    await expect(fs.stat(path.join(dir, "auth-secret"))).rejects.toThrow();
  });

  it("refuses a corrupt secret file rather than replacing it", async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "warrant-secret-"));
    await fs.writeFile(path.join(dir, "auth-secret"), "short\n", { mode: 0o600 });
    await expect(loadApiSecret({ configured: undefined, dataDir: dir })).rejects.toMatchObject({
      code: "config_invalid",
    });
  });
});
