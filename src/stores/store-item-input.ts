/**
 * What a client (or a graph node) may name in the store: namespaces, keys,
 * values and search filters, bounded and checked like every other input.
 * Postgres refuses `\u0000` and lone surrogates in text and jsonb, so they are
 * refused here, by path, before anything reaches SQL.
 */
import { findUnsafeJson, unsafeTextReason } from "../policy/safe-text.js";
import type { StoreInputProblem } from "../errors.js";

/** Labels a client may name below its own prefix. */
export const MAX_CLIENT_DEPTH = 8;
export const MAX_LABEL_CHARS = 128;
export const MAX_KEY_CHARS = 256;
/** A value's JSON text, in UTF-16 code units. */
export const MAX_VALUE_CHARS = 64 * 1024;
export const MAX_VALUE_DEPTH = 32;
export const MAX_FILTER_KEYS = 16;

type Checked<T> = { ok: true; value: T } | { ok: false; problem: StoreInputProblem };

const refuse = (path: string, reason: string): { ok: false; problem: StoreInputProblem } => ({
  ok: false,
  problem: { path, reason },
});

/** A label: non-empty text without `.` (the SDK's separator) or `:` (the table's), within bounds, storable. */
export function checkLabel(label: unknown, path: string): StoreInputProblem | undefined {
  if (typeof label !== "string") return { path, reason: "must be a string" };
  if (label.length === 0) return { path, reason: "must not be empty" };
  if (label.length > MAX_LABEL_CHARS) return { path, reason: `is longer than ${MAX_LABEL_CHARS} characters` };
  if (label.includes(".") || label.includes(":")) return { path, reason: "must not contain '.' or ':'" };
  const unsafe = unsafeTextReason(label);
  if (unsafe) return { path, reason: unsafe };
  // Control characters are unreadable in a listing and never needed in a name.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find them.
  if (/[\u0000-\u001f\u007f]/.test(label)) return { path, reason: "must not contain control characters" };
  return undefined;
}

/** A namespace as the client names it (without the server's prefix). */
export function checkNamespace(value: unknown, path: string, options: { allowEmpty: boolean }): Checked<string[]> {
  if (!Array.isArray(value)) return refuse(path, "must be an array of strings");
  if (value.length === 0 && !options.allowEmpty) return refuse(path, "must name at least one label");
  if (value.length > MAX_CLIENT_DEPTH) return refuse(path, `has more than ${MAX_CLIENT_DEPTH} labels`);
  for (const [index, label] of value.entries()) {
    const problem = checkLabel(label, `${path}.${index}`);
    if (problem) return { ok: false, problem };
  }
  return { ok: true, value: value as string[] };
}

/** A key: non-empty text within bounds, storable. */
export function checkKey(value: unknown, path = "key"): Checked<string> {
  if (typeof value !== "string") return refuse(path, "must be a string");
  if (value.length === 0) return refuse(path, "must not be empty");
  if (value.length > MAX_KEY_CHARS) return refuse(path, `is longer than ${MAX_KEY_CHARS} characters`);
  const unsafe = unsafeTextReason(value);
  if (unsafe) return refuse(path, unsafe);
  return { ok: true, value };
}

/** A value: a JSON object (LangGraph's items are dicts), bounded in depth and size, every string storable. */
export function checkValue(value: unknown, path = "value"): Checked<Record<string, unknown>> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return refuse(path, "must be an object");
  const unsafe = findUnsafeJson(value, MAX_VALUE_DEPTH);
  if (unsafe) return refuse([path, ...unsafe.path].join("."), unsafe.reason);
  const text = JSON.stringify(value);
  if (text.length > MAX_VALUE_CHARS) return refuse(path, `is larger than ${MAX_VALUE_CHARS} characters as JSON`);
  return { ok: true, value: value as Record<string, unknown> };
}

/**
 * A search filter: `{field: value}` pairs matched by equality (jsonb
 * containment). The reference's operators (`$gt`, `$ne`, …) are refused by
 * name rather than read as a field called `$gt`.
 */
export function checkFilter(value: unknown, path = "filter"): Checked<Record<string, unknown> | undefined> {
  if (value === undefined || value === null) return { ok: true, value: undefined };
  if (typeof value !== "object" || Array.isArray(value)) return refuse(path, "must be an object");
  const entries = Object.entries(value);
  if (entries.length > MAX_FILTER_KEYS) return refuse(path, `has more than ${MAX_FILTER_KEYS} keys`);
  const unsafe = findUnsafeJson(value, 8);
  if (unsafe) return refuse([path, ...unsafe.path].join("."), unsafe.reason);
  for (const [key, item] of entries) {
    if (key.startsWith("$")) return refuse(`${path}.${key}`, "filter operators are not supported (equality only)");
    if (item !== null && typeof item === "object") {
      const operator = Object.keys(item).find((inner) => inner.startsWith("$"));
      if (operator !== undefined)
        return refuse(`${path}.${key}.${operator}`, "filter operators are not supported (equality only)");
    }
  }
  if (JSON.stringify(value).length > 4096) return refuse(path, "is larger than 4096 characters as JSON");
  return { ok: true, value: value as Record<string, unknown> };
}
