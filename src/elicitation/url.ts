/**
 * The URL of a URL-mode elicitation (MCP 2025-11-25 `mode: "url"`), checked
 * before anyone sees it: https only (http only for a loopback host, for tests
 * and local development), no user or password in it, at most
 * `MAX_URL_LENGTH` characters, no control, space or bidi-override characters,
 * a host that parses. The owner is shown the full URL and its host; nothing
 * here fetches it.
 */
import type { RuntimeErrorCode } from "../errors.js";

/** The code a refused URL is recorded with, and the server's error carries. */
export const URL_REFUSED: RuntimeErrorCode = "elicitation_url_refused";

export const MAX_URL_LENGTH = 2_048;

export type UrlCheck = { ok: true; url: string; host: string } | { ok: false; reason: string };

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** C0/C1 controls, whitespace, and the invisible or reordering characters a URL could hide its host behind. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const HIDDEN = /[\u0000-\u0020\u007f-\u009f\u00a0\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/u;

/** Checks a URL a server asks the owner to open. */
export function checkElicitationUrl(value: unknown): UrlCheck {
  if (typeof value !== "string" || value === "") return { ok: false, reason: "no url" };
  if (value.length > MAX_URL_LENGTH) return { ok: false, reason: `longer than ${MAX_URL_LENGTH} characters` };
  if (HIDDEN.test(value)) return { ok: false, reason: "control or invisible characters" };
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return { ok: false, reason: "not a url" };
  }
  if (parsed.username !== "" || parsed.password !== "" || /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(value))
    return { ok: false, reason: "credentials in the url" };
  if (parsed.protocol === "http:" && !LOOPBACK.has(parsed.hostname))
    return { ok: false, reason: "http is allowed for a loopback host only" };
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:")
    return { ok: false, reason: `scheme ${parsed.protocol} is not allowed` };
  if (parsed.hostname === "") return { ok: false, reason: "no host" };
  return { ok: true, url: parsed.href, host: parsed.host };
}
