/**
 * Whether a webhook URL may be called, decided twice: when the run is
 * created (a refusal is a 422 before the run starts) and again at every
 * attempt, with the addresses resolved then, and the connection made to the
 * address that was checked (no second lookup a DNS change could redirect).
 *
 * A URL must match the allowlist; each address its host resolves to must be
 * public, unless the matching allowlist entry names that very address (so a
 * name that resolves to 127.0.0.1 is refused, `http://127.0.0.1:8080/…`
 * listed as such is not).
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { canonicalAddress, isPublicAddress } from "./addresses.js";

export const MAX_WEBHOOK_URL_CHARS = 2048;

export interface Destination {
  url: URL;
  /** The checked address to connect to. */
  address: string;
  family: 4 | 6;
}

export type DestinationCheck = { ok: true; destination: Destination } | { ok: false; reason: string };

const defaultPort = (url: URL) => url.port || (url.protocol === "https:" ? "443" : "80");
const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, "").toLowerCase();

/** The allowlist entry `url` falls under, if any. */
export function allowedEntry(url: URL, allow: readonly string[]): URL | undefined {
  for (const text of allow) {
    const entry = new URL(text);
    if (entry.protocol !== url.protocol || hostOf(entry) !== hostOf(url) || defaultPort(entry) !== defaultPort(url))
      continue;
    const base = entry.pathname;
    const path = url.pathname;
    if (path === base || (base.endsWith("/") ? path.startsWith(base) : path.startsWith(`${base}/`))) return entry;
  }
  return undefined;
}

/** Parses and checks a webhook URL's form and its allowlist entry (no DNS). */
export function parseWebhookUrl(
  text: string,
  allow: readonly string[],
): { ok: true; url: URL; entry: URL } | { ok: false; reason: string } {
  if (text.length > MAX_WEBHOOK_URL_CHARS)
    return { ok: false, reason: `is longer than ${MAX_WEBHOOK_URL_CHARS} characters` };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, reason: "is not an absolute URL" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { ok: false, reason: "must be http or https" };
  if (url.username || url.password) return { ok: false, reason: "must not carry credentials" };
  const entry = allowedEntry(url, allow);
  if (!entry) return { ok: false, reason: "is not in the webhooks allowlist (warrant.config.json webhooks.allow)" };
  return { ok: true, url, entry };
}

export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

/** The full check: form, allowlist, and every resolved address public or listed by itself. */
export async function checkDestination(
  text: string,
  allow: readonly string[],
  resolve: Resolver = systemResolver,
): Promise<DestinationCheck> {
  const parsed = parseWebhookUrl(text, allow);
  if (!parsed.ok) return parsed;
  const host = hostOf(parsed.url);
  let addresses: { address: string; family: number }[];
  if (isIP(host) !== 0) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await resolve(host);
    } catch {
      return { ok: false, reason: "its host does not resolve" };
    }
  }
  if (addresses.length === 0) return { ok: false, reason: "its host does not resolve" };
  const listed = isIP(hostOf(parsed.entry)) !== 0 ? canonicalAddress(hostOf(parsed.entry)) : undefined;
  for (const { address } of addresses) {
    if (isPublicAddress(address)) continue;
    if (listed !== undefined && canonicalAddress(address) === listed) continue;
    return {
      ok: false,
      reason: "resolves to a loopback, private or link-local address that the allowlist does not name",
    };
  }
  const first = addresses[0] as { address: string; family: number };
  return { ok: true, destination: { url: parsed.url, address: first.address, family: first.family === 6 ? 6 : 4 } };
}
