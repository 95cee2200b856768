/**
 * The checkpoint serializer: LangGraph's `JsonPlusSerializer`, with a fast
 * path for plain data. Most of what a tool step stores (statuses, decisions,
 * ledger rows, usage, call results) is plain JSON data, for which the stock
 * serializer still walks the value twice in JavaScript (a cycle check, then
 * `JSON.stringify` with a replacer called for every key). For plain data
 * that replacer changes nothing, so the bytes are the same as a bare
 * `JSON.stringify`, which is what the fast path sends; anything else (class
 * instances such as messages, `undefined`, Maps, bytes, cycles) takes the
 * stock path unchanged. Reading is the stock reader, so stored checkpoints
 * are readable by any `PostgresSaver`.
 */
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";

/** Deeper than this, the stock path decides (it also handles cycles, which never end). */
const PLAIN_DEPTH_LIMIT = 64;

/**
 * Whether `JSON.stringify(value)` gives what the stock replacer gives: only
 * null, booleans, numbers, strings, dense arrays and plain objects (prototype
 * `Object.prototype` or null), no `undefined` anywhere (the stock serializer
 * keeps it as a record), and no object the replacer rewrites (`lg_name`).
 * Symbol keys and non-enumerable properties are left out by both.
 */
export function isPlainJson(value: unknown, depth = 0): boolean {
  if (value === null) return true;
  switch (typeof value) {
    case "string":
    case "boolean":
    case "number":
      return true;
    case "object":
      break;
    default:
      return false;
  }
  if (depth >= PLAIN_DEPTH_LIMIT) return false;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index += 1) {
      if (!(index in value) || !isPlainJson(value[index], depth + 1)) return false;
    }
    return true;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return false;
  const record = value as Record<string, unknown>;
  if (Object.hasOwn(record, "lg_name")) return false;
  for (const key in record) {
    if (!isPlainJson(record[key], depth + 1)) return false;
  }
  return true;
}

const encoder = new TextEncoder();

export class WarrantSerializer extends JsonPlusSerializer {
  protected override _dumps(obj: unknown): Uint8Array {
    if (isPlainJson(obj)) return encoder.encode(JSON.stringify(obj));
    return super._dumps(obj);
  }

  /** `dumpsTyped` without the promise (the stock one is async but never waits). */
  dumpsTypedSync(obj: unknown): [string, Uint8Array] {
    return obj instanceof Uint8Array ? ["bytes", obj] : ["json", this._dumps(obj)];
  }
}
