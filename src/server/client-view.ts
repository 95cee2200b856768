/**
 * What a client may see of a value: the one serializer every stream event
 * and every API answer leaves the server through (the run's event log,
 * `events.ts`, and the JSON-response middleware below), so no route has to
 * remember it.
 *
 * - **Host-owned keys stay in.** A `configurable` keeps only where its
 *   checkpoint is (`CLIENT_VISIBLE_KEYS`: thread, namespace, checkpoint id);
 *   the verified principal (`langgraph_auth_user`), the run's bound values
 *   (`warrant_run_bound`), our run id and LangGraph's internals go. The keys
 *   that name the principal or the run's binding (`NEVER_TO_CLIENT_KEYS`) are
 *   dropped at any depth.
 * - **A principal is shown by who it is.** A principal recorded in the state
 *   (`values.run.principal`, and every mode that repeats the state) keeps its
 *   `user_id`, `tenant`, `role` and `display_name`; its scopes and grants
 *   are the server's (the user's own scopes are on `GET /ui/session`).
 * - **Checkpoints in the LangGraph API's shape.** LangGraph's raw checkpoint
 *   payload (`checkpoints` mode, `debug` events of type `checkpoint`) carries
 *   the run's whole config and `parentConfig`; clients get what the LangGraph
 *   API server sends (langgraph-api `preprocessDebugCheckpoint`): `checkpoint`
 *   and `parent_checkpoint` as `{thread_id, checkpoint_ns, checkpoint_id}`,
 *   `config`/`parent_config` holding only those keys, tasks with a
 *   `checkpoint` instead of a `state` config.
 *
 * LangChain messages become the plain dicts the SDK expects
 * (`{ type: "human", content, id, … }`), errors `{ error, message }` without
 * stacks. Applying it twice gives the same JSON.
 */
import type { MiddlewareHandler } from "hono";
import { CLIENT_VISIBLE_KEYS, NEVER_TO_CLIENT_KEYS, checkpointRefOf } from "../run-config.js";

type JsonObject = Record<string, unknown>;

const VISIBLE = new Set<string>(CLIENT_VISIBLE_KEYS);
const NEVER = new Set<string>(NEVER_TO_CLIENT_KEYS);
/** What a principal shown to a client keeps. */
const IDENTITY_FIELDS = ["user_id", "tenant", "role", "display_name"] as const;

const isObject = (value: unknown): value is JsonObject =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** The value as JSON a client may receive. */
export function toClientJson(value: unknown): string {
  // Most of what leaves (a state's ledger, usage, decisions) is plain data none of the rules below touches:
  // serialized without calling the replacer at every key, the same text.
  // A message is shown as its dict, which is most often plain data itself.
  const shown = isMessage(value) ? messageDict(value) : value;
  if (isPlainData(shown, 0)) return JSON.stringify(shown);
  return JSON.stringify(value, clientReplacer);
}

/** The rules, for JSON.stringify: called with each key and its value, `this` the object that holds it. */
function clientReplacer(this: JsonObject, key: string, current: unknown): unknown {
  const raw = this[key];
  if (isMessage(raw)) return withMessageDicts(messageDict(raw));
  if (raw instanceof Error) return { error: raw.name, message: raw.message };
  if (NEVER.has(key)) return undefined;
  if (current === null || typeof current !== "object") return current;
  if (key === "configurable" && isObject(current)) return visibleConfigurable(current);
  if (key === "principal" && isPrincipalShaped(current)) return identityOf(current);
  if (isRawCheckpoint(current)) return checkpointView(current);
  return withMessageDicts(current);
}

/** Deeper than this, a value takes the replacer's path whatever it holds. */
const PLAIN_DEPTH = 32;

/**
 * Whether `toClientJson`'s replacer would return every part of `value` as it is: strings, finite or not
 * numbers, booleans, null, undefined, and arrays and plain objects of them, with no key the rules look at
 * (`NEVER_TO_CLIENT_KEYS`, `configurable`, `principal`) and no raw checkpoint payload. Anything else (a
 * message, an error, an object with a `toJSON`, a function) answers false, as does nesting beyond
 * `PLAIN_DEPTH`.
 */
function isPlainData(value: unknown, depth: number): boolean {
  // undefined is left out of an object and written as null in an array, with the replacer or without.
  if (value === null || value === undefined) return true;
  const type = typeof value;
  if (type === "string" || type === "number" || type === "boolean") return true;
  if (type !== "object" || depth >= PLAIN_DEPTH) return false;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index += 1) {
      if (!(index in value) || !isPlainData(value[index], depth + 1)) return false;
    }
    return true;
  }
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return false;
  const object = value as JsonObject;
  if (typeof object.toJSON === "function") return false;
  for (const key in object) {
    if (NEVER.has(key) || key === "configurable" || key === "principal") return false;
    if (!isPlainData(object[key], depth + 1)) return false;
  }
  return !isRawCheckpoint(object);
}

/**
 * The JSON of one top-level field of an object as `toClientJson(object)` writes it (undefined when it is
 * left out), for the serializers that reuse a field's JSON while the field is the same object.
 */
export function toClientFieldJson(key: string, value: unknown): string | undefined {
  const json = toClientJson({ [key]: value });
  const prefix = `{${JSON.stringify(key)}:`;
  return json.startsWith(prefix) ? json.slice(prefix.length, -1) : undefined;
}

/** The JSON of one item of an array as `toClientJson` writes it inside the array. */
export function toClientItemJson(item: unknown): string {
  const shown = isMessage(item) ? messageDict(item) : item;
  // Plain data is written alike in an array and alone (but undefined: null in an array, no text alone).
  if (shown !== undefined && isPlainData(shown, 0)) return JSON.stringify(shown);
  return toClientJson([item]).slice(1, -1);
}

/** Whether `toClientJson` drops a key's value wherever it is. */
export const isHiddenKey = (key: string): boolean => NEVER.has(key);

/**
 * Whether `toClientJson(value)` is the object's fields, each serialized on its own (`toClientFieldJson`): a
 * plain object that is neither a message, an error, a `toJSON` object nor a raw checkpoint payload.
 */
export function isPlainFields(value: unknown): value is JsonObject {
  if (!isObject(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return false;
  return typeof value.toJSON !== "function" && !isMessage(value) && !isRawCheckpoint(value);
}

/** A LangChain message (anything with `toDict`). */
type MessageLike = { toDict(): { type: string; data: JsonObject } };

const isMessage = (value: unknown): value is MessageLike =>
  value !== null && typeof value === "object" && typeof (value as { toDict?: unknown }).toDict === "function";

/**
 * A message's plain dict (`{ ...data, type }`), made once per message object: a message's `toJSON` (and so
 * `toDict`) is built from its constructor arguments, and a run's `values` events repeat the same messages
 * at every step.
 */
const messageDicts = new WeakMap<MessageLike, JsonObject>();

function messageDict(message: MessageLike): JsonObject {
  let dict = messageDicts.get(message);
  if (dict === undefined) {
    const { type, data } = message.toDict();
    dict = { ...data, type };
    messageDicts.set(message, dict);
  }
  return dict;
}

/**
 * `value` with the messages among its own items or properties replaced by their dicts (a copy when there is
 * one), so that JSON.stringify, which calls an object's `toJSON` before the replacer sees it, never converts a
 * message itself.
 */
function withMessageDicts(value: object): object {
  // Called for every object the serializer meets: plain loops, nothing allocated unless a message is found.
  if (Array.isArray(value)) {
    let items: unknown[] | undefined;
    for (let index = 0; index < value.length; index += 1) {
      const item: unknown = value[index];
      if (!isMessage(item)) continue;
      items ??= value.slice();
      items[index] = messageDict(item);
    }
    return items ?? value;
  }
  let copy: JsonObject | undefined;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const item = (value as JsonObject)[key];
    if (!isMessage(item)) continue;
    copy ??= { ...value };
    copy[key] = messageDict(item);
  }
  return copy ?? value;
}

/** `toClientJson`, parsed back: plain data as a client receives it. */
export function forClient<T = unknown>(value: unknown): T {
  return JSON.parse(toClientJson(value) ?? "null") as T;
}

/**
 * Passes every JSON answer of the routes registered after it through
 * {@link toClientJson}. Streams (`text/event-stream`) are built from the run's
 * event log, which serializes with it already.
 */
export const clientView: MiddlewareHandler = async (c, next) => {
  await next();
  const type = c.res.headers.get("content-type") ?? "";
  if (!type.startsWith("application/json")) return;
  const text = await c.res.text();
  const { status, headers } = c.res;
  c.res = new Response(text.length > 0 ? toClientJson(JSON.parse(text)) : text, { status, headers });
  // The length of the body as the route wrote it is not this body's.
  c.res.headers.delete("content-length");
};

function visibleConfigurable(configurable: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(configurable).filter(([key]) => VISIBLE.has(key)));
}

function isPrincipalShaped(value: unknown): value is JsonObject {
  return isObject(value) && typeof value.user_id === "string" && Array.isArray(value.scopes);
}

function identityOf(principal: JsonObject): JsonObject {
  return Object.fromEntries(
    IDENTITY_FIELDS.flatMap((field) => (Object.hasOwn(principal, field) ? [[field, principal[field]]] : [])),
  );
}

/** A RunnableConfig: an object with a `configurable` object. */
function isConfig(value: unknown): value is { configurable: JsonObject } {
  return isObject(value) && isObject(value.configurable);
}

/**
 * LangGraph's checkpoint payload (`mapDebugCheckpoint`): the run's config,
 * the state and the next tasks. One already in the API's shape (it has a
 * `checkpoint`) is left as it is.
 */
function isRawCheckpoint(value: unknown): value is JsonObject & { config: { configurable: JsonObject } } {
  return (
    isObject(value) &&
    isConfig(value.config) &&
    Object.hasOwn(value, "values") &&
    Array.isArray(value.next) &&
    Array.isArray(value.tasks) &&
    !Object.hasOwn(value, "checkpoint")
  );
}

function visibleConfig(config: { configurable: JsonObject }): { configurable: JsonObject } {
  return { configurable: visibleConfigurable(config.configurable) };
}

function checkpointView(payload: JsonObject & { config: { configurable: JsonObject } }): JsonObject {
  const { config, parentConfig, parent_config: _parent, tasks, ...rest } = payload;
  const parent = isConfig(parentConfig) ? parentConfig : undefined;
  return {
    ...rest,
    config: visibleConfig(config),
    parent_config: parent ? visibleConfig(parent) : null,
    checkpoint: checkpointRefOf(config),
    parent_checkpoint: parent ? checkpointRefOf(parent) : null,
    tasks: (tasks as unknown[]).map(taskView),
  };
}

/** A task of a checkpoint payload: a subgraph's `state` config becomes its `checkpoint` (langgraph-api `preprocessDebugCheckpointTask`). */
function taskView(task: unknown): unknown {
  if (!isObject(task) || !isConfig(task.state)) return task;
  const { state, ...rest } = task;
  return { ...rest, checkpoint: checkpointRefOf(state as { configurable: JsonObject }) };
}
