/**
 * Run routes: create (background, stream, wait; on a thread or stateless),
 * stream and join, and the run records (run-control.ts). Each concern lives
 * in its own module: starting a run (run-start.ts), replaying an idempotent
 * request (run-replay.ts), following a run (run-stream.ts).
 */
import type { Context, Hono } from "hono";
import type { ThreadRow } from "../../stores/thread-rows.js";
import { notFound } from "../api-error.js";
import type { Env, RouteContext } from "../context.js";
import { parseBody } from "../request-fields.js";
import { RunCreate, toGraphInput, type RunCreateBody } from "./requests.js";
import { ownerOf } from "./types.js";
import { locate, registerRunControlRoutes, runJson } from "./control-routes.js";
import { startIdempotent, type KeyedStart } from "./replay.js";
import { startRunAs, type RunDelivery } from "./start.js";
import { finalValues, joinRun, streamRun } from "./stream.js";
import { ApiError } from "../../errors.js";

export function registerRunRoutes(app: Hono<Env>, context: RouteContext): void {
  registerRunCreateRoutes(app, context);
  registerRunFollowRoutes(app, context);
  registerRunControlRoutes(app, context);
  app.post("/runs/batch", () => {
    throw new ApiError("unsupported", "batch runs are not supported");
  });
  app.post("/runs/cancel", () => {
    throw new ApiError("unsupported", "cancel runs one by one: POST /threads/{thread_id}/runs/{run_id}/cancel");
  });
}

/** A run request as the routes start it: under its idempotency key, as the request's principal. */
async function start(
  c: Context<Env>,
  context: RouteContext,
  thread: ThreadRow | "stateless",
  raw: unknown,
  delivery: RunDelivery,
): Promise<KeyedStart> {
  const principal = context.principalOf(c);
  return startIdempotent(c, context, thread, raw, (claim) =>
    startRunAs(context, principal, thread, raw, { delivery, connection: c.req.raw.signal, claim }),
  );
}

/** The thread a run is created on: the caller's, or a new one (`if_not_exists: "create"`, checked first). */
async function threadForRun(c: Context<Env>, context: RouteContext, raw: unknown): Promise<ThreadRow> {
  const { manager, store } = context;
  const owner = ownerOf(context.principalOf(c));
  const threadId = context.threadParam(c);
  const existing = await store.get(owner, threadId);
  if (existing) return existing;
  if ((raw as RunCreateBody | null)?.if_not_exists === "create") {
    // The request must be valid before the thread is written.
    const request = parseBody(RunCreate, raw);
    manager.graph(request.assistant_id);
    if (request.command || !request.input)
      throw new ApiError("invalid_request", "if_not_exists: a new thread needs input");
    toGraphInput(request.input);
    const created = await store.create(owner, { thread_id: threadId, metadata: {} });
    if (created) return created;
  }
  throw notFound("thread");
}

/** Creating runs: on a thread, or stateless (a thread of its own, deleted once done unless kept). */
export function registerRunCreateRoutes(app: Hono<Env>, context: RouteContext): void {
  const { manager, store, principalOf, body } = context;
  const deleteIfStateless = async (c: Context<Env>, { started, keyed }: KeyedStart) => {
    const { request, run } = started;
    // A keyed run is kept, so that a repeat of its request can still be answered with it.
    if (request.on_completion === "keep" || keyed) return;
    const ended = await manager.wait(ownerOf(principalOf(c)), run.thread_id, run.run_id);
    if (ended?.status !== "success") return;
    if ((await manager.threadStatus(run.assistant_id, run.thread_id)) === "interrupted") return;
    await store.delete(ownerOf(principalOf(c)), run.thread_id);
    await context.deleteCheckpoints(run.thread_id);
  };

  app.post("/threads/:thread_id/runs", async (c) => {
    const raw = await body(c);
    const { run } = (await start(c, context, await threadForRun(c, context, raw), raw, "background")).started;
    locate(c, run);
    return c.json(runJson(run));
  });
  app.post("/threads/:thread_id/runs/stream", async (c) => {
    const raw = await body(c);
    const { run } = (await start(c, context, await threadForRun(c, context, raw), raw, "stream")).started;
    locate(c, run);
    return streamRun(c, context, run);
  });
  app.post("/threads/:thread_id/runs/wait", async (c) => {
    const raw = await body(c);
    const { run } = (await start(c, context, await threadForRun(c, context, raw), raw, "wait")).started;
    locate(c, run);
    const ended = await manager.wait(ownerOf(principalOf(c)), run.thread_id, run.run_id);
    return c.json(await finalValues(context, ended, run.thread_id));
  });
  app.post("/runs", async (c) => {
    const keyed = await start(c, context, "stateless", await body(c), "background");
    locate(c, keyed.started.run);
    void deleteIfStateless(c, keyed).catch(() => undefined);
    return c.json(runJson(keyed.started.run));
  });
  app.post("/runs/stream", async (c) => {
    const keyed = await start(c, context, "stateless", await body(c), "stream");
    locate(c, keyed.started.run);
    void deleteIfStateless(c, keyed).catch(() => undefined);
    return streamRun(c, context, keyed.started.run);
  });
  app.post("/runs/wait", async (c) => {
    const keyed = await start(c, context, "stateless", await body(c), "wait");
    const { run } = keyed.started;
    locate(c, run);
    const ended = await manager.wait(ownerOf(principalOf(c)), run.thread_id, run.run_id);
    const values = await finalValues(context, ended, run.thread_id);
    await deleteIfStateless(c, keyed);
    return c.json(values);
  });
}

/** Following a run someone started: its stream (resumable) and its end. */
export function registerRunFollowRoutes(app: Hono<Env>, context: RouteContext): void {
  const { ownedThread, ownedRun } = context;
  app.get("/threads/:thread_id/runs/:run_id/join", async (c) =>
    joinRun(c, context, await ownedRun(c, await ownedThread(c))),
  );
  app.get("/threads/:thread_id/runs/:run_id/stream", async (c) => {
    const run = await ownedRun(c, await ownedThread(c));
    locate(c, run);
    return streamRun(c, context, run);
  });
}
