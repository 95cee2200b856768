/** A thread's state and history, read from its checkpoints. State is written only by the graph: client writes are refused. */
import type { Context, Hono } from "hono";
import type { StateSnapshot } from "@langchain/langgraph";
import { notFound } from "../api-error.js";
import type { Env, RouteContext } from "../context.js";
import { toWire } from "../events.js";
import { parseBody } from "../request-fields.js";
import { checkpointIdParam, HistoryQuery, StateAtCheckpoint } from "../requests.js";
import { pendingInterrupts } from "../runs/outcome.js";
import { checkpointIdFrom, checkpointRefOf, threadConfig } from "../../run-config.js";
import { ApiError } from "../../errors.js";

/** A checkpoint as the LangGraph API shows it. */
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
    checkpoint: checkpointRefOf(snapshot.config),
    parent_checkpoint: snapshot.parentConfig ? checkpointRefOf(snapshot.parentConfig) : null,
    interrupts: pendingInterrupts(snapshot),
  });

export function registerThreadStateRoutes(app: Hono<Env>, context: RouteContext): void {
  const { body, ownedThread, snapshotOf, anyGraph, threadParam } = context;
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
}
