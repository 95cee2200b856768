/**
 * Is this text safe to store and show? Postgres `text` rejects NUL (22021)
 * and `jsonb` rejects `\u0000` and lone surrogates (22P05); a terminal or a
 * log shows control characters as commands; bidi and zero-width characters
 * make two different identifiers look the same. Everything a model or a
 * client sends passes one of these checks before it is stored.
 *
 * A leaf module: no imports, so the HTTP schemas, the planners and the
 * stores can all use it.
 */

/** Why a piece of text was refused, e.g. `contains U+0000`. */
export type UnsafeReason = string;

const TAB = 0x09;
const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/** Code points that change how text is displayed without being visible: bidi controls, zero-width and other invisible format characters. */
function isInvisibleFormat(code: number): boolean {
  return (
    code === 0x00ad || // soft hyphen
    code === 0x061c || // Arabic letter mark (bidi)
    code === 0x180e || // Mongolian vowel separator
    (code >= 0x200b && code <= 0x200f) || // zero-width space/joiners, LRM, RLM
    (code >= 0x2028 && code <= 0x202e) || // line/paragraph separators, bidi embeddings and overrides
    (code >= 0x2060 && code <= 0x206f) || // word joiner, invisible operators, bidi isolates
    code === 0xfeff // zero-width no-break space (BOM)
  );
}

function hex(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * Walks `text` by code point and returns the first code point `refuse`
 * flags, or a lone surrogate, as a reason; undefined when none.
 */
function firstUnsafe(text: string, refuse: (code: number) => boolean): UnsafeReason | undefined {
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = index + 1 < text.length ? text.charCodeAt(index + 1) : 0;
      if (next >= 0xdc00 && next <= 0xdfff) {
        index += 1; // a well-formed pair: an astral code point, always allowed
        continue;
      }
      return `contains a lone surrogate (${hex(unit)})`;
    }
    if (unit >= 0xdc00 && unit <= 0xdfff) return `contains a lone surrogate (${hex(unit)})`;
    if (refuse(unit)) return `contains ${hex(unit)}`;
  }
  return undefined;
}

/** NUL and C0 controls other than tab, line feed and carriage return. */
function isStoredControl(code: number): boolean {
  return code < 0x20 && code !== TAB && code !== LINE_FEED && code !== CARRIAGE_RETURN;
}

/** Any C0 or C1 control (tab and newlines included) and DEL. */
function isAnyControl(code: number): boolean {
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
}

/**
 * Why free text (a message, a metadata value, an answer) cannot be stored
 * and displayed as is: NUL or another C0 control other than `\t\n\r`, or a
 * lone surrogate. Undefined when it can.
 */
export function unsafeTextReason(text: string): UnsafeReason | undefined {
  return firstUnsafe(text, isStoredControl);
}

export function isStorableText(text: string): boolean {
  return unsafeTextReason(text) === undefined;
}

/**
 * Why an identifier (a metadata key, a tool name, a call id, a checkpoint
 * id) is refused: anything {@link unsafeTextReason} refuses, plus every
 * C0/C1 control (tabs and newlines too), DEL, and bidi or zero-width
 * characters, which let two different ids look the same. Undefined when fine.
 */
export function unsafeKeyReason(text: string): UnsafeReason | undefined {
  return firstUnsafe(text, (code) => isAnyControl(code) || isInvisibleFormat(code));
}

export function isSafeKey(text: string): boolean {
  return unsafeKeyReason(text) === undefined;
}

/**
 * The text with every character {@link unsafeKeyReason} would refuse
 * written as a visible `\u{…}` escape: for quoting untrusted text in an
 * error message, an audit row or a log line (always storable, and what
 * was there stays visible). Tabs and newlines are escaped too.
 */
export function escapeUnsafe(text: string): string {
  if (isSafeKey(text)) return text;
  return mapUnits(text, (unit, lone) =>
    lone || isAnyControl(unit) || isInvisibleFormat(unit) ? `\\u{${unit.toString(16)}}` : undefined,
  );
}

/**
 * Free text made storable: each NUL, other C0 control (but `\t\n\r`) and
 * lone surrogate becomes U+FFFD. For model prose (answers, reasons) that
 * must not fail a run, whose meaning survives the replacement.
 */
export function replaceUnstorable(text: string): string {
  if (isStorableText(text)) return text;
  return mapUnits(text, (unit, lone) => (lone || isStoredControl(unit) ? "\ufffd" : undefined));
}

/**
 * Rewrites a string one UTF-16 unit at a time: surrogate pairs pass through
 * whole; `replace` sees every other unit (`lone` for an unpaired surrogate)
 * and returns its replacement, or undefined to keep it.
 */
function mapUnits(text: string, replace: (unit: number, lone: boolean) => string | undefined): string {
  let result = "";
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = index + 1 < text.length ? text.charCodeAt(index + 1) : 0;
      if (next >= 0xdc00 && next <= 0xdfff) {
        result += text.slice(index, index + 2);
        index += 1;
        continue;
      }
    }
    result += replace(unit, unit >= 0xd800 && unit <= 0xdfff) ?? text.charAt(index);
  }
  return result;
}

/** Where in a JSON value something unsafe was found, and why. */
export interface UnsafeJson {
  /** Keys and indexes from the root, e.g. `["foo", 0]`. */
  path: (string | number)[];
  reason: UnsafeReason;
}

/**
 * Checks a parsed JSON value without recursion: every object key is a safe
 * key, every string is storable text, and nothing nests deeper than
 * `maxDepth` objects or arrays (the root object is depth 1). Returns the
 * first problem, or undefined.
 */
export function findUnsafeJson(root: unknown, maxDepth: number): UnsafeJson | undefined {
  const pending: { value: unknown; path: (string | number)[]; depth: number }[] = [{ value: root, path: [], depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, path, depth } = next;
    if (typeof value === "string") {
      const reason = unsafeTextReason(value);
      if (reason) return { path, reason };
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    if (depth + 1 > maxDepth) return { path, reason: `nests deeper than ${maxDepth} levels` };
    if (Array.isArray(value)) {
      for (const [index, item] of value.entries())
        pending.push({ value: item, path: [...path, index], depth: depth + 1 });
      continue;
    }
    for (const [key, item] of Object.entries(value)) {
      const reason = unsafeKeyReason(key);
      if (reason) return { path: [...path, escapeUnsafe(key)], reason: `has a key that ${reason}` };
      pending.push({ value: item, path: [...path, key], depth: depth + 1 });
    }
  }
  return undefined;
}

/**
 * How deeply the JSON text nests objects and arrays, read without parsing
 * or recursion (brackets inside strings do not count). Stops counting at
 * `limit + 1`, so a huge input costs one pass at most.
 */
export function jsonTextDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text.charCodeAt(index);
    if (inString) {
      if (char === 0x5c)
        index += 1; // backslash: skip the escaped character
      else if (char === 0x22) inString = false;
      continue;
    }
    if (char === 0x22) inString = true;
    else if (char === 0x7b || char === 0x5b) {
      depth += 1;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (char === 0x7d || char === 0x5d) depth -= 1;
  }
  return deepest;
}
