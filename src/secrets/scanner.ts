/**
 * Secrets stay out (issue 11, item 2). A scanner finds secret-shaped values
 * (API keys, bearer tokens, JWTs, private-key blocks, cloud keys, and the
 * deployment's own patterns from `warrant.config.json` `secrets.patterns`)
 * in text and in JSON values, and the values of fields a contract marks
 * `sensitive`, and replaces each with a redaction marker.
 *
 * The marker is `[redacted:<kind>:<12 hex>]`, the hex being a prefix of
 * HMAC-SHA256(key, value) under a per-deployment key. Why a keyed HMAC and
 * not a counter: the same value gives the same marker in every run and every
 * process that shares the key, without keeping a table from values to
 * markers (which would itself hold the secrets), so fingerprints, repeat
 * detection and approval bindings still work on redacted arguments. Without
 * the key a marker cannot be checked against guesses, so even a short
 * sensitive value (a PIN) is not revealed by a dump of the database; the key
 * is never stored there.
 *
 * Pure: no I/O. Every scan is linear in the input per pattern (the built-in
 * patterns have no nested quantifiers); markers already in the text are left
 * as they are, so redacting twice changes nothing.
 */
import { createHmac } from "node:crypto";

/** Built-in secret shapes, by kind. Conservative: each has a fixed prefix or structure, so ordinary prose does not match. */
export const BUILTIN_SECRET_PATTERNS: Readonly<Record<string, string>> = {
  private_key:
    "-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\\s\\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)",
  jwt: "\\beyJ[A-Za-z0-9_-]{6,}\\.eyJ[A-Za-z0-9_-]{6,}\\.[A-Za-z0-9_-]*",
  bearer_token: "\\b[Bb]earer[ \\t]+[A-Za-z0-9._~+/-]{16,}=*",
  // OpenAI/Anthropic style `sk-…` (also `sk-proj-…`, `sk-ant-…`), GitHub, Slack and Google API keys.
  api_key:
    "\\bsk-[A-Za-z0-9_-]{16,}|\\bgh[pousr]_[A-Za-z0-9]{30,}|\\bxox[abprs]-[A-Za-z0-9-]{10,}|\\bAIza[0-9A-Za-z_-]{35}",
  // AWS access key ids, and a secret access key written next to its name.
  aws_key: "\\b(?:AKIA|ASIA)[0-9A-Z]{16}\\b|\\baws_secret_access_key[\"']?\\s*[:=]\\s*[\"']?[A-Za-z0-9/+=]{40}",
};

/**
 * Credentials this process holds whose shape no pattern knows (an opaque
 * OAuth access or refresh token, a client secret, a PKCE verifier): every
 * scanner of the process redacts them by value. The host remembers each
 * one as it obtains it (src/oauth/provider.ts). Bounded: the oldest is
 * forgotten first; shorter than {@link MIN_KNOWN_CHARS} is not remembered
 * (it would redact ordinary words).
 */
const known = new Map<string, string>();
const MAX_KNOWN = 1_024;
export const MIN_KNOWN_CHARS = 12;

/** Redacts `value` as `kind` wherever any scanner of this process sees it. */
export function rememberSecret(kind: string, value: string | undefined): void {
  if (value === undefined || value.length < MIN_KNOWN_CHARS || !SECRET_KIND.test(kind)) return;
  known.delete(value);
  known.set(value, kind);
  if (known.size > MAX_KNOWN) known.delete(known.keys().next().value ?? "");
}

/** Kind names of configured patterns: they appear in markers and audit events. */
export const SECRET_KIND = /^[a-z][a-z0-9_]{0,31}$/;

/** Kind of a value redacted because its field is marked `sensitive`. */
export const SENSITIVE_KIND = "sensitive";
/** Kind of a subtree nested deeper than the scanner walks: replaced whole (fail closed). */
export const UNSCANNED_KIND = "unscanned";

/** A redaction marker anywhere in a text. */
export const MARKER_PATTERN = /\[redacted:[a-z][a-z0-9_]{0,31}:[0-9a-f]{12}\]/g;

/** Objects and arrays nested deeper than this are replaced whole (LangGraph refuses over 50 anyway). */
export const MAX_SCAN_DEPTH = 64;
const MAX_PATH_SEGMENT = 64;

/** Where one redaction happened: never the value, only its place, its kind and its marker. */
export interface Redaction {
  /** E.g. `arguments.query`, `result.structuredContent.notes[0].text`, `result.content[0].text`. */
  path: string;
  kind: string;
  marker: string;
}

export interface Redacted<T> {
  value: T;
  found: Redaction[];
}

export interface SecretScanner {
  /** The text with every secret-shaped span replaced by its marker. */
  text(text: string, path: string): Redacted<string>;
  /**
   * A JSON value with every string (object keys too) scanned, and the
   * values of `sensitive` field names (at any depth) replaced whole.
   */
  value<T>(value: T, path: string, sensitive?: readonly string[]): Redacted<T>;
  /** The marker of `value` as a `kind` (stable for one key). */
  marker(kind: string, value: string): string;
}

export interface ScannerOptions {
  /** The per-deployment marker key (at least 16 bytes). */
  key: Uint8Array;
  /** Extra patterns by kind (regular-expression source), added to the built-in ones; a configured kind replaces a built-in one. */
  patterns?: Readonly<Record<string, string>>;
}

interface Span {
  start: number;
  end: number;
  kind: string;
}

/** Compiles and checks patterns; throws on an invalid kind or pattern, or one that matches the empty string. */
export function compilePatterns(patterns: Readonly<Record<string, string>>): { kind: string; regex: RegExp }[] {
  return Object.entries(patterns).map(([kind, source]) => {
    if (!SECRET_KIND.test(kind)) throw new Error(`secret kind "${kind}" must match ${SECRET_KIND.source}`);
    const regex = new RegExp(source, "g");
    if (regex.test("")) throw new Error(`secret pattern "${kind}" matches the empty string`);
    return { kind, regex };
  });
}

export function createSecretScanner(options: ScannerOptions): SecretScanner {
  if (options.key.byteLength < 16) throw new Error("the redaction key must be at least 16 bytes");
  const key = Buffer.from(options.key);
  const patterns = compilePatterns({ ...BUILTIN_SECRET_PATTERNS, ...options.patterns });

  const marker = (kind: string, value: string): string =>
    `[redacted:${kind}:${createHmac("sha256", key).update(value, "utf8").digest("hex").slice(0, 12)}]`;

  /** Secret spans of a text with no marker in it, overlapping matches merged into one span. */
  const spansOf = (text: string): Span[] => {
    const spans: Span[] = [];
    for (const { kind, regex } of patterns) {
      regex.lastIndex = 0;
      for (let match = regex.exec(text); match !== null; match = regex.exec(text)) {
        if (match[0].length === 0) {
          regex.lastIndex += 1;
          continue;
        }
        spans.push({ start: match.index, end: match.index + match[0].length, kind });
      }
    }
    for (const [value, kind] of known)
      for (let at = text.indexOf(value); at !== -1; at = text.indexOf(value, at + value.length))
        spans.push({ start: at, end: at + value.length, kind });
    // Overlapping shapes (a JWT inside `Bearer …`, a key inside a key block) become one span, so no part of either is left.
    spans.sort((a, b) => a.start - b.start || b.end - a.end);
    const merged: Span[] = [];
    for (const span of spans) {
      const last = merged.at(-1);
      if (last && span.start < last.end) last.end = Math.max(last.end, span.end);
      else merged.push({ ...span });
    }
    return merged;
  };

  const redactSegment = (segment: string, path: string, found: Redaction[]): string => {
    const spans = spansOf(segment);
    if (spans.length === 0) return segment;
    let out = "";
    let at = 0;
    for (const span of spans) {
      const replacement = marker(span.kind, segment.slice(span.start, span.end));
      found.push({ path, kind: span.kind, marker: replacement });
      out += segment.slice(at, span.start) + replacement;
      at = span.end;
    }
    return out + segment.slice(at);
  };

  const text = (input: string, path: string, found: Redaction[]): string => {
    if (input.length === 0) return input;
    // Markers already there stay as they are: the text between them is scanned piece by piece.
    let out = "";
    let at = 0;
    for (const existing of input.matchAll(MARKER_PATTERN)) {
      out += redactSegment(input.slice(at, existing.index), path, found) + existing[0];
      at = existing.index + existing[0].length;
    }
    return out + redactSegment(input.slice(at), path, found);
  };

  const walk = (
    value: unknown,
    path: string,
    depth: number,
    sensitive: ReadonlySet<string>,
    found: Redaction[],
  ): unknown => {
    if (typeof value === "string") return text(value, path, found);
    if (value === null || typeof value !== "object") return value;
    if (depth >= MAX_SCAN_DEPTH) {
      const replacement = marker(UNSCANNED_KIND, safeStringify(value));
      found.push({ path, kind: UNSCANNED_KIND, marker: replacement });
      return replacement;
    }
    if (Array.isArray(value))
      return value.map((item, index) => walk(item, `${path}[${index}]`, depth + 1, sensitive, found));
    const out: Record<string, unknown> = {};
    for (const [rawKey, item] of Object.entries(value)) {
      // A key can be a secret too: it is replaced like any other text, and the path names only its marker.
      const entryKey = text(rawKey, `${path}.{key}`, found);
      const entryPath = `${path}${pathSegment(entryKey)}`;
      let entry: unknown;
      if (sensitive.has(rawKey) && item !== undefined && item !== null && !isMarker(item)) {
        entry = marker(SENSITIVE_KIND, typeof item === "string" ? item : safeStringify(item));
        found.push({ path: entryPath, kind: SENSITIVE_KIND, marker: entry as string });
      } else {
        entry = walk(item, entryPath, depth + 1, sensitive, found);
      }
      // defineProperty: a `__proto__` key from JSON stays an own property instead of changing the prototype.
      Object.defineProperty(out, entryKey, { value: entry, enumerable: true, writable: true, configurable: true });
    }
    return out;
  };

  return {
    marker,
    text(input, path) {
      const found: Redaction[] = [];
      return { value: text(input, path, found), found };
    },
    value<T>(input: T, path: string, sensitive: readonly string[] = []): Redacted<T> {
      const found: Redaction[] = [];
      const value = walk(input, path, 0, new Set(sensitive), found);
      // Unchanged input is returned as it was (same object), so callers can tell nothing was found.
      return found.length === 0 ? { value: input, found } : { value: value as T, found };
    },
  };
}

function isMarker(value: unknown): boolean {
  return typeof value === "string" && value.replace(MARKER_PATTERN, "") === "" && value.length > 0;
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return "";
  }
}

/** A path step for a key: `.name` for identifier-like keys, else `["…"]` (quoted, escaped and cut to 64 characters). */
function pathSegment(key: string): string {
  if (/^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/.test(key)) return `.${key}`;
  return `[${JSON.stringify(key.slice(0, MAX_PATH_SEGMENT))}]`;
}

/**
 * The markers already in a value (strings and keys), with their paths: what
 * an earlier edge (the API's resume intake) redacted, for the audit of a
 * later one that knows the run.
 */
export function markersIn(value: unknown, path: string, depth = 0): Redaction[] {
  if (typeof value === "string") {
    return [...value.matchAll(MARKER_PATTERN)].map((match) => ({
      path,
      kind: match[0].slice("[redacted:".length, match[0].lastIndexOf(":")),
      marker: match[0],
    }));
  }
  if (value === null || typeof value !== "object" || depth >= MAX_SCAN_DEPTH) return [];
  if (Array.isArray(value)) return value.flatMap((item, index) => markersIn(item, `${path}[${index}]`, depth + 1));
  return Object.entries(value).flatMap(([key, item]) => [
    ...markersIn(key, `${path}.{key}`, depth + 1),
    ...markersIn(item, `${path}${pathSegment(key)}`, depth + 1),
  ]);
}

/**
 * The marker key of a deployment, derived from its API signing secret
 * (`WARRANT_AUTH_SECRET` or `<dataDir>/auth-secret`): every process of one
 * deployment gets the same markers, the key is never stored anywhere, and it
 * reveals nothing of the signing secret.
 */
export function redactionKeyFrom(secret: Uint8Array): Uint8Array {
  return new Uint8Array(createHmac("sha256", Buffer.from(secret)).update("warrant/redaction-markers/v1").digest());
}

/** At most this many locations are named in one audit event (the count is always exact). */
export const MAX_REPORTED_REDACTIONS = 20;

/** The audit detail of a set of redactions: where, what kind, which marker; never a value. */
export function redactionDetail(where: string, found: readonly Redaction[]): string {
  return JSON.stringify({ where, count: found.length, redactions: found.slice(0, MAX_REPORTED_REDACTIONS) });
}
