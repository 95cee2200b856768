/**
 * Reading and stopping runs: list a thread's runs, get one, cancel one.
 * Runs are the thread's audit trail: a run's record is never deleted
 * (`DELETE` answers 409 `run_kept`), and cancel never rolls back.
 */
import type { Context, Hono } from "hono";
import type { RunRow } from "../../stores/thread-rows.js";
import type { Env, RouteContext } from "../context.js";
import { RunListQuery } from "../requests.js";
import { parseBody } from "../request-fields.js";
import { ownerOf } from "./types.js";
import { ApiError } from "../../errors.js";

/** A run as the SDK's `Run`. */
export function runJson(run: RunRow) {
  return {
    run_id: run.run_id,
    thread_id: run.thread_id,
    assistant_id: run.assistant_id,
    created_at: run.created_at.toISOString(),
    updated_at: run.updated_at.toISOString(),
    status: run.status,
    metadata: run.metadata,
    kwargs: run.kwargs,
    multitask_strategy:
      typeof run.kwargs["multitask_strategy"] === "string" ? run.kwargs["multitask_strategy"] : "reject",
    ...(run.error ? { error: run.error } : {}),
    ...(run.outcome ? { outcome: run.outcome } : {}),
  };
}

/** Where the run can be read (`Content-Location`) and streamed (`Location`). */
export function locate(c: Context<Env>, run: RunRow): void {
  c.header("Content-Location", `/threads/${run.thread_id}/runs/${run.run_id}`);
  c.header("Location", `/threads/${run.thread_id}/runs/${run.run_id}/stream`);
}

export function registerRunControlRoutes(app: Hono<Env>, context: RouteContext): void {
  const { manager, store, principalOf, ownedThread, ownedRun } = context;
  app.get("/threads/:thread_id/runs", async (c) => {
    const thread = await ownedThread(c);
    const limit = Number(c.req.query("limit") ?? 10);
    const offset = Number(c.req.query("offset") ?? 0);
    const status = c.req.query("status");
    const query = parseBody(RunListQuery, { limit, offset, ...(status ? { status } : {}) });
    const runs = await store.listRuns(ownerOf(principalOf(c)), thread.thread_id, {
      limit: query.limit ?? 10,
      offset: query.offset ?? 0,
      status: query.status,
    });
    return c.json(runs.map(runJson));
  });
  app.get("/threads/:thread_id/runs/:run_id", async (c) => c.json(runJson(await ownedRun(c, await ownedThread(c)))));
  app.delete("/threads/:thread_id/runs/:run_id", async (c) => {
    const run = await ownedRun(c, await ownedThread(c));
    if (run.status === "running" || run.status === "pending")
      throw new ApiError("thread_busy", "the run is still in progress; cancel it first");
    throw new ApiError("unsupported", "runs are kept as the thread's audit trail");
  });
  app.post("/threads/:thread_id/runs/:run_id/cancel", async (c) => {
    const thread = await ownedThread(c);
    const run = await ownedRun(c, thread);
    if (c.req.query("action") === "rollback")
      throw new ApiError("unsupported", "rollback is not supported: it would erase the ledger of effects");
    // A pending run (delayed or queued) leaves the queue, `interrupted`; a running one stops at its next safe point.
    const dequeued =
      run.status === "pending" && (await manager.queue?.cancel(ownerOf(principalOf(c)), thread.thread_id, run.run_id));
    if (!dequeued) await manager.cancel(ownerOf(principalOf(c)), thread.thread_id, run.run_id);
    if (c.req.query("wait") === "1" || c.req.query("wait") === "true") {
      await manager.wait(ownerOf(principalOf(c)), thread.thread_id, run.run_id, c.req.raw.signal);
      return c.body(null, 204);
    }
    return c.body(null, 202);
  });
}
