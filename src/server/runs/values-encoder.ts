/**
 * A run's successive `values` snapshots as wire JSON, and each one's delta
 * against the one before, without serializing what did not change: between
 * two supersteps most of the state's fields are the very same objects (a
 * channel nobody wrote keeps its value), and an appended list (the
 * transcript, the ledger) keeps its old items. So each field's JSON, and each
 * list item's, is kept while the field (the item) is the same object, the
 * snapshot's JSON is put together from them, and the delta names only the
 * fields that changed (a list by its new or replaced items), in the shapes of
 * `event-delta.ts`: patching the previous snapshot with it gives this one's
 * exact JSON text. The text is the same `toClientJson` writes.
 *
 * A snapshot that is not a plain object, or whose fields moved, is
 * serialized whole and starts the chain again (no delta).
 */
import { isHiddenKey, isPlainFields, toClientFieldJson, toClientItemJson, toClientJson } from "../client-view.js";

interface Item {
  value: unknown;
  json: string;
}

interface Field {
  value: unknown;
  /** Undefined when `toClientJson` leaves the field out. */
  json: string | undefined;
  /** The items' JSON, for an array. */
  items?: Item[];
}

export interface EncodedValues {
  json: string;
  /** The delta text against the previous snapshot; null when this one is stored whole. */
  delta: string | null;
}

export class ValuesEncoder {
  #previous: Map<string, Field> | undefined;

  encode(values: unknown): EncodedValues {
    if (!isPlainFields(values)) {
      this.#previous = undefined;
      return { json: toClientJson(values), delta: null };
    }
    const previous = this.#previous;
    const fields = new Map<string, Field>();
    const parts: string[] = [];
    for (const key of Object.keys(values)) {
      const field = fieldOf(key, values[key], previous?.get(key));
      fields.set(key, field);
      if (field.json !== undefined) parts.push(`${JSON.stringify(key)}:${field.json}`);
    }
    this.#previous = fields;
    return { json: `{${parts.join(",")}}`, delta: previous ? deltaOf(previous, fields) : null };
  }
}

function fieldOf(key: string, value: unknown, before: Field | undefined): Field {
  if (before !== undefined && before.value === value) return before;
  if (!Array.isArray(value) || isHiddenKey(key)) return { value, json: toClientFieldJson(key, value) };
  const items = value.map((item: unknown, index): Item => {
    const old = before?.items?.[index];
    return old !== undefined && old.value === item ? old : { value: item, json: toClientItemJson(item) };
  });
  return { value, json: `[${items.map((item) => item.json).join(",")}]`, items };
}

/** `event-delta.ts`'s `{ o, d }` from `before` to `after`, or null when the shown keys changed order. */
function deltaOf(before: Map<string, Field>, after: Map<string, Field>): string | null {
  const shown = (fields: Map<string, Field>) => [...fields].filter(([, field]) => field.json !== undefined);
  const previous = shown(before);
  const next = shown(after);
  const surviving = new Set(next.map(([key]) => key));
  const added = next.filter(([key]) => before.get(key)?.json === undefined).map(([key]) => key);
  // patch keeps surviving keys in their old order and appends new ones: any other order is stored whole.
  const order = [...previous.map(([key]) => key).filter((key) => surviving.has(key)), ...added];
  if (order.some((key, index) => key !== next[index]?.[0])) return null;
  const changed: string[] = [];
  for (const [key, field] of next) {
    const old = before.get(key);
    const change = old?.json === undefined ? `{"=":${field.json}}` : fieldDelta(old, field);
    if (change !== undefined) changed.push(`${JSON.stringify(key)}:${change}`);
  }
  const removed = previous.filter(([key]) => !surviving.has(key)).map(([key]) => key);
  return `{"o":{${changed.join(",")}}${removed.length > 0 ? `,"d":${JSON.stringify(removed)}` : ""}}`;
}

function fieldDelta(before: Field, after: Field): string | undefined {
  if (before.json === after.json) return undefined;
  if (before.items === undefined || after.items === undefined) return `{"=":${after.json}}`;
  const old = before.items;
  const items = after.items.flatMap((item, index) =>
    old[index]?.json === item.json ? [] : [`"${index}":{"=":${item.json}}`],
  );
  return `{"l":${after.items.length},"i":{${items.join(",")}}}`;
}
