/** Threads, their state and history. State is written only by the graph: client writes are refused. */
import { randomUUID } from "node:crypto";
import type { Context, Hono } from "hono";
import type { StateSnapshot } from "@langchain/langgraph";
import type { ThreadRow } from "../../persistence/thread-store.js";
import { ApiError, notFound } from "../api-error.js";
import type { Env, RouteContext } from "../context.js";
import { toWire } from "../events.js";
import {
  checkpointIdParam,
  clientMetadata,
  HistoryQuery,
  parseBody,
  ThreadCount,
  ThreadCreate,
  ThreadPatch,
  ThreadSearch,
  StateAtCheckpoint,
  valuesFilter,
} from "../requests.js";
import { ownerOf } from "../runs/types.js";
import { pendingInterrupts } from "../runs/outcome.js";
import { checkpointIdFrom, checkpointRefOf, threadConfig } from "../../runtime/run-config.js";

export function registerThreadRoutes(app: Hono<Env>, context: RouteContext): void {
  const { store, principalOf, body, ownedThread, snapshotOf, anyGraph, threadParam } = context;
  const threadJson = async (thread: ThreadRow, withValues = true) => {
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
    for (const task of snapshot.tasks)
      if (task.interrupts.length > 0) base.interrupts[task.id] = toWire(task.interrupts);
    return base;
  };

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

  const stateJson = (snapshot: StateSnapshot) =>
    toWire({
      values: snapshot.values ?? {},
      next: snapshot.next,
      tasks: snapshot.tasks.map((task) => ({
        id: task.id,
        name: task.name,
        path: task.path,
        error: task.error ? String((task.error as { message?: unknown }).message ?? task.error) : null,
        interrupts: task.interrupts,
        checkpoint: null,
        state: null,
        result: task.result ?? null,
      })),
      metadata: snapshot.metadata ?? {},
      created_at: snapshot.createdAt ?? null,
      checkpoint: checkpointRef(snapshot.config),
      parent_checkpoint: snapshot.parentConfig ? checkpointRef(snapshot.parentConfig) : null,
      interrupts: pendingInterrupts(snapshot),
    });
  const stateAt = async (c: Context<Env>, checkpointId: string | undefined) => {
    const thread = await ownedThread(c);
    const snapshot = await snapshotOf(thread.thread_id, checkpointId);
    // An unknown id still gets a snapshot (the config it was asked with, no values, no creation time): that is a 404.
    if (checkpointId && (snapshot.createdAt === undefined || checkpointIdFrom(snapshot.config) !== checkpointId))
      throw notFound("checkpoint");
    return c.json(stateJson(snapshot));
  };
  app.get("/threads/:thread_id/state", (c) => stateAt(c, undefined));
  app.get("/threads/:thread_id/state/:checkpoint_id", (c) =>
    stateAt(c, checkpointIdParam(c.req.param("checkpoint_id"))),
  );
  app.post("/threads/:thread_id/state/checkpoint", async (c) => {
    // The SDK's body, `{"checkpoint": {thread_id, checkpoint_ns, checkpoint_id}}`, or a bare `checkpoint_id`.
    const request = parseBody(StateAtCheckpoint, await body(c));
    if (request.checkpoint?.checkpoint_ns)
      throw new ApiError("unsupported", "checkpoint.checkpoint_ns: the graphs have no subgraphs");
    if (request.checkpoint?.thread_id && request.checkpoint.thread_id.toLowerCase() !== threadParam(c))
      throw new ApiError("invalid_request", "checkpoint.thread_id: names another thread");
    return stateAt(c, (request.checkpoint?.checkpoint_id ?? request.checkpoint_id) || undefined);
  });
  const refuseStateWrite = async (c: Context<Env>) => {
    await ownedThread(c);
    throw new ApiError(
      "state_write_refused",
      "thread state is written only by the graph; resume an interrupt with command.resume",
    );
  };
  app.post("/threads/:thread_id/state", refuseStateWrite);
  app.patch("/threads/:thread_id/state", refuseStateWrite);

  const history = async (c: Context<Env>, query: ReturnType<typeof HistoryQuery.parse>) => {
    const thread = await ownedThread(c);
    const before = typeof query.before === "string" ? query.before : query.before?.checkpoint_id;
    const states: unknown[] = [];
    const config = threadConfig(thread.thread_id, query.checkpoint?.checkpoint_id);
    for await (const snapshot of anyGraph().getStateHistory(config, {
      limit: query.limit ?? 10,
      ...(before ? { before: threadConfig(thread.thread_id, before) } : {}),
      ...(query.metadata ? { filter: query.metadata } : {}),
    })) {
      states.push(stateJson(snapshot));
    }
    return c.json(states);
  };
  app.post("/threads/:thread_id/history", async (c) => history(c, parseBody(HistoryQuery, (await body(c)) ?? {})));
  app.get("/threads/:thread_id/history", async (c) => {
    const limit = c.req.query("limit");
    return history(
      c,
      parseBody(HistoryQuery, {
        ...(limit !== undefined ? { limit: Number(limit) } : {}),
        ...(c.req.query("before") ? { before: c.req.query("before") } : {}),
      }),
    );
  });
  app.get("/threads/:thread_id/stream", async (c) => {
    await ownedThread(c);
    throw new ApiError("unsupported", "thread-level streaming is not supported; stream or join a run");
  });
}

/** Only the named fields of a thread (`select`). */
function pick<T extends object>(value: T, fields: readonly string[]): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([key]) => fields.includes(key))) as Partial<T>;
}

const checkpointRef = checkpointRefOf;
