/**
 * The store (LangGraph's long-term memory), as `@langchain/langgraph-sdk`'s
 * `Client.store` calls it:
 *
 *   PUT    /store/items           {namespace, key, value}        → 204
 *   GET    /store/items?namespace=a.b&key=k                     → the item, `null` when absent
 *   DELETE /store/items           {namespace, key}               → 204
 *   POST   /store/items/search    {namespace_prefix, filter, limit, offset} → {items}
 *   POST   /store/namespaces      {prefix, suffix, max_depth, limit, offset} → {namespaces}
 *
 * Every namespace is the caller's own (`principal-store.ts` puts the server's
 * prefix in front and takes it off again): another user's item is as absent
 * as one never written. Semantic search (`query`), vector indexing (`index`)
 * and TTLs are refused by name: no embedding model is configured.
 */
import type { Hono } from "hono";
import { z } from "zod";
import type { Principal } from "../../auth/principal.js";
import type { ItemTable } from "../../stores/store-item-table.js";
import { PrincipalStore } from "../../stores/principal-item-store.js";
import type { Env, RouteContext } from "../context.js";
import { ownerOf } from "../runs/types.js";
import { isStoreInputError, ApiError } from "../../errors.js";

const Json = z.unknown();

export const PutItem = z
  .object({ namespace: Json, key: Json, value: Json, index: Json.optional(), ttl: Json.optional() })
  .strict();
export const DeleteItem = z.object({ namespace: Json, key: Json }).strict();
export const SearchItems = z
  .object({
    namespace_prefix: Json.optional(),
    filter: Json.optional(),
    limit: Json.optional(),
    offset: Json.optional(),
    query: Json.optional(),
    refresh_ttl: z.boolean().nullable().optional(),
  })
  .strict();
export const ListNamespaces = z
  .object({
    prefix: Json.optional(),
    suffix: Json.optional(),
    max_depth: Json.optional(),
    limit: Json.optional(),
    offset: Json.optional(),
  })
  .strict();

/** `GET /store/items`: the query, every value a string (`namespace` dotted). */
export const StoreItemQuery = z
  .object({
    namespace: z.string().max(4096).optional(),
    key: z.string().max(1024),
    refresh_ttl: z.string().max(16).optional(),
  })
  .strict();

const present = (value: unknown) => value !== undefined && value !== null;

export function registerStoreRoutes(app: Hono<Env>, context: RouteContext, table: ItemTable): void {
  const storeOf = (principal: Principal) => new PrincipalStore(table, ownerOf(principal));
  /** Runs a store call, turning its input refusals into typed 422s. */
  const guarded = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      // LangGraph's own namespace check (BaseStore) answers the same way as ours.
      if (isStoreInputError(error) || (error as { name?: unknown } | null)?.name === "InvalidNamespaceError")
        throw new ApiError("invalid_request", (error as Error).message);
      throw error;
    }
  };
  const parsed = <S extends z.ZodType>(schema: S, raw: unknown): z.infer<S> => {
    const result = schema.safeParse(raw ?? {});
    if (result.success) return result.data;
    const issue = result.error.issues[0];
    const where = issue?.path.length ? issue.path.join(".") : "body";
    const unknownKey = issue?.code === "unrecognized_keys" ? ` ${issue.keys.join(", ")}` : "";
    throw new ApiError("invalid_request", `${where}${unknownKey}: ${issue?.message ?? "invalid"}`);
  };
  const itemJson = (item: { namespace: string[]; key: string; value: unknown; createdAt: Date; updatedAt: Date }) => ({
    namespace: item.namespace,
    key: item.key,
    value: item.value,
    created_at: item.createdAt.toISOString(),
    updated_at: item.updatedAt.toISOString(),
  });

  app.put("/store/items", async (c) => {
    const body = parsed(PutItem, await context.body(c));
    if (present(body.ttl)) throw new ApiError("unsupported", "ttl: items do not expire on this server");
    if (present(body.index) && body.index !== false)
      throw new ApiError("unsupported", "index: no embedding model is configured, so items are not indexed");
    await guarded(() =>
      storeOf(context.principalOf(c)).batch([
        { namespace: body.namespace as string[], key: body.key as string, value: checkedValue(body.value) },
      ]),
    );
    return c.body(null, 204);
  });

  app.get("/store/items", async (c) => {
    const query = parsed(StoreItemQuery, c.req.query());
    const namespace = (query.namespace ?? "") === "" ? [] : (query.namespace ?? "").split(".");
    const key = query.key;
    const [item] = await guarded(() => storeOf(context.principalOf(c)).batch([{ namespace, key }]));
    // As LangGraph's server answers (the SDK's `getItem` gives `Item | null`): a missing item, or another
    // user's (never visible: the namespace is under the caller's prefix), is 200 `null`.
    return c.json(item ? itemJson(item) : null);
  });

  app.delete("/store/items", async (c) => {
    const body = parsed(DeleteItem, await context.body(c));
    await guarded(() =>
      storeOf(context.principalOf(c)).batch([
        { namespace: body.namespace as string[], key: body.key as string, value: null },
      ]),
    );
    return c.body(null, 204);
  });

  app.post("/store/items/search", async (c) => {
    const body = parsed(SearchItems, await context.body(c));
    if (present(body.query))
      throw new ApiError("unsupported", "query: semantic search needs an embedding model; none is configured");
    const items = await guarded(() =>
      storeOf(context.principalOf(c)).batch([
        {
          namespacePrefix: (body.namespace_prefix ?? []) as string[],
          filter: body.filter as Record<string, unknown> | undefined,
          limit: (body.limit ?? 10) as number,
          offset: (body.offset ?? 0) as number,
        },
      ]),
    );
    return c.json({ items: (items[0] ?? []).map(itemJson) });
  });

  app.post("/store/namespaces", async (c) => {
    const body = parsed(ListNamespaces, await context.body(c));
    const matchConditions = [
      ...(present(body.prefix) ? [{ matchType: "prefix" as const, path: body.prefix as string[] }] : []),
      ...(present(body.suffix) ? [{ matchType: "suffix" as const, path: body.suffix as string[] }] : []),
    ];
    const namespaces = await guarded(() =>
      storeOf(context.principalOf(c)).batch([
        {
          matchConditions,
          ...(present(body.max_depth) ? { maxDepth: body.max_depth as number } : {}),
          limit: (body.limit ?? 100) as number,
          offset: (body.offset ?? 0) as number,
        },
      ]),
    );
    return c.json({ namespaces: namespaces[0] ?? [] });
  });
}

/** `null` deletes in LangGraph's put; through this route a value must be given (DELETE removes). */
function checkedValue(value: unknown): Record<string, unknown> {
  if (value === null || value === undefined) throw new ApiError("invalid_request", "value: must be an object");
  return value as Record<string, unknown>;
}
