/**
 * Runs: create (background), stream, wait, join, cancel, stateless runs.
 * Everything a request could be refused for is checked before anything is
 * written, and the state checks are repeated under the thread's lease.
 */
import { randomUUID } from "node:crypto";
import { END } from "@langchain/langgraph";
import type { Context, Hono } from "hono";
import { streamSSE } from "hono/streaming";
import type { RunKeyRow } from "../../persistence/run-keys.js";
import type { RunRow, ThreadRow } from "../../persistence/thread-store.js";
import { ApiError, errorBody, notFound } from "../api-error.js";
import { isDatabaseBusy } from "../../persistence/pool.js";
import { isDatabaseUnavailable } from "../../persistence/retry.js";
import type { Env, RouteContext } from "../context.js";
import { eventInModes, toWire, toWireJson } from "../events.js";
import { assertRunnable, forkTarget, type RunAsk, type RunPlan } from "../run-checks.js";
import {
  clientMetadata,
  parseBody,
  refuseUnsupported,
  requestText,
  RunCreate,
  RunListQuery,
  streamModes,
  toGraphInput,
  toolPlaceholders,
  type RunCreateBody,
} from "../requests.js";
import { ownerOf, pendingInterrupts } from "../runs.js";
import { idempotencyKeyOf, replayedRun, runRequestHash } from "../idempotency.js";
import { admitWebhook } from "../../webhooks/run-webhook.js";

/** A run a request started, or (`Idempotency-Key` repeated) the one it started before. */
interface StartedRun {
  run: RunRow;
  request: RunCreateBody;
  /** The request carried an idempotency key. */
  keyed: boolean;
}

export function registerRunRoutes(app: Hono<Env>, context: RouteContext): void {
  const { manager, store, principalOf, body, threadParam, ownedThread, ownedRun, snapshotOf, anyGraph } = context;
  /**
   * Validates a run request and starts it; everything checked before anything
   * is written. With an `Idempotency-Key` already used by this principal, the
   * run it started is returned instead (`Idempotent-Replayed`), before any
   * check: the first request's run may well have consumed the interrupt it resumed.
   */
  const startRun = async (
    c: Context<Env>,
    threadRow: ThreadRow | "stateless",
    raw: unknown,
    where: "background" | "stream" | "wait",
  ): Promise<StartedRun> => {
    const principal = principalOf(c);
    const owner = ownerOf(principal);
    const threadId = threadRow === "stateless" ? randomUUID() : threadRow.thread_id;
    const key = idempotencyKeyOf(c);
    const hash =
      key === undefined ? "" : runRequestHash(threadRow === "stateless" ? "stateless" : threadRow.thread_id, raw);
    const replay = async (recorded: RunKeyRow): Promise<StartedRun> => {
      c.header("Idempotent-Replayed", "true");
      return {
        run: await replayedRun(store, owner, key as string, recorded, hash),
        request: parseBody(RunCreate, raw),
        keyed: true,
      };
    };
    if (key !== undefined) {
      const recorded = await store.runKeys.find(owner, key);
      if (recorded) return replay(recorded);
    }
    // Before the schema, so the refusal names the real reason.
    const command = (raw as { command?: unknown } | null)?.command;
    if (command && typeof command === "object" && ("update" in command || "goto" in command)) {
      if (endsThread(command)) {
        // agent-chat-ui's "Mark as resolved": refused while a review is pending (a review is never skipped).
        // The rest of the body is checked as a resume would be (an empty input beside the command is no input).
        const { command: _end, ...rest } = raw as Record<string, unknown>;
        manager.graph(parseBody(RunCreate, { ...rest, command: { resume: true } }).assistant_id);
        if (threadRow !== "stateless") assertRunnable(await snapshotOf(threadId), { kind: "end" });
        throw new ApiError("no_pending_interrupt", "the thread has no pending review to resolve");
      }
      throw new ApiError("command_not_allowed", "clients may only send command.resume (update and goto are refused)");
    }
    const request = parseBody(RunCreate, raw);
    manager.graph(request.assistant_id);
    if (request.interrupt_before !== undefined || request.interrupt_after !== undefined) {
      throw new ApiError(
        "unsupported",
        "interrupt_before/interrupt_after are not supported: reviews are decided by policy",
      );
    }
    if (request.multitask_strategy !== undefined && request.multitask_strategy !== "reject") {
      throw new ApiError("unsupported", 'only multitask_strategy "reject" is supported: one run per thread');
    }
    refuseUnsupported(request, where);
    const webhook = await admitWebhook(context, request.webhook);
    if (threadRow !== "stateless" && request.on_completion !== undefined) {
      throw new ApiError(
        "unsupported",
        "on_completion applies to stateless runs (POST /runs…) only; delete a thread with DELETE /threads/{id}",
      );
    }
    // The graphs have no subgraphs: a checkpoint namespace could only name one that does not exist.
    if (request.checkpoint?.checkpoint_ns)
      throw new ApiError("unsupported", "checkpoint.checkpoint_ns: the graphs have no subgraphs");
    if (request.checkpoint?.thread_id && request.checkpoint.thread_id.toLowerCase() !== threadId) {
      throw new ApiError("invalid_request", "checkpoint.thread_id: names another thread");
    }
    if (request.input && request.command)
      throw new ApiError("invalid_request", "send either input or command, not both");
    const input = request.input ? toGraphInput(request.input) : null;
    const ask: RunAsk = request.command
      ? { kind: "resume", value: request.command.resume }
      : request.input
        ? { kind: "input", placeholders: toolPlaceholders(request.input) }
        : { kind: "continue" };

    // A fork runs from the checkpoint it names: that is the state every check below looks at.
    const checkpointId = request.checkpoint_id ?? request.checkpoint?.checkpoint_id ?? undefined;
    let plan: RunPlan = { closeStopped: false };
    const runnable = async () => {
      const head = await snapshotOf(threadId);
      const snapshot = checkpointId ? await forkTarget(anyGraph(), threadId, checkpointId, head) : head;
      const ledger = ask.kind === "input" && snapshot.next.length > 0 ? await context.ledger.list(threadId) : [];
      plan = assertRunnable(snapshot, ask, ledger);
    };
    // Checked before the lease (a cheap, clear refusal) and again under it (the state may have moved meanwhile).
    // A run whose lease expired (its server died) is marked and the thread freed here, not at the next sweep.
    if (
      threadRow !== "stateless" &&
      threadRow.active_run &&
      (await manager.recoverOrphans(threadRow.thread_id)) === 0
    ) {
      throw new ApiError("thread_busy", "the thread already has a run in progress");
    }
    await runnable();
    const resume = request.command ? { value: request.command.resume } : undefined;
    const runId = randomUUID();
    if (key !== undefined) {
      // Claimed before anything starts: of two requests with one key, one starts and the other replays it.
      const claim = await store.runKeys.claim(owner, key, { request_hash: hash, thread_id: threadId, run_id: runId });
      if (!claim.claimed) return replay(claim.existing);
    }
    try {
      // A stateless run gets a thread of its own once the request has passed every check.
      const thread =
        threadRow === "stateless" ? await store.create(owner, { thread_id: threadId, metadata: {} }) : threadRow;
      if (!thread) throw new ApiError("internal_error", "could not create a thread");
      if (webhook) await context.webhooks?.register(owner, thread.thread_id, runId, webhook);
      const active = await manager.start({
        principal,
        thread,
        assistantId: request.assistant_id,
        input,
        resume,
        streamModes: streamModes(request.stream_mode),
        checkpointId,
        verify: runnable,
        get closeStopped() {
          return plan.closeStopped;
        },
        cancelOn: where !== "background" && request.on_disconnect === "cancel" ? c.req.raw.signal : undefined,
        metadata: clientMetadata(request.metadata ?? undefined),
        runId,
        ...(request.input ? { runBound: manager.runBoundFor(requestText(request.input)) } : {}),
      });
      return { run: active.run, request, keyed: key !== undefined };
    } catch (error) {
      // The run did not start: give the key back, so the client may retry with it.
      if (key !== undefined) await store.runKeys.release(owner, key, runId).catch(() => undefined);
      throw error;
    }
  };

  const threadForRun = async (c: Context<Env>, raw: unknown): Promise<ThreadRow> => {
    const owner = ownerOf(principalOf(c));
    const threadId = threadParam(c);
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
    ...(run.outcome ? { outcome: run.outcome } : {}),
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

  /**
   * A run's events as SSE, on whichever instance the client reached: the run
   * manager reads them from memory when this process executes the run, else
   * from Postgres, with the same ids, so `Last-Event-ID` resumes anywhere.
   */
  const streamRun = (c: Context<Env>, run: RunRow) => {
    const lastEventId = parseLastEventId(c.req.header("last-event-id"));
    const modes = c.req.queries("stream_mode");
    // A run that ended with no stored event (before the events table, or past its retention): its final values.
    const unstored = async (ended: RunRow) => [
      { id: undefined, event: "values", json: toWireJson(await finalValues(ended, run.thread_id)) ?? "null" },
    ];
    return streamSSE(c, async (stream) => {
      // A client that goes away only stops its own reader; the run goes on.
      stream.onAbort(() => undefined);
      // Comment lines while the run is quiet (a slow tool, a pending model call): the SDK
      // learns the cadence from them and reconnects (Last-Event-ID) when a socket dies.
      const heartbeat = setInterval(
        () => void stream.write(": heartbeat\n\n").catch(() => undefined),
        context.heartbeatMs,
      );
      try {
        for await (const event of manager.events(
          ownerOf(principalOf(c)),
          run,
          lastEventId,
          c.req.raw.signal,
          unstored,
        )) {
          if (!eventInModes(event.event, modes)) continue;
          await stream.writeSSE({
            ...(event.id === undefined ? {} : { id: String(event.id) }),
            event: event.event,
            data: event.json,
          });
        }
      } catch (error) {
        // The stream ends with a typed event, never the database's text; anything else is also logged (by Hono).
        const typed =
          isDatabaseUnavailable(error) || isDatabaseBusy(error)
            ? errorBody(error.code, error.message)
            : errorBody("internal_error", "the server failed to read the run's events");
        await stream.writeSSE({ event: "error", data: JSON.stringify(typed) }).catch(() => undefined);
        if (typed.error === "internal_error") throw error;
      } finally {
        clearInterval(heartbeat);
      }
    });
  };

  const deleteIfStateless = async (c: Context<Env>, started: StartedRun) => {
    const { request, run } = started;
    // A keyed run is kept, so that a repeat of its request can still be answered with it.
    if (request.on_completion === "keep" || started.keyed) return;
    const ended = await manager.wait(ownerOf(principalOf(c)), run.thread_id, run.run_id);
    if (ended?.status !== "success") return;
    if ((await manager.threadStatus(run.assistant_id, run.thread_id)) === "interrupted") return;
    await store.delete(ownerOf(principalOf(c)), run.thread_id);
    await context.deleteCheckpoints(run.thread_id);
  };

  app.post("/threads/:thread_id/runs", async (c) => {
    const raw = await body(c);
    const { run } = await startRun(c, await threadForRun(c, raw), raw, "background");
    locate(c, run);
    return c.json(runJson(run));
  });
  app.post("/threads/:thread_id/runs/stream", async (c) => {
    const raw = await body(c);
    const { run } = await startRun(c, await threadForRun(c, raw), raw, "stream");
    locate(c, run);
    return streamRun(c, run);
  });
  app.post("/threads/:thread_id/runs/wait", async (c) => {
    const raw = await body(c);
    const { run } = await startRun(c, await threadForRun(c, raw), raw, "wait");
    locate(c, run);
    const ended = await manager.wait(ownerOf(principalOf(c)), run.thread_id, run.run_id);
    return c.json(await finalValues(ended, run.thread_id));
  });
  app.post("/runs", async (c) => {
    const started = await startRun(c, "stateless", await body(c), "background");
    locate(c, started.run);
    void deleteIfStateless(c, started).catch(() => undefined);
    return c.json(runJson(started.run));
  });
  app.post("/runs/stream", async (c) => {
    const started = await startRun(c, "stateless", await body(c), "stream");
    locate(c, started.run);
    void deleteIfStateless(c, started).catch(() => undefined);
    return streamRun(c, started.run);
  });
  app.post("/runs/wait", async (c) => {
    const started = await startRun(c, "stateless", await body(c), "wait");
    locate(c, started.run);
    const ended = await manager.wait(ownerOf(principalOf(c)), started.run.thread_id, started.run.run_id);
    const values = await finalValues(ended, started.run.thread_id);
    await deleteIfStateless(c, started);
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
}

/** `command.goto` naming only the graph's end, with nothing else: agent-chat-ui's "Mark as resolved". */
function endsThread(command: object): boolean {
  const { goto, ...rest } = command as { goto?: unknown };
  const target = Array.isArray(goto) && goto.length === 1 ? goto[0] : goto;
  return target === END && Object.keys(rest).every((key) => (rest as Record<string, unknown>)[key] === undefined);
}

function parseLastEventId(header: string | undefined): number | undefined {
  if (header === undefined || !/^[0-9]{1,9}$/.test(header)) return undefined;
  return Number(header);
}
