/**
 * Webhook signatures: `Warrant-Signature: t=<unix seconds>,v1=<hex>` where
 * `v1` is HMAC-SHA256, keyed with the deployment's webhook secret, over
 * `<t>.<body>` (the exact bytes sent). A receiver recomputes it, compares in
 * constant time and refuses a `t` too far from its clock (replay).
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "Warrant-Signature";

export function signatureOf(secret: string, timestamp: number, body: string): string {
  return createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
}

/** The header value for `body` sent at `timestamp` (seconds). */
export function signatureHeader(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${signatureOf(secret, timestamp, body)}`;
}

/** Whether `header` signs `body` with `secret`, at most `toleranceSeconds` from `now` (seconds). */
export function verifySignature(
  secret: string,
  header: string | undefined | null,
  body: string,
  options: { now?: number; toleranceSeconds?: number } = {},
): boolean {
  if (!header || header.length > 512) return false;
  const parts = new Map(
    header.split(",").map((part) => {
      const index = part.indexOf("=");
      return [part.slice(0, index).trim(), part.slice(index + 1).trim()] as const;
    }),
  );
  const timestamp = Number(parts.get("t"));
  const given = parts.get("v1") ?? "";
  if (!Number.isInteger(timestamp) || !/^[0-9a-f]{64}$/.test(given)) return false;
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? 300)) return false;
  return timingSafeEqual(Buffer.from(given, "hex"), Buffer.from(signatureOf(secret, timestamp, body), "hex"));
}
