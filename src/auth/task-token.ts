/**
 * Task tokens: short-lived, audience-bound HS256 JWTs that the host mints for
 * one tool server, one tenant, one task (thread) and one user, carrying the
 * scopes that user holds. A tool server verifies them on every request and
 * builds its resource boundary from the claims, never from tool arguments.
 *
 * This is a development stand-in for an STS: one shared HMAC secret, no key
 * rotation and no revocation list; `jti` is there so either can be added.
 *
 * Both functions are async because `jose` signs and verifies through WebCrypto.
 */
import { randomUUID } from "node:crypto";
import { SignJWT, compactVerify, decodeProtectedHeader } from "jose";
import { z } from "zod";
import { ConfigError } from "../errors.js";

/** The `iss` of every task token; a token naming another issuer is refused. */
export const TASK_TOKEN_ISSUER = "warrant-host";

/** The only signing algorithm minted or accepted. */
export const TASK_TOKEN_ALGORITHM = "HS256";

/** Lifetime used when the caller does not choose one. */
export const DEFAULT_TTL_SECONDS = 120;

/** Longest lifetime a task token may have (minting refuses more; verifying rejects more). */
export const MAX_TTL_SECONDS = 900;

/** Tolerated clock difference between the minting host and the verifying server. */
export const CLOCK_SKEW_SECONDS = 5;

/** Tokens longer than this are refused before any parsing (a compact JWS of ours is ~400 bytes). */
export const MAX_TOKEN_LENGTH = 4096;

/** Shortest accepted HMAC secret: 256 bits, the HS256 output size (RFC 7518 §3.2). */
export const MIN_SECRET_BYTES = 32;

/** Why a token was refused. Signature problems are reported before claim problems. */
export type TaskTokenFailure = "missing" | "malformed" | "invalid_signature" | "expired" | "wrong_audience";

/** What a verified task token says. */
export interface TaskTokenClaims {
  /** The one tool server the token is for (`aud`). */
  readonly audience: string;
  /** The tenant whose data the bearer may read. */
  readonly tenant: string;
  /** The task (thread id) the token was minted for. */
  readonly task: string;
  /** The user the host acts for (`sub`). */
  readonly subject: string;
  /** Granted scopes, in token order, without duplicates. */
  readonly scopes: readonly string[];
  /** `iat`, seconds since the epoch. */
  readonly issuedAt: number;
  /** `exp`, seconds since the epoch. */
  readonly expiresAt: number;
  /** `jti`: unique per minted token. */
  readonly tokenId: string;
}

/** The outcome of {@link verifyTaskToken}. */
export type TaskTokenVerification = { ok: true; claims: TaskTokenClaims } | { ok: false; code: TaskTokenFailure };

// ---------------------------------------------------------------------------
// Claim shapes
// ---------------------------------------------------------------------------

/** Tenant and user ids: short lowercase handles, the same alphabet as the principal directory. */
const HANDLE = /^[a-z0-9_-]{1,64}$/;
/** Audience names: lowercase service names such as `caseops`. */
const AUDIENCE = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
/** Task (thread) ids: UUIDs or similar opaque ids; no spaces or control characters. */
const TASK = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
/** One scope, e.g. `cases:read`. */
const SCOPE = /^[a-z][a-z0-9_.-]*(?::[a-z0-9_.-]+)*$/;
const MAX_SCOPES = 32;

const epochSeconds = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/** The claims a caller asks {@link mintTaskToken} to sign. */
const MintClaimsSchema = z
  .object({
    audience: z.string().regex(AUDIENCE),
    tenant: z.string().regex(HANDLE),
    task: z.string().regex(TASK),
    subject: z.string().regex(HANDLE),
    scopes: z.array(z.string().max(64).regex(SCOPE)).max(MAX_SCOPES),
  })
  .strict();

/**
 * The JWT payload exactly as minted. Strict: a token carrying claims we never
 * mint was not made by our host, whatever its signature says. `aud` must be a
 * single string: a token valid for several servers is what audience binding
 * exists to prevent.
 */
const PayloadSchema = z
  .object({
    iss: z.literal(TASK_TOKEN_ISSUER),
    aud: z.string().regex(AUDIENCE),
    sub: z.string().regex(HANDLE),
    tenant: z.string().regex(HANDLE),
    task: z.string().regex(TASK),
    scope: z
      .string()
      .max(MAX_SCOPES * 65)
      .refine(
        (value) => value === "" || value.split(" ").every((scope) => SCOPE.test(scope) && scope.length <= 64),
        "invalid scope list",
      ),
    iat: epochSeconds,
    exp: epochSeconds,
    nbf: epochSeconds.optional(),
    jti: z.string().min(1).max(64),
  })
  .strict();

// ---------------------------------------------------------------------------
// Minting
// ---------------------------------------------------------------------------

/**
 * Signs a task token.
 *
 * @param secret HMAC key of at least {@link MIN_SECRET_BYTES} bytes (see {@link loadTaskTokenSecret}).
 * @param options.ttlSeconds lifetime, an integer in 1..{@link MAX_TTL_SECONDS} (default {@link DEFAULT_TTL_SECONDS}).
 * @param options.now current time in milliseconds since the epoch (`Date.now()`), for tests.
 * @throws RangeError for a short secret or an out-of-range ttl; TypeError for ill-shaped claims.
 */
export async function mintTaskToken(
  secret: Uint8Array,
  claims: { audience: string; tenant: string; task: string; subject: string; scopes: string[] },
  options: { ttlSeconds?: number; now?: number } = {},
): Promise<string> {
  assertSecret(secret);
  const ttl = options.ttlSeconds ?? DEFAULT_TTL_SECONDS;
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > MAX_TTL_SECONDS) {
    throw new RangeError(`ttlSeconds must be an integer in 1..${MAX_TTL_SECONDS}, got ${String(ttl)}`);
  }
  const parsed = MintClaimsSchema.safeParse(claims);
  if (!parsed.success) {
    throw new TypeError(
      `invalid task token claims: ${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`,
    );
  }
  const issuedAt = Math.floor((options.now ?? Date.now()) / 1000);
  const { audience, tenant, task, subject, scopes } = parsed.data;
  return new SignJWT({ tenant, task, scope: [...new Set(scopes)].join(" ") })
    .setProtectedHeader({ alg: TASK_TOKEN_ALGORITHM, typ: "JWT" })
    .setIssuer(TASK_TOKEN_ISSUER)
    .setAudience(audience)
    .setSubject(subject)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + ttl)
    .setJti(randomUUID())
    .sign(secret);
}

// ---------------------------------------------------------------------------
// Verification
// ---------------------------------------------------------------------------

/**
 * Verifies a task token for one audience. Never throws: every refusal is a
 * typed failure, and the order of checks is fixed — size and syntax, then the
 * signature (HS256 only), then claim shapes and lifetime policy, then the
 * audience, then the clock — so nothing about the claims of an unsigned or
 * forged token is ever reported.
 *
 * @param token whatever the caller received; non-strings are handled here so callers need no guard.
 * @param expected.now current time in milliseconds since the epoch (`Date.now()`), for tests.
 */
export async function verifyTaskToken(
  secret: Uint8Array,
  token: unknown,
  expected: { audience: string; now?: number },
): Promise<TaskTokenVerification> {
  if (token === undefined || token === null || token === "") return fail("missing");
  if (typeof token !== "string") return fail("malformed");
  if (token.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token))
    return fail("malformed");

  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    return fail("malformed");
  }
  // Checked before jose sees the token, so `alg: none` and algorithm confusion never reach a verifier.
  if (typeof header.alg !== "string") return fail("malformed");
  if (header.alg !== TASK_TOKEN_ALGORITHM) return fail("invalid_signature");
  if (header.typ !== undefined && header.typ !== "JWT") return fail("malformed");

  let payloadBytes: Uint8Array;
  try {
    ({ payload: payloadBytes } = await compactVerify(token, secret, { algorithms: [TASK_TOKEN_ALGORITHM] }));
  } catch (error) {
    return fail(joseErrorCode(error) === "ERR_JWS_SIGNATURE_VERIFICATION_FAILED" ? "invalid_signature" : "malformed");
  }

  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(payloadBytes));
  } catch {
    return fail("malformed");
  }
  const parsed = PayloadSchema.safeParse(json);
  if (!parsed.success) return fail("malformed");
  const payload = parsed.data;

  // Lifetime policy: a correctly signed token that lives longer than we ever mint is not ours to honour.
  if (payload.exp <= payload.iat || payload.exp - payload.iat > MAX_TTL_SECONDS) return fail("malformed");

  if (payload.aud !== expected.audience) return fail("wrong_audience");

  const now = Math.floor((expected.now ?? Date.now()) / 1000);
  // Issued (or valid from) noticeably in the future: the token was minted by a skewed or forged clock.
  if (payload.iat > now + CLOCK_SKEW_SECONDS) return fail("malformed");
  if (payload.nbf !== undefined && payload.nbf > now + CLOCK_SKEW_SECONDS) return fail("malformed");
  // `exp` is exclusive (RFC 7519 §4.1.4): the token is dead from that second on, plus the skew allowance.
  if (now >= payload.exp + CLOCK_SKEW_SECONDS) return fail("expired");

  return {
    ok: true,
    claims: {
      audience: payload.aud,
      tenant: payload.tenant,
      task: payload.task,
      subject: payload.sub,
      scopes: payload.scope === "" ? [] : [...new Set(payload.scope.split(" "))],
      issuedAt: payload.iat,
      expiresAt: payload.exp,
      tokenId: payload.jti,
    },
  };
}

function fail(code: TaskTokenFailure): TaskTokenVerification {
  return { ok: false, code };
}

function joseErrorCode(error: unknown): string | undefined {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" ? code : undefined;
}

function assertSecret(secret: Uint8Array): void {
  if (!(secret instanceof Uint8Array) || secret.byteLength < MIN_SECRET_BYTES) {
    throw new RangeError(`task token secret must be at least ${MIN_SECRET_BYTES} bytes`);
  }
}

// ---------------------------------------------------------------------------
// Secret loading
// ---------------------------------------------------------------------------

/**
 * Decodes the task-token secret from configuration text: hex (an even number
 * of hex digits) or base64url (padding optional). A value that is valid hex is
 * read as hex. The error never repeats the value, so it is safe to log.
 *
 * @throws ConfigError `config_invalid` when the value is missing, undecodable or shorter than {@link MIN_SECRET_BYTES} bytes.
 */
export function loadTaskTokenSecret(value: string | undefined): Uint8Array {
  const text = value?.trim() ?? "";
  if (text === "") throw new ConfigError("config_invalid", "task token secret is not set");
  let bytes: Uint8Array;
  if (/^(?:[0-9a-fA-F]{2})+$/.test(text)) {
    bytes = Uint8Array.from(Buffer.from(text, "hex"));
  } else if (/^[A-Za-z0-9_-]+={0,2}$/.test(text) && text.replace(/=+$/, "").length % 4 !== 1) {
    bytes = Uint8Array.from(Buffer.from(text.replace(/=+$/, ""), "base64url"));
  } else {
    throw new ConfigError("config_invalid", "task token secret is neither hex nor base64url");
  }
  if (bytes.byteLength < MIN_SECRET_BYTES) {
    throw new ConfigError(
      "config_invalid",
      `task token secret decodes to ${bytes.byteLength} bytes; at least ${MIN_SECRET_BYTES} are required`,
    );
  }
  return bytes;
}
