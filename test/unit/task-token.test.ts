/**
 * Task tokens: minting, every refusal code, and secret loading. No I/O.
 */
import { SignJWT, UnsecuredJWT } from "jose";
import { describe, expect, it } from "vitest";
import {
  CLOCK_SKEW_SECONDS,
  DEFAULT_TTL_SECONDS,
  MAX_TOKEN_LENGTH,
  MAX_TTL_SECONDS,
  loadTaskTokenSecret,
  mintTaskToken,
  verifyTaskToken,
} from "../../src/auth/task-token.js";
import { isConfigError } from "../../src/errors.js";

const SECRET = new Uint8Array(32).map((_, position) => position + 1);
const OTHER_SECRET = new Uint8Array(32).fill(7);
const NOW = Date.UTC(2026, 2, 14, 9, 0, 0);
const NOW_SECONDS = NOW / 1000;
const CLAIMS = {
  audience: "caseops",
  tenant: "acme",
  task: "thread-42",
  subject: "alice",
  scopes: ["cases:read", "documents:resolve"],
};
const EXPECTED = { audience: "caseops", now: NOW };

/** Replaces one base64url segment of a compact JWS. */
function replaceSegment(token: string, position: 0 | 1 | 2, value: string): string {
  const parts = token.split(".");
  parts[position] = value;
  return parts.join(".");
}

function encodeJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

function decodePayload(token: string): Record<string, unknown> {
  const segment = token.split(".")[1] ?? "";
  return JSON.parse(Buffer.from(segment, "base64url").toString("utf8")) as Record<string, unknown>;
}

/** A payload shaped exactly like ours, for hand-signed variants. */
function ourPayload(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    iss: "warrant-host",
    aud: "caseops",
    sub: "alice",
    tenant: "acme",
    task: "thread-42",
    scope: "cases:read",
    iat: NOW_SECONDS,
    exp: NOW_SECONDS + 60,
    jti: "c0ffee",
    ...overrides,
  };
}

describe("mintTaskToken / verifyTaskToken", () => {
  it("round-trips every claim", async () => {
    const token = await mintTaskToken(SECRET, CLAIMS, { now: NOW });
    const result = await verifyTaskToken(SECRET, token, EXPECTED);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.claims).toMatchObject({
      audience: "caseops",
      tenant: "acme",
      task: "thread-42",
      subject: "alice",
      scopes: ["cases:read", "documents:resolve"],
      issuedAt: NOW_SECONDS,
      expiresAt: NOW_SECONDS + DEFAULT_TTL_SECONDS,
    });
    expect(result.claims.tokenId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("writes the registered claims, a space-separated scope and an HS256 header", async () => {
    const token = await mintTaskToken(SECRET, CLAIMS, { now: NOW, ttlSeconds: 300 });
    const header = JSON.parse(Buffer.from(token.split(".")[0] ?? "", "base64url").toString("utf8")) as unknown;
    expect(header).toEqual({ alg: "HS256", typ: "JWT" });
    const payload = decodePayload(token);
    expect(Object.keys(payload).sort()).toEqual(["aud", "exp", "iat", "iss", "jti", "scope", "sub", "task", "tenant"]);
    expect(payload).toMatchObject({
      iss: "warrant-host",
      aud: "caseops",
      sub: "alice",
      scope: "cases:read documents:resolve",
      exp: NOW_SECONDS + 300,
    });
  });

  it("gives every token its own jti", async () => {
    const first = decodePayload(await mintTaskToken(SECRET, CLAIMS, { now: NOW }));
    const second = decodePayload(await mintTaskToken(SECRET, CLAIMS, { now: NOW }));
    expect(first["jti"]).not.toEqual(second["jti"]);
  });

  it("accepts an empty scope list", async () => {
    const token = await mintTaskToken(SECRET, { ...CLAIMS, scopes: [] }, { now: NOW });
    const result = await verifyTaskToken(SECRET, token, EXPECTED);
    expect(result.ok && result.claims.scopes).toEqual([]);
  });

  it("reports expired tokens, allowing at most the clock skew", async () => {
    const token = await mintTaskToken(SECRET, CLAIMS, { now: NOW, ttlSeconds: 60 });
    const justInsideSkew = NOW + (60 + CLOCK_SKEW_SECONDS - 1) * 1000;
    const atSkewEdge = NOW + (60 + CLOCK_SKEW_SECONDS) * 1000;
    expect((await verifyTaskToken(SECRET, token, { audience: "caseops", now: justInsideSkew })).ok).toBe(true);
    expect(await verifyTaskToken(SECRET, token, { audience: "caseops", now: atSkewEdge })).toEqual({
      ok: false,
      code: "expired",
    });
    expect(await verifyTaskToken(SECRET, token, { audience: "caseops", now: NOW + 3_600_000 })).toEqual({
      ok: false,
      code: "expired",
    });
  });

  it("refuses a token issued beyond the skew in the future", async () => {
    const token = await mintTaskToken(SECRET, CLAIMS, { now: NOW + (CLOCK_SKEW_SECONDS + 1) * 1000 });
    expect(await verifyTaskToken(SECRET, token, EXPECTED)).toEqual({ ok: false, code: "malformed" });
  });

  it("reports a wrong audience", async () => {
    const token = await mintTaskToken(SECRET, { ...CLAIMS, audience: "calendar" }, { now: NOW });
    expect(await verifyTaskToken(SECRET, token, EXPECTED)).toEqual({ ok: false, code: "wrong_audience" });
  });

  it("reports a tampered payload as an invalid signature", async () => {
    const token = await mintTaskToken(SECRET, CLAIMS, { now: NOW });
    const forged = replaceSegment(token, 1, encodeJson({ ...decodePayload(token), tenant: "globex" }));
    expect(await verifyTaskToken(SECRET, forged, EXPECTED)).toEqual({ ok: false, code: "invalid_signature" });
  });

  it("reports a tampered signature", async () => {
    const token = await mintTaskToken(SECRET, CLAIMS, { now: NOW });
    const signature = token.split(".")[2] ?? "";
    const flipped = `${signature.startsWith("A") ? "B" : "A"}${signature.slice(1)}`;
    expect(await verifyTaskToken(SECRET, replaceSegment(token, 2, flipped), EXPECTED)).toEqual({
      ok: false,
      code: "invalid_signature",
    });
    expect(await verifyTaskToken(SECRET, replaceSegment(token, 2, ""), EXPECTED)).toEqual({
      ok: false,
      code: "invalid_signature",
    });
  });

  it("refuses a token signed with another secret", async () => {
    const token = await mintTaskToken(OTHER_SECRET, CLAIMS, { now: NOW });
    expect(await verifyTaskToken(SECRET, token, EXPECTED)).toEqual({ ok: false, code: "invalid_signature" });
  });

  it("refuses alg none, even with a payload shaped exactly like ours", async () => {
    const unsecured = new UnsecuredJWT(ourPayload()).encode();
    expect(await verifyTaskToken(SECRET, unsecured, EXPECTED)).toEqual({ ok: false, code: "invalid_signature" });
    // The same, with the original token's signature left in place.
    const token = await mintTaskToken(SECRET, CLAIMS, { now: NOW });
    const headerSwapped = replaceSegment(token, 0, encodeJson({ alg: "none", typ: "JWT" }));
    expect(await verifyTaskToken(SECRET, headerSwapped, EXPECTED)).toEqual({ ok: false, code: "invalid_signature" });
  });

  it("refuses any algorithm other than HS256, even when signed with the right secret", async () => {
    const hs512 = await new SignJWT(ourPayload())
      .setProtectedHeader({ alg: "HS512", typ: "JWT" })
      .sign(new Uint8Array(64).fill(3));
    expect(await verifyTaskToken(new Uint8Array(64).fill(3), hs512, EXPECTED)).toEqual({
      ok: false,
      code: "invalid_signature",
    });
  });

  it("checks claim shapes and the lifetime of correctly signed tokens", async () => {
    const sign = (payload: Record<string, unknown>) =>
      new SignJWT(payload).setProtectedHeader({ alg: "HS256", typ: "JWT" }).sign(SECRET);
    expect((await verifyTaskToken(SECRET, await sign(ourPayload()), EXPECTED)).ok).toBe(true);
    const refusals: Record<string, unknown>[] = [
      ourPayload({ iss: "someone-else" }),
      ourPayload({ aud: ["caseops", "calendar"] }),
      ourPayload({ tenant: undefined }),
      ourPayload({ scope: ["cases:read"] }),
      ourPayload({ scope: "cases:read  extra" }),
      ourPayload({ exp: NOW_SECONDS + MAX_TTL_SECONDS + 1 }),
      ourPayload({ exp: NOW_SECONDS }),
      ourPayload({ admin: true }),
    ];
    for (const payload of refusals) {
      expect(await verifyTaskToken(SECRET, await sign(payload), EXPECTED), JSON.stringify(payload)).toEqual({
        ok: false,
        code: "malformed",
      });
    }
  });

  it("treats absent input as missing and other junk as malformed", async () => {
    for (const absent of [undefined, null, ""]) {
      expect(await verifyTaskToken(SECRET, absent, EXPECTED)).toEqual({ ok: false, code: "missing" });
    }
    for (const junk of [
      42,
      {},
      ["a.b.c"],
      true,
      "not-a-jwt",
      "a.b",
      "a.b.c.d",
      "Bearer a.b.c",
      "%%%.###.$$$",
      "e30.e30.e30",
    ]) {
      expect(await verifyTaskToken(SECRET, junk, EXPECTED), JSON.stringify(junk)).toEqual({
        ok: false,
        code: "malformed",
      });
    }
  });

  it("refuses tokens over 4 KiB before looking at them", async () => {
    const scopes = Array.from({ length: 32 }, (_, position) => `scope-with-a-fairly-long-name-number-${position}:read`);
    const big = await mintTaskToken(SECRET, { ...CLAIMS, scopes }, { now: NOW });
    const padded = `${big}${"A".repeat(MAX_TOKEN_LENGTH)}`;
    expect(padded.length).toBeGreaterThan(MAX_TOKEN_LENGTH);
    expect(await verifyTaskToken(SECRET, padded, EXPECTED)).toEqual({ ok: false, code: "malformed" });
    expect(await verifyTaskToken(SECRET, "x".repeat(1_000_000), EXPECTED)).toEqual({ ok: false, code: "malformed" });
  });

  it("caps the ttl at 15 minutes and refuses nonsense ttls", async () => {
    const longest = await mintTaskToken(SECRET, CLAIMS, { now: NOW, ttlSeconds: MAX_TTL_SECONDS });
    expect(decodePayload(longest)["exp"]).toBe(NOW_SECONDS + MAX_TTL_SECONDS);
    for (const ttlSeconds of [MAX_TTL_SECONDS + 1, 3600, 0, -1, 1.5, Number.NaN]) {
      await expect(mintTaskToken(SECRET, CLAIMS, { now: NOW, ttlSeconds }), String(ttlSeconds)).rejects.toThrow(
        RangeError,
      );
    }
  });

  it("refuses to mint with a short secret or ill-shaped claims", async () => {
    await expect(mintTaskToken(new Uint8Array(31), CLAIMS)).rejects.toThrow(RangeError);
    await expect(mintTaskToken(SECRET, { ...CLAIMS, scopes: ["two words"] })).rejects.toThrow(TypeError);
    await expect(mintTaskToken(SECRET, { ...CLAIMS, tenant: "" })).rejects.toThrow(TypeError);
  });
});

describe("loadTaskTokenSecret", () => {
  const bytes = new Uint8Array(32).map((_, position) => 255 - position);

  it("decodes hex and base64url (with or without padding)", () => {
    expect(loadTaskTokenSecret(Buffer.from(bytes).toString("hex"))).toEqual(bytes);
    expect(loadTaskTokenSecret(Buffer.from(bytes).toString("base64url"))).toEqual(bytes);
    expect(loadTaskTokenSecret(`${Buffer.from(bytes).toString("base64url")}=`)).toEqual(bytes);
  });

  it("refuses missing, short or undecodable values without echoing them", () => {
    const cases = [
      undefined,
      "",
      "   ",
      "ab".repeat(31),
      Buffer.from(new Uint8Array(31)).toString("base64url"),
      "not base64 at all!",
    ];
    for (const value of cases) {
      let caught: unknown;
      try {
        loadTaskTokenSecret(value);
      } catch (error) {
        caught = error;
      }
      expect(isConfigError(caught), String(value)).toBe(true);
      if (value !== undefined && value.trim() !== "") expect((caught as Error).message).not.toContain(value);
    }
  });
});
