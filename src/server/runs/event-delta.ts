/**
 * Deltas between two JSON values, so a run's stored events do not repeat
 * what the previous event of the same kind already carried: each `values`
 * snapshot holds the whole transcript, ledger and evidence, and each
 * `messages/partial` the whole message so far. `diff(previous, next)` says
 * only what changed; `patch(previous, delta)` rebuilds `next` exactly (the
 * same JSON text, key order included), which is what makes an event served
 * from the table identical to the one the executing process sent.
 *
 * Shapes: `{ "=": value }` replaces; `{ s: text }` appends to a string;
 * `{ o: { key: delta }, d?: [key] }` changes, adds and removes keys of an
 * object (keys not named are unchanged); `{ l: length, i: { index: delta } }`
 * resizes an array and changes the items named.
 */

export type Delta =
  | { "=": unknown }
  | { s: string }
  | { o: Record<string, Delta>; d?: string[] }
  | { l: number; i: Record<string, Delta> };

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** What turns `previous` into `next` (both parsed JSON); `{ o: {} }` when they are equal. */
export function diff(previous: unknown, next: unknown): Delta {
  return change(previous, next) ?? { o: {} };
}

/** `next` rebuilt from `previous` and `diff(previous, next)`. */
export function patch(previous: unknown, delta: Delta): unknown {
  if ("=" in delta) return delta["="];
  if ("s" in delta) return `${typeof previous === "string" ? previous : ""}${delta.s}`;
  if ("o" in delta) {
    const base = isObject(previous) ? previous : {};
    const removed = new Set(delta.d ?? []);
    const entries: [string, unknown][] = Object.keys(base)
      .filter((key) => !removed.has(key))
      .map((key) => [key, Object.hasOwn(delta.o, key) ? patch(base[key], delta.o[key] as Delta) : base[key]]);
    for (const key of Object.keys(delta.o))
      if (!Object.hasOwn(base, key)) entries.push([key, patch(undefined, delta.o[key] as Delta)]);
    // fromEntries defines own properties, so a "__proto__" key stays a key.
    return Object.fromEntries(entries);
  }
  const base = Array.isArray(previous) ? previous : [];
  return Array.from({ length: delta.l }, (_unused, index) =>
    Object.hasOwn(delta.i, String(index)) ? patch(base[index], delta.i[String(index)] as Delta) : base[index],
  );
}

/** The delta, or undefined when `previous` and `next` are equal. */
function change(previous: unknown, next: unknown): Delta | undefined {
  if (previous === next) return undefined;
  if (typeof next === "string" && typeof previous === "string" && previous.length > 0 && next.startsWith(previous))
    return { s: next.slice(previous.length) };
  if (Array.isArray(next) && Array.isArray(previous)) {
    const items: Record<string, Delta> = {};
    next.forEach((item, index) => {
      const delta = index < previous.length ? change(previous[index], item) : { "=": item };
      if (delta) items[String(index)] = delta;
    });
    if (next.length === previous.length && Object.keys(items).length === 0) return undefined;
    return { l: next.length, i: items };
  }
  if (isObject(next) && isObject(previous)) {
    const previousKeys = Object.keys(previous);
    const nextKeys = Object.keys(next);
    // patch keeps the surviving keys in their old order and appends new ones: any other order is a replacement.
    const order = [
      ...previousKeys.filter((key) => Object.hasOwn(next, key)),
      ...nextKeys.filter((key) => !Object.hasOwn(previous, key)),
    ];
    if (order.some((key, index) => key !== nextKeys[index])) return { "=": next };
    // No prototype: a "__proto__" key from the data must stay a key.
    const changed = Object.create(null) as Record<string, Delta>;
    for (const key of nextKeys) {
      const delta = Object.hasOwn(previous, key) ? change(previous[key], next[key]) : { "=": next[key] };
      if (delta) changed[key] = delta;
    }
    const removed = previousKeys.filter((key) => !Object.hasOwn(next, key));
    if (Object.keys(changed).length === 0 && removed.length === 0) return undefined;
    return removed.length > 0 ? { o: changed, d: removed } : { o: changed };
  }
  return { "=": next };
}
