/** Threads: create, find, read, update and delete them; their state and history are thread-state.ts. */
import { randomUUID } from "node:crypto";
import type { Hono } from "hono";
import type { ThreadRow } from "../../stores/thread-rows.js";
import { notFound } from "../api-error.js";
import type { Env, RouteContext } from "../context.js";
import { toWire } from "../events.js";
import { ThreadCount, ThreadCreate, ThreadPatch, ThreadSearch, valuesFilter } from "../requests.js";
import { clientMetadata, parseBody } from "../request-fields.js";
import { ownerOf } from "../runs/types.js";
import { registerThreadStateRoutes } from "./thread-state.js";
import { ApiError } from "../../errors.js";

export function registerThreadRoutes(app: Hono<Env>, context: RouteContext): void {
  const { store, principalOf, body, ownedThread, snapshotOf } = context;
  const threadJson = (thread: ThreadRow, withValues = true) => threadView(snapshotOf, thread, withValues);

  app.post("/threads", async (c) => {
    const request = parseBody(ThreadCreate, (await body(c)) ?? {});
    if (request.supersteps !== undefined)
      throw new ApiError("state_write_refused", "threads cannot be created with state (supersteps)");
    if (request.ttl !== undefined && request.ttl !== null)
      throw new ApiError("unsupported", "thread ttl is not supported: delete threads explicitly");
    const owner = ownerOf(principalOf(c));
    const threadId = request.thread_id?.toLowerCase() ?? randomUUID();
    // The graph a thread is for (the SDK's `graphId`, sent as metadata.graph_id) is a served one or none.
    const graphId = request.graph_id ?? request.metadata?.["graph_id"];
    if (graphId !== undefined && graphId !== null && (typeof graphId !== "string" || !context.graphs.has(graphId))) {
      throw new ApiError("invalid_request", "metadata.graph_id: not a served graph (agent, workflow)");
    }
    const created = await store.create(owner, {
      thread_id: threadId,
      metadata: clientMetadata(request.metadata),
      graph_id: graphId ?? undefined,
    });
    if (created) return c.json(await threadJson(created, false));
    // The id exists: the caller's own thread may be returned (do_nothing); anybody else's is a conflict that reveals nothing.
    const mine = await store.get(owner, threadId);
    if (mine && request.if_exists === "do_nothing") return c.json(await threadJson(mine));
    throw new ApiError("thread_exists", "a thread with this id already exists");
  });
  app.post("/threads/search", async (c) => {
    const query = parseBody(ThreadSearch, (await body(c)) ?? {});
    if (query.extract !== undefined && query.extract !== null)
      throw new ApiError("unsupported", "extract is not supported; use select");
    const owner = ownerOf(principalOf(c));
    const rows = await store.search(owner, {
      metadata: query.metadata ?? undefined,
      values: valuesFilter(query.values),
      status: query.status ?? undefined,
      ids: query.ids?.map((id) => id.toLowerCase()),
      sort_by: query.sort_by ?? undefined,
      sort_order: query.sort_order ?? undefined,
      limit: query.limit ?? 10,
      offset: query.offset ?? 0,
    });
    const select = query.select && query.select.length > 0 ? query.select : undefined;
    // The state is read only when the answer includes it.
    const withValues = !select || select.includes("values") || select.includes("interrupts");
    const threads = await Promise.all(rows.map((row) => threadJson(row, withValues)));
    return c.json(select ? threads.map((thread) => pick(thread, select)) : threads);
  });
  app.post("/threads/count", async (c) => {
    const query = parseBody(ThreadCount, (await body(c)) ?? {});
    return c.json(
      await store.count(ownerOf(principalOf(c)), {
        metadata: query.metadata ?? undefined,
        status: query.status ?? undefined,
        values: valuesFilter(query.values),
      }),
    );
  });
  app.get("/threads/:thread_id", async (c) => c.json(await threadJson(await ownedThread(c))));
  app.patch("/threads/:thread_id", async (c) => {
    const thread = await ownedThread(c);
    const request = parseBody(ThreadPatch, await body(c));
    const updated = await store.patchMetadata(
      ownerOf(principalOf(c)),
      thread.thread_id,
      clientMetadata(request.metadata),
    );
    if (!updated) throw notFound("thread");
    return c.json(await threadJson(updated));
  });
  app.delete("/threads/:thread_id", async (c) => {
    const thread = await ownedThread(c);
    const outcome = await store.delete(ownerOf(principalOf(c)), thread.thread_id);
    if (outcome === "missing") throw notFound("thread");
    if (outcome === "busy") throw new ApiError("thread_busy", "the thread has a run in progress; cancel it first");
    await context.deleteCheckpoints(thread.thread_id);
    return c.body(null, 204);
  });
  app.post("/threads/:thread_id/copy", async (c) => {
    await ownedThread(c);
    throw new ApiError("unsupported", "copying threads is not supported (it would duplicate approvals)");
  });
  app.post("/threads/prune", () => {
    throw new ApiError("unsupported", "pruning is not supported; delete threads one by one");
  });

  app.get("/threads/:thread_id/stream", async (c) => {
    await ownedThread(c);
    throw new ApiError("unsupported", "thread-level streaming is not supported; stream or join a run");
  });
  registerThreadStateRoutes(app, context);
}

/** Only the named fields of a thread (`select`). */
function pick<T extends object>(value: T, fields: readonly string[]): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([key]) => fields.includes(key))) as Partial<T>;
}

/** A thread as the LangGraph API shows it, with its current values and open interrupts unless `withValues` is false. */
async function threadView(snapshotOf: RouteContext["snapshotOf"], thread: ThreadRow, withValues: boolean) {
  const base = {
    thread_id: thread.thread_id,
    created_at: thread.created_at.toISOString(),
    updated_at: thread.updated_at.toISOString(),
    metadata: {
      ...thread.metadata,
      owner: thread.owner,
      tenant: thread.tenant,
      ...(thread.graph_id ? { graph_id: thread.graph_id, assistant_id: thread.graph_id } : {}),
    },
    status: thread.status,
    values: {} as unknown,
    interrupts: {} as Record<string, unknown[]>,
  };
  if (!withValues) return base;
  const snapshot = await snapshotOf(thread.thread_id);
  base.values = toWire(snapshot.values ?? {});
  for (const task of snapshot.tasks) if (task.interrupts.length > 0) base.interrupts[task.id] = toWire(task.interrupts);
  return base;
}
