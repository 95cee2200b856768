/**
 * Verifying tokens of the organization's OpenID Connect issuers
 * (`auth.oidc`, src/auth/oidc-config.ts), with maintained libraries only:
 * `openid-client` reads each issuer's discovery document, `jose` keeps its
 * remote JWK set and checks the signature and the registered claims.
 *
 * - A token is matched to one configured issuer by its `iss` claim (exact
 *   string) and nothing else; an unknown `iss` is `token_issuer_unknown`.
 * - Refused before any key is looked up: `alg: none` and every algorithm the
 *   issuer does not allow (HS256 signed with the public key as the secret
 *   among them): `token_algorithm_refused`; a `jku`, `x5u`, `jwk` or `x5c`
 *   header (a key the token brings itself): `token_header_refused`.
 * - The key set is fetched on first use and kept; a `kid` it lacks makes it
 *   refetch once, at most every `jwks_cooldown_seconds` (rotation without a
 *   restart, and no refetch storm from forged `kid`s).
 * - Discovery or a key set that cannot be fetched fails closed:
 *   `auth_unavailable` (503), never an admission.
 * - `exp`, `nbf`, `iat` within the issuer's clock skew; `aud` one of the
 *   configured audiences; then the claims are mapped (claim-mapping.ts).
 */
import { createHash } from "node:crypto";
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from "jose";
import * as client from "openid-client";
import type { OidcConfig, OidcIssuerConfig } from "./oidc-config.js";
import { principalFromClaims } from "./claim-mapping.js";
import type { Principal } from "./principal.js";

/** Longer tokens are refused before parsing. */
export const MAX_OIDC_TOKEN_LENGTH = 12_288;
/** How long a failed discovery is remembered before it is tried again (no request storm at a down IdP). */
const DISCOVERY_RETRY_MS = 2_000;
const FETCH_TIMEOUT_MS = 5_000;
/** Headers that bring their own key or a place to fetch one: never honoured. */
const KEY_BEARING_HEADERS = ["jku", "x5u", "jwk", "x5c"] as const;

export type OidcFailure =
  | "token_malformed"
  | "token_invalid"
  | "token_expired"
  | "token_issuer_unknown"
  | "token_audience_mismatch"
  | "token_algorithm_refused"
  | "token_header_refused"
  | "principal_unmapped";

export type OidcVerification =
  | {
      ok: true;
      principal: Principal;
      /** Whether a mapped group lets the bearer use the operator commands. */
      operator: boolean;
      token: { jti: string; issued_at: number };
      issuer: string;
    }
  | { ok: false; code: OidcFailure; message: string }
  | { ok: false; code: "auth_unavailable"; message: string };

export interface OidcVerifier {
  /** Whether `iss` names one of the configured issuers. */
  knows(iss: string): boolean;
  /** Verifies a compact JWT. Never throws. */
  verify(token: string, now?: number): Promise<OidcVerification>;
}

/** A failure to reach the issuer (discovery or key set), as opposed to a bad token. */
class IssuerUnreachable extends Error {}

/** The verifier over every configured issuer; nothing is fetched until the first token of an issuer arrives. */
export function oidcVerifier(config: OidcConfig): OidcVerifier {
  const issuers = new Map(config.issuers.map((issuer) => [issuer.issuer, issuerKeys(issuer)]));
  return {
    knows: (iss) => issuers.has(iss),
    async verify(token, now = Date.now()) {
      if (token.length > MAX_OIDC_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token))
        return fail("token_malformed", "the token is not a compact JWT");
      let header: ReturnType<typeof decodeProtectedHeader>;
      let claims: JWTPayload;
      try {
        header = decodeProtectedHeader(token);
        claims = decodeJwt(token);
      } catch {
        return fail("token_malformed", "the token is not a readable JWT");
      }
      // The unverified `iss` only chooses whose keys check the signature; jwtVerify checks it again.
      const entry = typeof claims.iss === "string" ? issuers.get(claims.iss) : undefined;
      if (entry === undefined) return fail("token_issuer_unknown", "the token's issuer is not configured");
      const { issuer } = entry;
      if (typeof header.alg !== "string" || !(issuer.algorithms as readonly string[]).includes(header.alg))
        return fail("token_algorithm_refused", `the token's algorithm is not one of ${issuer.algorithms.join(", ")}`);
      for (const name of KEY_BEARING_HEADERS)
        if (Object.hasOwn(header, name))
          return fail("token_header_refused", `a token header "${name}" naming its own key is refused`);
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, entry.keys, {
          issuer: issuer.issuer,
          audience: issuer.audience,
          algorithms: issuer.algorithms,
          clockTolerance: issuer.clock_skew_seconds,
          currentDate: new Date(now),
          requiredClaims: ["exp", "iat"],
        }));
      } catch (error) {
        return verificationFailure(error);
      }
      if (typeof payload.iat === "number" && payload.iat > Math.floor(now / 1000) + issuer.clock_skew_seconds)
        return fail("token_malformed", "the token was issued in the future");
      const mapped = principalFromClaims(issuer, payload);
      if (!mapped.ok) return mapped;
      return {
        ok: true,
        principal: mapped.principal,
        operator: mapped.operator,
        token: { jti: tokenId(payload, token), issued_at: payload.iat ?? 0 },
        issuer: issuer.issuer,
      };
    },
  };
}

/** One issuer's discovery and remote key set, fetched lazily and shared by every request. */
function issuerKeys(issuer: OidcIssuerConfig) {
  let discovered: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;
  let failedAt = 0;
  const discover = async () => {
    const url = new URL(issuer.issuer);
    const configuration = await client.discovery(url, issuer.client_id ?? "warrant-api", undefined, undefined, {
      timeout: FETCH_TIMEOUT_MS / 1000,
      // http is allowed for a loopback issuer only (the config refuses any other).
      ...(url.protocol === "http:" ? { execute: [client.allowInsecureRequests] } : {}),
    });
    const jwksUri = configuration.serverMetadata().jwks_uri;
    if (jwksUri === undefined) throw new Error("the discovery document names no jwks_uri");
    return createRemoteJWKSet(new URL(jwksUri), {
      cooldownDuration: issuer.jwks_cooldown_seconds * 1000,
      timeoutDuration: FETCH_TIMEOUT_MS,
    });
  };
  const keySet = async () => {
    if (discovered === undefined) {
      if (Date.now() - failedAt < DISCOVERY_RETRY_MS) throw new IssuerUnreachable("discovery failed moments ago");
      discovered = discover().catch((error: unknown) => {
        discovered = undefined;
        failedAt = Date.now();
        throw new IssuerUnreachable(`discovery failed: ${String(error)}`);
      });
    }
    return discovered;
  };
  const keys = async (...args: Parameters<ReturnType<typeof createRemoteJWKSet>>) => {
    const jwks = await keySet();
    try {
      return await jwks(...args);
    } catch (error) {
      // A key set that answered but lacks the key (or names it twice) is the token's problem; anything else is ours.
      if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) throw error;
      throw new IssuerUnreachable(`the key set cannot be fetched: ${String(error)}`);
    }
  };
  return { issuer, keys };
}

function verificationFailure(error: unknown): OidcVerification {
  if (error instanceof IssuerUnreachable)
    return { ok: false, code: "auth_unavailable", message: "the identity provider cannot be reached; retry" };
  if (error instanceof errors.JWTExpired) return fail("token_expired", "the token has expired");
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "aud") return fail("token_audience_mismatch", "the token is not issued for this API");
    if (error.claim === "iss") return fail("token_issuer_unknown", "the token's issuer is not configured");
    if (error.claim === "nbf") return fail("token_invalid", "the token is not valid yet");
    return fail("token_malformed", `the token's "${error.claim}" claim is missing or invalid`);
  }
  if (error instanceof errors.JOSEAlgNotAllowed)
    return fail("token_algorithm_refused", "the token's algorithm is refused");
  if (error instanceof errors.JWTInvalid || error instanceof errors.JWSInvalid)
    return fail("token_malformed", "the token is not a valid JWT");
  // A bad signature, a key the issuer does not publish, or any other refusal of the token itself.
  return fail("token_invalid", "the token signature does not verify");
}

/** The id revocation works by: the token's `jti`, or (an ID token without one) a digest of the token. */
function tokenId(payload: JWTPayload, token: string): string {
  if (typeof payload.jti === "string" && /^[A-Za-z0-9._:-]{1,64}$/.test(payload.jti)) return payload.jti;
  return `sha256:${createHash("sha256").update(token).digest("base64url").slice(0, 43)}`;
}

function fail(code: OidcFailure, message: string): OidcVerification {
  return { ok: false, code, message };
}
