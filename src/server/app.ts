/**
 * The HTTP API (`npm start`): the LangGraph API routes that
 * `@langchain/langgraph-sdk`'s `Client` and `useStream` use, on our
 * Postgres, behind bearer tokens.
 *
 * Trust boundary, in one place:
 * - The principal comes from the verified token and nothing else; the run's
 *   `configurable` is built server-side (runs.ts). A client's `config`,
 *   `context`, identity metadata keys and `x-*` headers never reach a run.
 * - A thread belongs to its creator; anybody else gets 404 on every route.
 * - Clients may only *resume* an interrupt: `command.update`/`goto`, state
 *   writes and input keys other than one user message are refused.
 * - One run per thread at a time (a Postgres lease), and no fork back to a
 *   checkpoint that could replay an approval or a write.
 */
import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { streamSSE } from "hono/streaming";
import { randomUUID } from "node:crypto";
import type { StateSnapshot } from "@langchain/langgraph";
import { authenticate } from "../auth/api-token.js";
import type { Principal } from "../auth/principal.js";
import type { ThreadRow, ThreadStore, RunRow } from "../persistence/thread-store.js";
import type { LedgerRow } from "../runtime/ledger.js";
import { runBoundFor } from "../policy/run-bound.js";
import { ApiError, errorBody, isApiError, notFound } from "./api-error.js";
import { toWire, toWireJson } from "./events.js";
import {
  AssistantSearch,
  clientMetadata,
  HistoryQuery,
  parseBody,
  parseJson,
  requestText,
  RunCreate,
  RunListQuery,
  streamModes,
  ThreadCount,
  ThreadCreate,
  ThreadPatch,
  ThreadSearch,
  toGraphInput,
  type RunCreateBody,
} from "./requests.js";
import { ownerOf, pendingInterrupts, type RunManager, type ServedGraph } from "./runs.js";
import { assistantSchemas } from "./schemas.js";

export interface AppOptions {
  manager: RunManager;
  store: ThreadStore;
  graphs: Map<string, ServedGraph>;
  secret: Uint8Array;
  maxBodyBytes: number;
  /** Answers /healthz: throws when the database is unreachable. */
  ping: () => Promise<void>;
  version: string;
}

type Env = { Variables: { principal: Principal } };

/** How much of an oversized body is read and discarded before answering 413. */
const DISCARD_CAP_BYTES = 16 * 1024 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SERVER_STARTED = new Date().toISOString();

export function createApp(options: AppOptions): Hono<Env> {
  const { manager, store, graphs } = options;
  const app = new Hono<Env>();
  const anyGraph = () => graphs.get("agent") ?? [...graphs.values()][0]!;

  app.onError((error, c) => {
    if (isApiError(error)) return c.json(errorBody(error.code, error.message), error.status as 400);
    console.error(`warrant-server: unexpected error on ${c.req.method} ${c.req.path}: ${error instanceof Error ? error.stack : String(error)}`);
    return c.json(errorBody("internal_error", "the server failed to handle the request"), 500);
  });
  app.notFound((c) => c.json(errorBody("not_found", "no such route"), 404));

  app.get("/healthz", async (c) => {
    try {
      await options.ping();
      return c.json({ ok: true, accepting_runs: manager.accepting });
    } catch {
      return c.json({ ok: false, error: "database_unreachable" }, 503);
    }
  });

  // Oversized bodies: 413 before the handler sees anything. The rest of the
  // body is read and discarded (up to a cap) so the client receives the
  // answer instead of a reset connection.
  app.use("*", async (c, next) => {
    const declared = Number(c.req.header("content-length") ?? "NaN");
    if (Number.isFinite(declared) && declared > options.maxBodyBytes) {
      await discardBody(c.req.raw, DISCARD_CAP_BYTES);
      c.header("Connection", "close");
      return c.json(errorBody("body_too_large", `the body is larger than ${options.maxBodyBytes} bytes`), 413);
    }
    return bodyLimit({
      maxSize: options.maxBodyBytes,
      onError: (inner) => inner.json(errorBody("body_too_large", `the body is larger than ${options.maxBodyBytes} bytes`), 413),
    })(c, next);
  });

  // Every route below needs a valid bearer token.
  app.use("*", async (c, next) => {
    const result = await authenticate(options.secret, c.req.header("authorization"));
    if (!result.ok) {
      c.header("WWW-Authenticate", `Bearer error="invalid_token"`);
      return c.json(errorBody(result.code, result.message), 401);
    }
    c.set("principal", result.principal);
    await next();
  });

  const principalOf = (c: Context<Env>) => c.get("principal");
  const body = async (c: Context<Env>): Promise<unknown> => parseJson(await c.req.text());
  const threadParam = (c: Context<Env>) => {
    const id = c.req.param("thread_id") ?? "";
    if (!UUID.test(id)) throw notFound("thread");
    return id.toLowerCase();
  };
  const ownedThread = async (c: Context<Env>): Promise<ThreadRow> => {
    const thread = await store.get(ownerOf(principalOf(c)), threadParam(c));
    if (!thread) throw notFound("thread");
    return thread;
  };
  const ownedRun = async (c: Context<Env>, thread: ThreadRow): Promise<RunRow> => {
    const runId = c.req.param("run_id") ?? "";
    if (!UUID.test(runId)) throw notFound("run");
    const run = await store.getRun(ownerOf(principalOf(c)), thread.thread_id, runId.toLowerCase());
    if (!run) throw notFound("run");
    return run;
  };
  const snapshotOf = (threadId: string, checkpointId?: string) =>
    anyGraph().getState({ configurable: { thread_id: threadId, ...(checkpointId ? { checkpoint_id: checkpointId } : {}) } });

  // ---------------------------------------------------------------- info
  app.get("/info", (c) => c.json({ version: options.version, name: "warrant", flags: { assistants: true, crons: false, langsmith: false, langsmith_tracing_replicas: false } }));

  // ---------------------------------------------------------- assistants
  const assistantJson = (graphId: string) => ({
    assistant_id: graphId,
    graph_id: graphId,
    name: graphId,
    description: graphId === "agent" ? "Warrant's controlled agent" : "Warrant's fixed workflow (rules planner) on the same control plane",
    config: {},
    context: {},
    metadata: { created_by: "system" },
    version: 1,
    created_at: SERVER_STARTED,
    updated_at: SERVER_STARTED,
  });
  const assistantParam = (c: Context<Env>) => {
    const id = c.req.param("assistant_id") ?? "";
    if (!graphs.has(id)) throw notFound("assistant");
    return id;
  };
  const searchAssistants = (query: ReturnType<typeof AssistantSearch.parse>) =>
    [...graphs.keys()]
      .filter((id) => (query.graph_id === undefined || query.graph_id === id) && (query.name === undefined || id.includes(query.name)))
      .map(assistantJson)
      .slice(query.offset ?? 0, (query.offset ?? 0) + (query.limit ?? 10));
  app.post("/assistants/search", async (c) => c.json(searchAssistants(parseBody(AssistantSearch, (await body(c)) ?? {}))));
  app.post("/assistants/count", async (c) => c.json(searchAssistants({ ...parseBody(AssistantSearch, (await body(c)) ?? {}), limit: 1000, offset: 0 }).length));
  app.get("/assistants/:assistant_id", (c) => c.json(assistantJson(assistantParam(c))));
  app.get("/assistants/:assistant_id/schemas", (c) => c.json(assistantSchemas(assistantParam(c))));
  app.get("/assistants/:assistant_id/graph", async (c) => {
    const graph = graphs.get(assistantParam(c))!;
    return c.json((await graph.getGraphAsync()).toJSON());
  });
  app.get("/assistants/:assistant_id/subgraphs", (c) => {
    assistantParam(c);
    return c.json({});
  });
  const fixedAssistants = (c: Context<Env>) => c.json(errorBody("unsupported", "assistants are fixed by the server (agent, workflow)"), 422);
  app.post("/assistants", fixedAssistants);
  app.patch("/assistants/:assistant_id", fixedAssistants);
  app.delete("/assistants/:assistant_id", fixedAssistants);

  // ------------------------------------------------------------- threads
  const threadJson = async (thread: ThreadRow, withValues = true) => {
    const base = {
      thread_id: thread.thread_id,
      created_at: thread.created_at.toISOString(),
      updated_at: thread.updated_at.toISOString(),
      metadata: { ...thread.metadata, owner: thread.owner, tenant: thread.tenant, ...(thread.graph_id ? { graph_id: thread.graph_id, assistant_id: thread.graph_id } : {}) },
      status: thread.status,
      values: {} as unknown,
      interrupts: {} as Record<string, unknown[]>,
    };
    if (!withValues) return base;
    const snapshot = await snapshotOf(thread.thread_id);
    base.values = toWire(snapshot.values ?? {});
    for (const task of snapshot.tasks) if (task.interrupts.length > 0) base.interrupts[task.id] = toWire(task.interrupts);
    return base;
  };

  app.post("/threads", async (c) => {
    const request = parseBody(ThreadCreate, (await body(c)) ?? {});
    if (request.supersteps !== undefined) throw new ApiError("state_write_refused", "threads cannot be created with state (supersteps)");
    const owner = ownerOf(principalOf(c));
    const threadId = request.thread_id?.toLowerCase() ?? randomUUID();
    const created = await store.create(owner, { thread_id: threadId, metadata: clientMetadata(request.metadata) });
    if (created) return c.json(await threadJson(created, false));
    // The id exists: the caller's own thread may be returned (do_nothing); anybody else's is a conflict that reveals nothing.
    const mine = await store.get(owner, threadId);
    if (mine && request.if_exists === "do_nothing") return c.json(await threadJson(mine));
    throw new ApiError("thread_exists", "a thread with this id already exists");
  });
  app.post("/threads/search", async (c) => {
    const query = parseBody(ThreadSearch, (await body(c)) ?? {});
    const owner = ownerOf(principalOf(c));
    let rows = await store.search(owner, { metadata: query.metadata, status: query.status, limit: query.limit ?? 10, offset: query.offset ?? 0 });
    if (query.ids) rows = rows.filter((row) => query.ids!.includes(row.thread_id));
    return c.json(await Promise.all(rows.map((row) => threadJson(row))));
  });
  app.post("/threads/count", async (c) => {
    const query = parseBody(ThreadCount, (await body(c)) ?? {});
    return c.json(await store.count(ownerOf(principalOf(c)), { metadata: query.metadata, status: query.status }));
  });
  app.get("/threads/:thread_id", async (c) => c.json(await threadJson(await ownedThread(c))));
  app.patch("/threads/:thread_id", async (c) => {
    const thread = await ownedThread(c);
    const request = parseBody(ThreadPatch, await body(c));
    const updated = await store.patchMetadata(ownerOf(principalOf(c)), thread.thread_id, clientMetadata(request.metadata));
    if (!updated) throw notFound("thread");
    return c.json(await threadJson(updated));
  });
  app.delete("/threads/:thread_id", async (c) => {
    const thread = await ownedThread(c);
    const outcome = await store.delete(ownerOf(principalOf(c)), thread.thread_id);
    if (outcome === "missing") throw notFound("thread");
    if (outcome === "busy") throw new ApiError("thread_busy", "the thread has a run in progress; cancel it first");
    await deleteCheckpoints(anyGraph(), thread.thread_id);
    return c.body(null, 204);
  });
  app.post("/threads/:thread_id/copy", async (c) => {
    await ownedThread(c);
    throw new ApiError("unsupported", "copying threads is not supported (it would duplicate approvals)");
  });
  app.post("/threads/prune", () => {
    throw new ApiError("unsupported", "pruning is not supported; delete threads one by one");
  });

  // --------------------------------------------------------------- state
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
    if (checkpointId && snapshot.config?.configurable?.["checkpoint_id"] !== checkpointId) throw notFound("checkpoint");
    return c.json(stateJson(snapshot));
  };
  app.get("/threads/:thread_id/state", (c) => stateAt(c, undefined));
  app.get("/threads/:thread_id/state/:checkpoint_id", (c) => stateAt(c, c.req.param("checkpoint_id").slice(0, 128)));
  app.post("/threads/:thread_id/state/checkpoint", async (c) => {
    const request = parseBody(HistoryQuery.shape.checkpoint.unwrap(), await body(c));
    return stateAt(c, request.checkpoint_id);
  });
  const refuseStateWrite = async (c: Context<Env>) => {
    await ownedThread(c);
    throw new ApiError("state_write_refused", "thread state is written only by the graph; resume an interrupt with command.resume");
  };
  app.post("/threads/:thread_id/state", refuseStateWrite);
  app.patch("/threads/:thread_id/state", refuseStateWrite);

  const history = async (c: Context<Env>, query: ReturnType<typeof HistoryQuery.parse>) => {
    const thread = await ownedThread(c);
    const before = typeof query.before === "string" ? query.before : query.before?.checkpoint_id;
    const states: unknown[] = [];
    const config = { configurable: { thread_id: thread.thread_id, ...(query.checkpoint?.checkpoint_id ? { checkpoint_id: query.checkpoint.checkpoint_id } : {}) } };
    for await (const snapshot of anyGraph().getStateHistory(config, {
      limit: query.limit ?? 10,
      ...(before ? { before: { configurable: { thread_id: thread.thread_id, checkpoint_id: before } } } : {}),
      ...(query.metadata ? { filter: query.metadata } : {}),
    })) {
      states.push(stateJson(snapshot));
    }
    return c.json(states);
  };
  app.post("/threads/:thread_id/history", async (c) => history(c, parseBody(HistoryQuery, (await body(c)) ?? {})));
  app.get("/threads/:thread_id/history", async (c) => {
    const limit = c.req.query("limit");
    return history(c, parseBody(HistoryQuery, { ...(limit !== undefined ? { limit: Number(limit) } : {}), ...(c.req.query("before") ? { before: c.req.query("before") } : {}) }));
  });
  app.get("/threads/:thread_id/stream", async (c) => {
    await ownedThread(c);
    throw new ApiError("unsupported", "thread-level streaming is not supported; stream or join a run");
  });

  // ---------------------------------------------------------------- runs
  /** Validates a run request and starts it; everything checked before anything is written. */
  const startRun = async (c: Context<Env>, threadRow: ThreadRow | "stateless", raw: unknown) => {
    const principal = principalOf(c);
    // Before the schema, so the refusal names the real reason.
    const command = (raw as { command?: unknown } | null)?.command;
    if (command && typeof command === "object" && ("update" in command || "goto" in command)) {
      throw new ApiError("command_not_allowed", "clients may only send command.resume (update and goto are refused)");
    }
    const request = parseBody(RunCreate, raw);
    manager.graph(request.assistant_id);
    if (request.interrupt_before !== undefined || request.interrupt_after !== undefined) {
      throw new ApiError("unsupported", "interrupt_before/interrupt_after are not supported: reviews are decided by policy");
    }
    if (request.multitask_strategy !== undefined && request.multitask_strategy !== "reject") {
      throw new ApiError("unsupported", "only multitask_strategy \"reject\" is supported: one run per thread");
    }
    if (request.input && request.command) throw new ApiError("invalid_request", "send either input or command, not both");
    const input = request.input ? toGraphInput(request.input) : null;

    const threadId = threadRow === "stateless" ? randomUUID() : threadRow.thread_id;
    // A fork runs from the checkpoint it names: that is the state every check below looks at.
    const checkpointId = request.checkpoint_id ?? request.checkpoint?.checkpoint_id ?? undefined;
    const runnable = async () => {
      const head = await snapshotOf(threadId);
      const snapshot = checkpointId ? await forkTarget(anyGraph(), threadId, checkpointId, head) : head;
      assertRunnable(snapshot, request.command ? { resume: request.command.resume } : undefined, input !== null);
    };
    // Checked before the lease (a cheap, clear refusal) and again under it (the state may have moved meanwhile).
    if (threadRow !== "stateless" && threadRow.active_run) throw new ApiError("thread_busy", "the thread already has a run in progress");
    await runnable();
    const resume = request.command ? { value: request.command.resume } : undefined;
    // A stateless run gets a thread of its own once the request has passed every check.
    const thread = threadRow === "stateless" ? await store.create(ownerOf(principal), { thread_id: threadId, metadata: {} }) : threadRow;
    if (!thread) throw new ApiError("internal_error", "could not create a thread");

    return manager.start({
      principal,
      thread,
      assistantId: request.assistant_id,
      input,
      resume,
      streamModes: streamModes(request.stream_mode),
      checkpointId,
      verify: runnable,
      metadata: clientMetadata(request.metadata ?? undefined),
      ...(request.input ? { runBound: runBoundFor(requestText(request.input)) } : {}),
    }).then((active) => ({ active, request }));
  };

  const threadForRun = async (c: Context<Env>, raw: unknown): Promise<ThreadRow> => {
    const owner = ownerOf(principalOf(c));
    const threadId = threadParam(c);
    const existing = await store.get(owner, threadId);
    if (existing) return existing;
    if ((raw as RunCreateBody | null)?.if_not_exists === "create") {
      manager.graph(String((raw as RunCreateBody).assistant_id ?? ""));
      const created = await store.create(owner, { thread_id: threadId, metadata: {} });
      if (created) return created;
    }
    throw notFound("thread");
  };

  const runJson = (run: RunRow) => ({
    run_id: run.run_id,
    thread_id: run.thread_id,
    assistant_id: run.assistant_id,
    created_at: run.created_at.toISOString(),
    updated_at: run.updated_at.toISOString(),
    status: run.status,
    metadata: run.metadata,
    kwargs: run.kwargs,
    multitask_strategy: "reject",
    ...(run.error ? { error: run.error } : {}),
  });

  const locate = (c: Context<Env>, run: RunRow) => {
    c.header("Content-Location", `/threads/${run.thread_id}/runs/${run.run_id}`);
    c.header("Location", `/threads/${run.thread_id}/runs/${run.run_id}/stream`);
  };

  /** The thread's values as `runs.wait` and `join` return them. */
  const finalValues = async (run: RunRow | undefined, threadId: string) => {
    if (run?.status === "error") return { __error__: run.error ?? { error: "Error", message: "the run failed" } };
    const snapshot = await snapshotOf(threadId);
    const values = toWire<Record<string, unknown>>(snapshot.values ?? {});
    const pending = pendingInterrupts(snapshot);
    return pending.length > 0 ? { ...values, __interrupt__: toWire(pending) } : values;
  };

  const streamRun = (c: Context<Env>, run: RunRow) => {
    const log = manager.log(run.run_id);
    const lastEventId = parseLastEventId(c.req.header("last-event-id"));
    return streamSSE(c, async (stream) => {
      // A client that goes away only stops its own reader; the run goes on.
      stream.onAbort(() => undefined);
      if (!log) {
        // The run executes in another process (or finished long ago): wait for it, then send the final values.
        const ended = await manager.wait(ownerOf(principalOf(c)), run.thread_id, run.run_id, c.req.raw.signal);
        await stream.writeSSE({ event: "values", data: toWireJson(await finalValues(ended, run.thread_id)) });
        return;
      }
      for await (const event of log.read(lastEventId, c.req.raw.signal)) {
        await stream.writeSSE({ id: String(event.id), event: event.event, data: toWireJson(event.data) });
      }
    });
  };

  const deleteIfStateless = async (c: Context<Env>, request: RunCreateBody, run: RunRow) => {
    if (request.on_completion === "keep") return;
    const ended = await manager.wait(ownerOf(principalOf(c)), run.thread_id, run.run_id);
    if (ended?.status !== "success") return;
    if ((await manager.threadStatus(run.assistant_id, run.thread_id)) === "interrupted") return;
    await store.delete(ownerOf(principalOf(c)), run.thread_id);
    await deleteCheckpoints(anyGraph(), run.thread_id);
  };

  app.post("/threads/:thread_id/runs", async (c) => {
    const raw = await body(c);
    const { active } = await startRun(c, await threadForRun(c, raw), raw);
    locate(c, active.run);
    return c.json(runJson(active.run));
  });
  app.post("/threads/:thread_id/runs/stream", async (c) => {
    const raw = await body(c);
    const { active } = await startRun(c, await threadForRun(c, raw), raw);
    locate(c, active.run);
    return streamRun(c, active.run);
  });
  app.post("/threads/:thread_id/runs/wait", async (c) => {
    const raw = await body(c);
    const { active } = await startRun(c, await threadForRun(c, raw), raw);
    locate(c, active.run);
    const ended = await manager.wait(ownerOf(principalOf(c)), active.run.thread_id, active.run.run_id);
    return c.json(await finalValues(ended, active.run.thread_id));
  });
  app.post("/runs", async (c) => {
    const { active, request } = await startRun(c, "stateless", await body(c));
    locate(c, active.run);
    void deleteIfStateless(c, request, active.run).catch(() => undefined);
    return c.json(runJson(active.run));
  });
  app.post("/runs/stream", async (c) => {
    const { active, request } = await startRun(c, "stateless", await body(c));
    locate(c, active.run);
    void deleteIfStateless(c, request, active.run).catch(() => undefined);
    return streamRun(c, active.run);
  });
  app.post("/runs/wait", async (c) => {
    const { active, request } = await startRun(c, "stateless", await body(c));
    locate(c, active.run);
    const ended = await manager.wait(ownerOf(principalOf(c)), active.run.thread_id, active.run.run_id);
    const values = await finalValues(ended, active.run.thread_id);
    await deleteIfStateless(c, request, active.run);
    return c.json(values);
  });
  app.post("/runs/batch", () => {
    throw new ApiError("unsupported", "batch runs are not supported");
  });
  app.post("/runs/cancel", () => {
    throw new ApiError("unsupported", "cancel runs one by one: POST /threads/{thread_id}/runs/{run_id}/cancel");
  });

  app.get("/threads/:thread_id/runs", async (c) => {
    const thread = await ownedThread(c);
    const limit = Number(c.req.query("limit") ?? 10);
    const offset = Number(c.req.query("offset") ?? 0);
    const status = c.req.query("status");
    const query = parseBody(RunListQuery, { limit, offset, ...(status ? { status } : {}) });
    const runs = await store.listRuns(ownerOf(principalOf(c)), thread.thread_id, { limit: query.limit ?? 10, offset: query.offset ?? 0, status: query.status });
    return c.json(runs.map(runJson));
  });
  app.get("/threads/:thread_id/runs/:run_id", async (c) => c.json(runJson(await ownedRun(c, await ownedThread(c)))));
  app.delete("/threads/:thread_id/runs/:run_id", async (c) => {
    const run = await ownedRun(c, await ownedThread(c));
    if (run.status === "running" || run.status === "pending") throw new ApiError("thread_busy", "the run is still in progress; cancel it first");
    throw new ApiError("unsupported", "runs are kept as the thread's audit trail");
  });
  app.post("/threads/:thread_id/runs/:run_id/cancel", async (c) => {
    const thread = await ownedThread(c);
    const run = await ownedRun(c, thread);
    if (c.req.query("action") === "rollback") throw new ApiError("unsupported", "rollback is not supported: it would erase the ledger of effects");
    await manager.cancel(ownerOf(principalOf(c)), thread.thread_id, run.run_id);
    if (c.req.query("wait") === "1" || c.req.query("wait") === "true") {
      await manager.wait(ownerOf(principalOf(c)), thread.thread_id, run.run_id, c.req.raw.signal);
      return c.body(null, 204);
    }
    return c.body(null, 202);
  });
  app.get("/threads/:thread_id/runs/:run_id/join", async (c) => {
    const thread = await ownedThread(c);
    const run = await ownedRun(c, thread);
    const ended = await manager.wait(ownerOf(principalOf(c)), thread.thread_id, run.run_id, c.req.raw.signal);
    return c.json(await finalValues(ended, thread.thread_id));
  });
  app.get("/threads/:thread_id/runs/:run_id/stream", async (c) => {
    const thread = await ownedThread(c);
    const run = await ownedRun(c, thread);
    locate(c, run);
    return streamRun(c, run);
  });

  return app;
}

/** Whether the thread, at this snapshot, can take a resume, new input, or a continuation. */
function assertRunnable(snapshot: StateSnapshot, resume: { resume: unknown } | undefined, hasInput: boolean): void {
  const pending = pendingInterrupts(snapshot);
  if (resume) {
    if (pending.length === 0) throw new ApiError("no_pending_interrupt", "the thread has no pending interrupt to resume");
    // One plain value would answer EVERY pending interrupt; with several, the client must say which is which.
    if (pending.length > 1 && !answersEach(resume.resume, pending)) {
      throw new ApiError("invalid_request", "command.resume: several interrupts are pending; send a map keyed by interrupt id");
    }
  } else if (hasInput) {
    if (pending.length > 0) throw new ApiError("thread_busy", "the thread is waiting for a review decision; answer it with command.resume");
    // A run that stopped part-way (cancelled, or its server died) is finished first: starting over could strand an effect in flight.
    if (snapshot.next.length > 0) throw new ApiError("thread_unfinished", "the thread's last run stopped before it finished; continue it with input null first");
  } else if (pending.length > 0) {
    throw new ApiError("no_pending_interrupt", "the thread is waiting for a review decision; answer it with command.resume");
  } else if (snapshot.next.length === 0) {
    throw new ApiError("nothing_to_run", "the thread has nothing left to run; send input");
  }
}

function checkpointRef(config: { configurable?: Record<string, unknown> } | undefined) {
  const configurable = config?.configurable ?? {};
  return {
    thread_id: configurable["thread_id"] ?? null,
    checkpoint_ns: configurable["checkpoint_ns"] ?? "",
    checkpoint_id: configurable["checkpoint_id"] ?? null,
  };
}

function parseLastEventId(header: string | undefined): number | undefined {
  if (header === undefined || !/^[0-9]{1,9}$/.test(header)) return undefined;
  return Number(header);
}

/** Whether a resume value is a map with an entry for every pending interrupt id. */
function answersEach(value: unknown, pending: { id: string | undefined }[]): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return pending.every((item) => item.id !== undefined && keys.includes(item.id));
}

/**
 * The checkpoint a fork runs from. Refuses a fork that could replay an
 * approval or a write: when a review was answered after that checkpoint, or
 * a write was executed after it. Forking to the head is a no-op and allowed.
 */
async function forkTarget(graph: ServedGraph, threadId: string, checkpointId: string, head: StateSnapshot): Promise<StateSnapshot> {
  if (head.config?.configurable?.["checkpoint_id"] === checkpointId) return head;
  const target = await graph.getState({ configurable: { thread_id: threadId, checkpoint_id: checkpointId } });
  if (target.config?.configurable?.["checkpoint_id"] !== checkpointId) throw notFound("checkpoint");
  const ranAfter = new Set<string>(target.next);
  for await (const snapshot of graph.getStateHistory({ configurable: { thread_id: threadId } })) {
    if (snapshot.config?.configurable?.["checkpoint_id"] === checkpointId) break;
    if (snapshot.config?.configurable?.["checkpoint_id"] !== head.config?.configurable?.["checkpoint_id"]) for (const node of snapshot.next) ranAfter.add(node);
  }
  const key = (row: LedgerRow) => `${row.call_id}#${row.attempt}`;
  const before = new Set(((target.values as { ledger?: LedgerRow[] }).ledger ?? []).map(key));
  const writesAfter = ((head.values as { ledger?: LedgerRow[] }).ledger ?? []).some((row) => row.risk !== "read" && !before.has(key(row)));
  if (ranAfter.has("human_review") || writesAfter) {
    throw new ApiError("fork_refused", "forking to this checkpoint could replay an approval or a write");
  }
  return target;
}

/** Removes a thread's checkpoints (the saver's own delete). */
async function deleteCheckpoints(graph: ServedGraph, threadId: string): Promise<void> {
  const saver = graph.checkpointer;
  if (saver && typeof saver === "object" && "deleteThread" in saver && typeof saver.deleteThread === "function") {
    await (saver as { deleteThread(id: string): Promise<void> }).deleteThread(threadId);
  }
}

/** Reads and drops a request body, stopping after `cap` bytes. */
async function discardBody(request: Request, cap: number): Promise<void> {
  const reader = request.body?.getReader();
  if (!reader) return;
  let read = 0;
  try {
    while (read <= cap) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
    }
    await reader.cancel();
  } catch {
    // The client went away: nothing left to discard.
  }
}
