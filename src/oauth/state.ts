/**
 * The `state` of a per-user authorization (OAuth `authorization_code`): the
 * run it resumes, the owner who may complete it and the server, sealed with
 * an HMAC under a key derived from the deployment secret, so any instance
 * can check it and nobody can forge or move it. The PKCE verifier stays in
 * the sealed credential store (src/stores/oauth-token-store.ts), never here.
 */
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import { z } from "zod";

/** How long an authorization URL stays good. */
export const AUTHORIZATION_TTL_MS = 10 * 60_000;
const MAX_STATE_CHARS = 2_048;
const STATE_FORM = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export const AuthorizationBindingSchema = z
  .object({
    thread_id: z.string().min(1).max(200),
    user_id: z.string().min(1).max(200),
    tenant: z.string().min(1).max(200),
    server: z.string().min(1).max(200),
    expires_at: z.number().int(),
    nonce: z.string().min(1).max(64),
  })
  .strict();
export type AuthorizationBinding = z.infer<typeof AuthorizationBindingSchema>;

export type OpenedState =
  | { ok: true; binding: AuthorizationBinding }
  | { ok: false; code: "invalid_state" | "expired_state"; message: string };

export function stateKeyFrom(secret: Uint8Array): Uint8Array {
  return new Uint8Array(hkdfSync("sha256", Buffer.from(secret), Buffer.alloc(0), "warrant oauth state v1", 32));
}

const mac = (key: Uint8Array, body: string) => createHmac("sha256", key).update(body).digest();

export function sealState(key: Uint8Array, binding: Omit<AuthorizationBinding, "nonce">): string {
  const body = Buffer.from(JSON.stringify({ ...binding, nonce: randomBytes(12).toString("base64url") })).toString(
    "base64url",
  );
  return `${body}.${mac(key, body).toString("base64url")}`;
}

export function openState(key: Uint8Array, text: unknown, now: number): OpenedState {
  const invalid = {
    ok: false,
    code: "invalid_state",
    message: "the authorization state is not one Warrant issued",
  } as const;
  if (typeof text !== "string" || text.length > MAX_STATE_CHARS || !STATE_FORM.test(text)) return invalid;
  const [body = "", signature = ""] = text.split(".");
  const expected = mac(key, body);
  const given = Buffer.from(signature, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return invalid;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
  } catch {
    return invalid;
  }
  const binding = AuthorizationBindingSchema.safeParse(parsed);
  if (!binding.success) return invalid;
  if (binding.data.expires_at <= now)
    return { ok: false, code: "expired_state", message: "the authorization link has expired; ask again" };
  return { ok: true, binding: binding.data };
}
