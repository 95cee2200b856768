/**
 * API tokens: the bearer tokens a client sends to `npm start` (and to
 * `npm run dev`'s custom auth). HS256 JWTs signed with the server's secret,
 * carrying the whole principal — subject, tenant, role, scopes, grants — and
 * an expiry. The server builds the run's principal from a verified token and
 * from nothing else.
 *
 * Distinct from task tokens (`task-token.ts`): those are minted per tool call
 * for one MCP server's audience; these authenticate a person to the API.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { mkdir, readFile, writeFile, chmod, stat } from "node:fs/promises";
import path from "node:path";
import { SignJWT, compactVerify, decodeProtectedHeader } from "jose";
import { z } from "zod";
import { ConfigError } from "../errors.js";
import { GrantsSchema, PrincipalSchema, type Principal } from "./principal.js";
import { loadTaskTokenSecret, MIN_SECRET_BYTES } from "./task-token.js";

export const API_TOKEN_ISSUER = "warrant-api";
export const API_TOKEN_AUDIENCE = "warrant-api";
const ALGORITHM = "HS256";
/** Default lifetime of a minted API token: one working day. */
export const DEFAULT_API_TOKEN_TTL_SECONDS = 8 * 3600;
/** Longest lifetime minting allows and verification honours. */
export const MAX_API_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
/** Longer Authorization values are refused before parsing. */
export const MAX_API_TOKEN_LENGTH = 8192;
const CLOCK_SKEW_SECONDS = 5;

/** Why a request was not authenticated; each is a 401. */
export type ApiTokenFailure = "token_missing" | "token_malformed" | "token_invalid" | "token_expired";

export type ApiTokenVerification =
  | { ok: true; principal: Principal; token: { jti: string; issued_at: number } }
  | { ok: false; code: ApiTokenFailure; message: string };

const PayloadSchema = z
  .object({
    iss: z.literal(API_TOKEN_ISSUER),
    aud: z.literal(API_TOKEN_AUDIENCE),
    sub: PrincipalSchema.shape.user_id,
    tenant: PrincipalSchema.shape.tenant,
    role: PrincipalSchema.shape.role,
    scopes: PrincipalSchema.shape.scopes,
    grants: GrantsSchema,
    name: z.string().max(128).optional(),
    iat: z.number().int().min(0),
    exp: z.number().int().min(0),
    jti: z.string().min(1).max(64),
  })
  .strict();

/** Signs an API token for a principal (normally one from the dev directory). */
export async function mintApiToken(
  secret: Uint8Array,
  principal: Principal,
  options: { ttlSeconds?: number; now?: number } = {},
): Promise<string> {
  assertSecret(secret);
  const ttl = options.ttlSeconds ?? DEFAULT_API_TOKEN_TTL_SECONDS;
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > MAX_API_TOKEN_TTL_SECONDS) {
    throw new RangeError(`ttlSeconds must be an integer in 1..${MAX_API_TOKEN_TTL_SECONDS}`);
  }
  const checked = PrincipalSchema.parse(principal);
  const issuedAt = Math.floor((options.now ?? Date.now()) / 1000);
  return new SignJWT({
    tenant: checked.tenant,
    role: checked.role,
    scopes: checked.scopes,
    grants: checked.grants,
    ...(checked.display_name ? { name: checked.display_name } : {}),
  })
    .setProtectedHeader({ alg: ALGORITHM, typ: "JWT" })
    .setIssuer(API_TOKEN_ISSUER)
    .setAudience(API_TOKEN_AUDIENCE)
    .setSubject(checked.user_id)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + ttl)
    .setJti(randomUUID())
    .sign(secret);
}

/**
 * Verifies a bearer token. Never throws. Signature before claims, so nothing
 * about an unsigned or forged token's claims is ever reported.
 */
export async function verifyApiToken(
  secret: Uint8Array,
  token: unknown,
  now: number = Date.now(),
): Promise<ApiTokenVerification> {
  if (token === undefined || token === null || token === "") return fail("token_missing", "no bearer token");
  if (typeof token !== "string" || token.length > MAX_API_TOKEN_LENGTH)
    return fail("token_malformed", "the token is not a compact JWT");
  if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token))
    return fail("token_malformed", "the token is not a compact JWT");
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    return fail("token_malformed", "the token header is unreadable");
  }
  if (header.alg !== ALGORITHM) return fail("token_invalid", "the token is not signed with HS256");
  const signed = await signedClaims(secret, token);
  if (!signed.ok) return signed;
  const { payload } = signed;
  if (payload.exp <= payload.iat || payload.exp - payload.iat > MAX_API_TOKEN_TTL_SECONDS)
    return fail("token_malformed", "the token lifetime is out of policy");
  const seconds = Math.floor(now / 1000);
  if (payload.iat > seconds + CLOCK_SKEW_SECONDS) return fail("token_malformed", "the token was issued in the future");
  if (seconds >= payload.exp + CLOCK_SKEW_SECONDS) return fail("token_expired", "the token has expired");
  return {
    ok: true,
    principal: {
      user_id: payload.sub,
      tenant: payload.tenant,
      role: payload.role,
      scopes: [...new Set(payload.scopes)],
      grants: Object.fromEntries(Object.entries(payload.grants).map(([kind, values]) => [kind, [...new Set(values)]])),
      ...(payload.name ? { display_name: payload.name } : {}),
    },
    // What revocation is checked by (src/auth/revocations.ts): the token's id and when it was issued.
    token: { jti: payload.jti, issued_at: payload.iat },
  };
}

type Payload = z.infer<typeof PayloadSchema>;

/** Most tokens whose signature and claims' shape are remembered per secret. */
const MAX_VERIFIED_TOKENS = 4096;
/**
 * Tokens already verified against a secret, with their claims: a client sends the same token with every request,
 * and an HMAC check through WebCrypto costs more than the rest of an API call's authentication. Only the signature
 * and the claims' shape are remembered (they depend on nothing but the secret and the token's text); the lifetime
 * checks, and revocation after them, run on every request.
 */
const verifiedTokens = new WeakMap<Uint8Array, Map<string, Payload>>();

/** The token's claims once its signature verifies and they have the shape of Warrant's. */
async function signedClaims(
  secret: Uint8Array,
  token: string,
): Promise<{ ok: true; payload: Payload } | ApiTokenRefusal> {
  const known = verifiedTokens.get(secret)?.get(token);
  if (known !== undefined) return { ok: true, payload: known };
  let payloadBytes: Uint8Array;
  try {
    ({ payload: payloadBytes } = await compactVerify(token, secret, { algorithms: [ALGORITHM] }));
  } catch {
    return fail("token_invalid", "the token signature does not verify");
  }
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(payloadBytes));
  } catch {
    return fail("token_malformed", "the token payload is not JSON");
  }
  const parsed = PayloadSchema.safeParse(json);
  if (!parsed.success) return fail("token_malformed", "the token claims are not Warrant API claims");
  const verified = verifiedTokens.get(secret) ?? new Map<string, Payload>();
  verifiedTokens.set(secret, verified);
  if (verified.size >= MAX_VERIFIED_TOKENS) verified.delete(verified.keys().next().value as string);
  verified.set(token, parsed.data);
  return { ok: true, payload: parsed.data };
}

/** Reads `Authorization: Bearer <token>` (case-insensitive scheme, one space). */
export function bearerToken(header: string | null | undefined): string | undefined | null {
  if (header === undefined || header === null || header === "") return undefined;
  const match = /^Bearer ([^\s]+)$/i.exec(header.trim());
  return match?.[1] ?? null;
}

/** Verifies an Authorization header value: missing, non-Bearer, or a bad token all fail typed. */
export async function authenticate(
  secret: Uint8Array,
  header: string | null | undefined,
  now?: number,
): Promise<ApiTokenVerification> {
  const token = bearerToken(header);
  if (token === undefined)
    return fail(
      "token_missing",
      "send Authorization: Bearer <token> or X-Api-Key: <token> (npm run token -- --user alice)",
    );
  if (token === null) return fail("token_malformed", "the Authorization header is not 'Bearer <token>'");
  return verifyApiToken(secret, token, now);
}

/**
 * Verifies a request's token, sent as `Authorization: Bearer <token>` or as
 * `X-Api-Key: <token>` (what agent-chat-ui and the SDK's `apiKey` send).
 * Both go through `verifyApiToken`, so the claims and the 401 codes are the
 * same. When both headers are present they must carry the same token: two
 * different tokens in one request are refused (`token_invalid`) rather than
 * one of them silently winning.
 */
export async function authenticateRequest(
  secret: Uint8Array,
  headers: { authorization: string | null | undefined; apiKey: string | null | undefined },
  now?: number,
): Promise<ApiTokenVerification> {
  const token = requestToken(headers);
  if (!token.ok) return token;
  return verifyApiToken(secret, token.token, now);
}

/**
 * The one token a request carries, from `Authorization: Bearer` or
 * `X-Api-Key`; both headers with different tokens are refused. Every
 * verifier (ours, an OIDC issuer's) starts here.
 */
export function requestToken(headers: {
  authorization: string | null | undefined;
  apiKey: string | null | undefined;
}): { ok: true; token: string } | { ok: false; code: ApiTokenFailure; message: string } {
  const apiKey =
    headers.apiKey === undefined || headers.apiKey === null || headers.apiKey.trim() === ""
      ? undefined
      : headers.apiKey.trim();
  const bearer = bearerToken(headers.authorization);
  if (bearer === null)
    return { ok: false, code: "token_malformed", message: "the Authorization header is not 'Bearer <token>'" };
  if (apiKey === undefined) {
    if (bearer === undefined)
      return {
        ok: false,
        code: "token_missing",
        message: "send Authorization: Bearer <token> or X-Api-Key: <token> (npm run token -- --user alice)",
      };
    return { ok: true, token: bearer };
  }
  if (bearer !== undefined && bearer !== apiKey)
    return {
      ok: false,
      code: "token_invalid",
      message: "Authorization and X-Api-Key carry different tokens; send one",
    };
  return { ok: true, token: apiKey };
}

/**
 * The API signing secret: `WARRANT_AUTH_SECRET` (hex or base64url, at least
 * 32 bytes) when set, otherwise a random secret kept in `<dataDir>/auth-secret`
 * (created with mode 0600 on first use). Never a constant in the code.
 */
export async function loadApiSecret(options: { configured: string | undefined; dataDir: string }): Promise<Uint8Array> {
  if (options.configured !== undefined && options.configured.trim() !== "") {
    try {
      return loadTaskTokenSecret(options.configured);
    } catch (error) {
      throw new ConfigError(
        "config_invalid",
        `WARRANT_AUTH_SECRET: ${(error as Error).message.replace(/^task token secret/, "the value")}`,
      );
    }
  }
  const file = path.join(options.dataDir, "auth-secret");
  try {
    const text = (await readFile(file, "utf8")).trim();
    const info = await stat(file);
    if ((info.mode & 0o077) !== 0) await chmod(file, 0o600);
    return loadTaskTokenSecret(text);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
      throw new ConfigError("config_invalid", `${file}: ${(error as Error).message}`);
    }
  }
  await mkdir(options.dataDir, { recursive: true });
  const secret = randomBytes(32);
  try {
    // `wx`: if another process created it first, use theirs.
    await writeFile(file, `${secret.toString("hex")}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return loadTaskTokenSecret((await readFile(file, "utf8")).trim());
  }
  return new Uint8Array(secret);
}

type ApiTokenRefusal = Extract<ApiTokenVerification, { ok: false }>;

function fail(code: ApiTokenFailure, message: string): ApiTokenRefusal {
  return { ok: false, code, message };
}

function assertSecret(secret: Uint8Array): void {
  if (!(secret instanceof Uint8Array) || secret.byteLength < MIN_SECRET_BYTES) {
    throw new RangeError(`API token secret must be at least ${MIN_SECRET_BYTES} bytes`);
  }
}
