/**
 * The one verification every entry point uses (`npm start`'s API and
 * operator routes, `npm run dev`'s custom auth): a request's token is either
 * one of Warrant's own HS256 tokens (api-token.ts) or a token of a configured
 * OpenID Connect issuer (oidc-verifier.ts), told apart by its `iss` claim.
 *
 * Without `auth.oidc` this is exactly `verifyApiToken`, as before. With it,
 * a token whose `iss` is neither Warrant's nor a configured issuer's is
 * `token_issuer_unknown`; Warrant's own tokens stay accepted unless
 * `auth.oidc.dev_tokens` is `false`.
 */
import { decodeJwt } from "jose";
import type { OidcConfig } from "./oidc-config.js";
import { API_TOKEN_ISSUER, requestToken, verifyApiToken, type ApiTokenFailure } from "./api-token.js";
import { oidcVerifier, type OidcFailure } from "./oidc-verifier.js";
import type { Principal } from "./principal.js";

export type TokenFailure = ApiTokenFailure | OidcFailure;

export type TokenVerification =
  | {
      ok: true;
      principal: Principal;
      token: { jti: string; issued_at: number };
      /** Who vouches for the principal: Warrant's own signer, or the issuer URL. */
      source: "warrant" | { issuer: string };
      /** An IdP group marked `operator` (Warrant's own tokens never are: operators use operator tokens). */
      operator: boolean;
    }
  | { ok: false; code: TokenFailure; message: string }
  | { ok: false; code: "auth_unavailable"; message: string };

export interface TokenVerifier {
  /** Verifies one token. Never throws. */
  verify(token: unknown, now?: number): Promise<TokenVerification>;
  /** Verifies the token a request carries (`Authorization: Bearer` or `X-Api-Key`). */
  authenticate(
    headers: { authorization: string | null | undefined; apiKey: string | null | undefined },
    now?: number,
  ): Promise<TokenVerification>;
  /** Whether any OpenID Connect issuer is configured. */
  readonly oidc: boolean;
}

export function tokenVerifier(options: { secret: Uint8Array; oidc?: OidcConfig | undefined }): TokenVerifier {
  const { secret, oidc } = options;
  const issuers = oidc ? oidcVerifier(oidc) : undefined;
  const ours = async (token: unknown, now?: number): Promise<TokenVerification> => {
    const verified = await verifyApiToken(secret, token, now);
    return verified.ok ? { ...verified, source: "warrant", operator: false } : verified;
  };
  const verify = async (token: unknown, now?: number): Promise<TokenVerification> => {
    if (issuers === undefined || typeof token !== "string" || token === "") return ours(token, now);
    const iss = unverifiedIssuer(token);
    if (iss !== undefined && issuers.knows(iss)) {
      const verified = await issuers.verify(token, now);
      return verified.ok
        ? { ...verified, source: { issuer: verified.issuer }, operator: verified.operator }
        : { ok: false, code: verified.code, message: verified.message };
    }
    // No `iss` at all: Warrant's verifier refuses it with today's codes.
    if ((iss === API_TOKEN_ISSUER || iss === undefined) && oidc?.dev_tokens !== false) return ours(token, now);
    return { ok: false, code: "token_issuer_unknown", message: "the token's issuer is not configured" };
  };
  return {
    oidc: issuers !== undefined,
    verify,
    async authenticate(headers, now) {
      const token = requestToken(headers);
      return token.ok ? verify(token.token, now) : token;
    },
  };
}

/** The `iss` of a JWT before verification: only to choose the verifier, which checks it again. */
function unverifiedIssuer(token: string): string | undefined {
  try {
    const iss = decodeJwt(token).iss;
    return typeof iss === "string" ? iss : undefined;
  } catch {
    return undefined;
  }
}
