/**
 * Strict parsing of the argument text a planner proposed. Planners pass the
 * text through untouched; `authorize` calls this and turns a failure into a
 * repairable `invalid_arguments` observation for the model.
 */
import { escapeUnsafe, findUnsafeJson, jsonTextDepth } from "./safe-text.js";

/** Largest argument text accepted, in UTF-8 bytes (64 KiB). */
export const MAX_ARGUMENT_BYTES = 64 * 1024;

/**
 * Deepest nesting of objects and arrays accepted (the arguments object is
 * level 1). Parsed arguments are checkpointed inside the AI message and the
 * decisions, about ten levels below the root of what LangGraph serializes,
 * and its deserializer refuses anything deeper than 50 levels: 64 nested
 * levels made a thread unreadable for good. 16 leaves a wide margin for
 * those wrappers (and for the approval payload around an action) while no
 * tool schema we know needs more than four.
 */
export const MAX_ARGUMENT_DEPTH = 16;

/** Longest parser detail copied into a failure message, so observations stay short. */
const MAX_DETAIL_LENGTH = 160;

export type ParsedArguments =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; code: "invalid_arguments"; message: string };

/**
 * Parses tool-call argument text strictly.
 *
 * Accepts only a JSON object at the top level (not an array, string, number,
 * boolean or `null`), at most {@link MAX_ARGUMENT_BYTES} bytes and
 * {@link MAX_ARGUMENT_DEPTH} levels deep (measured on the text, before
 * anything recursive sees it), whose strings are storable text (no NUL or
 * other C0 control but `\t\n\r`, no lone surrogate) and whose keys are safe
 * identifiers (no control, bidi or zero-width character, no `__proto__`).
 * Nothing is repaired or guessed: truncated or otherwise invalid JSON fails.
 *
 * Duplicate keys follow `JSON.parse`: the last occurrence wins. That is safe
 * because the parsed value, never the raw text, is what gets checked and
 * executed, so no two readers can see different values.
 *
 * @param raw The argument text exactly as the model sent it.
 * @returns The parsed object, or an `invalid_arguments` failure with a one-line reason.
 */
export function parseToolArguments(raw: string): ParsedArguments {
  const size = byteLength(raw);
  if (size > MAX_ARGUMENT_BYTES) {
    return failure(`arguments are ${size} bytes; the limit is ${MAX_ARGUMENT_BYTES}`);
  }
  const depth = jsonTextDepth(raw, MAX_ARGUMENT_DEPTH);
  if (depth > MAX_ARGUMENT_DEPTH) {
    return failure(`arguments nest deeper than ${MAX_ARGUMENT_DEPTH} levels`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    return failure(`arguments are not valid JSON: ${describeParseError(error)}`);
  }
  if (!isPlainObject(parsed)) {
    return failure(`arguments must be a JSON object, got ${describeJsonType(parsed)}`);
  }
  if (containsProtoKey(parsed)) {
    return failure(`arguments must not contain the key "__proto__"`);
  }
  const unsafe = findUnsafeJson(parsed, MAX_ARGUMENT_DEPTH);
  if (unsafe) {
    const where = unsafe.path.length > 0 ? `argument "${unsafe.path.join(".")}"` : "arguments";
    return failure(`${where} ${unsafe.reason}`);
  }
  return { ok: true, value: parsed };
}

function failure(message: string): ParsedArguments {
  return { ok: false, code: "invalid_arguments", message };
}

function byteLength(text: string): number {
  // Each UTF-16 unit is at least one UTF-8 byte, so a string this long is already over.
  if (text.length > MAX_ARGUMENT_BYTES) return text.length;
  return Buffer.byteLength(text, "utf8");
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describeJsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

function describeParseError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const oneLine = message.replace(/\s+/g, " ").trim();
  const short = oneLine.length > MAX_DETAIL_LENGTH ? `${oneLine.slice(0, MAX_DETAIL_LENGTH)}…` : oneLine;
  // V8 quotes the offending input in its message (and the cut may split a pair): escape what cannot be stored or shown.
  return escapeUnsafe(short);
}

/**
 * `JSON.parse` stores `__proto__` as an ordinary own property, so parsing
 * itself pollutes nothing; but a later `Object.assign` or deep merge would
 * treat it as the prototype setter. It is never a legitimate argument name,
 * so it is rejected outright. Walks iteratively: 64 KiB of `[` nests deeper
 * than a recursive walk can safely go.
 */
function containsProtoKey(root: Record<string, unknown>): boolean {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current !== "object" || current === null) continue;
    if (Array.isArray(current)) {
      for (const item of current) pending.push(item);
      continue;
    }
    for (const key of Object.keys(current)) {
      if (key === "__proto__") return true;
      pending.push((current as Record<string, unknown>)[key]);
    }
  }
  return false;
}
