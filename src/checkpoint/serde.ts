/**
 * The checkpoint serializer: LangGraph's `JsonPlusSerializer`, composed
 * behind the public `SerializerProtocol` (nothing of it overridden), with a
 * fast path for data that is plain JSON once `toJSON` has run. Most of what a
 * tool step stores (statuses, decisions, ledger rows, usage, call results,
 * and messages, whose `toJSON` gives plain data) is such data, for which the
 * stock serializer still walks the value twice in JavaScript (a cycle check,
 * then `JSON.stringify` with a replacer called for every key). For it that
 * replacer changes nothing, so the bytes are those of a bare
 * `JSON.stringify`, which is what the fast path sends; anything else
 * (`undefined`, Maps, Sets, errors, cycles, class instances without
 * `toJSON`) goes to the stock serializer's `dumpsTyped` unchanged. Reading is
 * the stock reader, so stored checkpoints are readable by any
 * `PostgresSaver`, and what it wrote before is read as before.
 */
import { JsonPlusSerializer, type SerializerProtocol } from "@langchain/langgraph-checkpoint";

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

/** A serializer's answer: the type tag and the bytes. */
export type Serialized = [string, Uint8Array];

export class WarrantSerializer implements SerializerProtocol {
  /** What every value the fast path does not take goes to, and every read. */
  private readonly stock = new JsonPlusSerializer();

  /**
   * The fast path, at once: bytes as they are (`bytes`, as the stock
   * serializer answers), plain data as `JSON.stringify` writes it; undefined
   * for anything else (`dumpsTyped` leaves that to the stock serializer).
   */
  dumpsTypedSync(obj: unknown): Serialized | undefined {
    if (obj instanceof Uint8Array) return ["bytes", obj];
    const form = plainForm(obj, "", 0);
    return form === NOT_PLAIN ? undefined : ["json", encoder.encode(JSON.stringify(form))];
  }

  async dumpsTyped(obj: unknown): Promise<Serialized> {
    return this.dumpsTypedSync(obj) ?? (await this.stock.dumpsTyped(obj));
  }

  loadsTyped(type: string, data: Uint8Array | string): Promise<unknown> {
    return this.stock.loadsTyped(type, data);
  }
}
