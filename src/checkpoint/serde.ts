/**
 * The checkpoint serializer: LangGraph's `JsonPlusSerializer`, with a fast
 * path for data that is plain JSON once `toJSON` has run. Most of what a
 * tool step stores (statuses, decisions, ledger rows, usage, call results,
 * and messages, whose `toJSON` gives plain data) is such data, for which the
 * stock serializer still walks the value twice in JavaScript (a cycle check,
 * then `JSON.stringify` with a replacer called for every key). For it that
 * replacer changes nothing, so the bytes are those of a bare
 * `JSON.stringify`, which is what the fast path sends; anything else
 * (`undefined`, Maps, Sets, bytes, errors, cycles, class instances without
 * `toJSON`) takes the stock path unchanged. Reading is the stock reader, so
 * stored checkpoints are readable by any `PostgresSaver`.
 */
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";

/** Deeper than this, the stock path decides (it also handles cycles, which never end). */
const PLAIN_DEPTH_LIMIT = 64;

/** What `plainForm` answers for a value the stock replacer would rewrite. */
const NOT_PLAIN: unique symbol = Symbol("not plain");

/**
 * `value` as `JSON.stringify` sees it (each object's `toJSON` applied, with
 * its key, as JSON.stringify calls it), when that is plain data: null,
 * booleans, numbers, strings, dense arrays and plain objects (prototype
 * `Object.prototype` or null), with no `undefined` anywhere (the stock
 * serializer keeps it as a record) and no object the replacer rewrites
 * (`lg_name`). Otherwise `NOT_PLAIN`. Unchanged parts are returned as they
 * are; a part that held a `toJSON` object is copied. Symbol keys and
 * non-enumerable properties are left out by both serializers.
 */
function plainForm(value: unknown, key: string, depth: number, converted = false): unknown {
  if (value === null) return null;
  switch (typeof value) {
    case "string":
    case "boolean":
    case "number":
      return value;
    case "object":
      break;
    default:
      return NOT_PLAIN;
  }
  if (depth >= PLAIN_DEPTH_LIMIT) return NOT_PLAIN;
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === "function") {
    // JSON.stringify calls toJSON once, on the value itself, never on what it returns.
    if (converted) return NOT_PLAIN;
    return plainForm(toJSON.call(value, key), key, depth, true);
  }
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index += 1) {
      if (!(index in value)) return NOT_PLAIN;
      const item: unknown = value[index];
      const form = plainForm(item, String(index), depth + 1);
      if (form === NOT_PLAIN) return NOT_PLAIN;
      if (form !== item && copy === undefined) copy = value.slice(0, index);
      copy?.push(form);
    }
    return copy ?? value;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return NOT_PLAIN;
  const record = value as Record<string, unknown>;
  if (Object.hasOwn(record, "lg_name")) return NOT_PLAIN;
  let copy: Record<string, unknown> | undefined;
  for (const field in record) {
    const item = record[field];
    const form = plainForm(item, field, depth + 1);
    if (form === NOT_PLAIN) return NOT_PLAIN;
    if (form !== item && copy === undefined) copy = { ...record };
    if (copy) copy[field] = form;
  }
  return copy ?? value;
}

/** Whether the fast path takes `value` (JSON.stringify gives the stock serializer's bytes). */
export function isPlainJson(value: unknown): boolean {
  return plainForm(value, "", 0) !== NOT_PLAIN;
}

const encoder = new TextEncoder();

export class WarrantSerializer extends JsonPlusSerializer {
  protected override _dumps(obj: unknown): Uint8Array {
    const form = plainForm(obj, "", 0);
    if (form !== NOT_PLAIN) return encoder.encode(JSON.stringify(form));
    return super._dumps(obj);
  }

  /** `dumpsTyped` without the promise (the stock one is async but never waits). */
  dumpsTypedSync(obj: unknown): [string, Uint8Array] {
    return obj instanceof Uint8Array ? ["bytes", obj] : ["json", this._dumps(obj)];
  }
}
