/**
 * Runs for the callers of `/mcp` and `/a2a/{assistant_id}`: another agent or
 * an MCP client asks in one message and reads back where the run went. Both
 * endpoints start runs through `startRunAs` (start.ts), the one
 * way in that the LangGraph routes use, so the body checks, the review, the
 * budgets, the run limit and the thread's lease apply unchanged; the
 * principal is the authenticated request's, never anything in the message.
 *
 * Neither endpoint ever resumes a run: a review is decided in the inbox
 * (`/reviews/{thread_id}`) or by the owner's own resume on the LangGraph
 * routes, so nothing an MCP or A2A caller sends can approve a write.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { Principal } from "../../auth/principal.js";
import type { Owner, RunRow, ThreadRow } from "../../stores/thread-rows.js";
import { delay } from "./abort.js";
import { notFound } from "../api-error.js";
import type { RouteContext } from "../context.js";
import { parseBody } from "../request-fields.js";
import { ownerOf } from "./types.js";
import { pendingInterrupts } from "./outcome.js";
import { RunCreate, toGraphInput } from "./requests.js";
import { startRunAs } from "./start.js";
import { ApiError } from "../../errors.js";

/** Where a run stands, as both endpoints report it (A2A task states, in snake case). */
export type ExternalRunState = "working" | "input_required" | "auth_required" | "completed" | "failed" | "canceled";

export const RUN_STATES = ["working", "input_required", "auth_required", "completed", "failed", "canceled"] as const;

/** A run as `/mcp` returns it (its structured content) and A2A maps it onto a task. */
export const RunViewSchema = z.object({
  state: z.enum(RUN_STATES),
  thread_id: z.string(),
  run_id: z.string(),
  assistant_id: z.string(),
  /** The agent's status (`completed`, `abstained`, `stopped`, …) and why it stopped, once known. */
  status: z.string().nullable(),
  termination_reason: z.unknown(),
  answer: z.string().nullable(),
  citations: z.array(z.record(z.string(), z.unknown())),
  abstained: z.boolean().nullable(),
  /** The pending review: where it is decided (the inbox) and what it asks for; never decidable here. */
  review: z
    .object({
      url: z.string(),
      page_url: z.string(),
      actions: z.array(z.object({ name: z.string(), description: z.string().nullable() })),
    })
    .nullable(),
  /** The servers the owner must authorize (an `authorization_required` pause), with their links. */
  authorization: z.array(z.object({ server: z.string(), authorization_url: z.string() })).nullable(),
  error: z.object({ error: z.string(), message: z.string() }).nullable(),
});
export type RunView = z.infer<typeof RunViewSchema>;

/** How long a call waits for its run to end (or pause) before answering `working`. */
export const DEFAULT_WAIT_MS = 45_000;

/** Most runs of a thread read to follow a task through its resumes. */
const RUNS_READ = 100;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface ExternalAsk {
  assistantId: string;
  text: string;
  /** The caller's own thread to continue; absent: a new thread. */
  threadId?: string | undefined;
}

/**
 * Starts a run for `principal` from one message, on the principal's thread
 * or a new one (created only once the request has passed its checks).
 * Throws `ApiError` with the API's codes (`not_found` for a thread that is
 * not the caller's, `review_pending`, `thread_busy`, `too_many_runs`, …).
 */
export async function startExternalRun(context: RouteContext, principal: Principal, ask: ExternalAsk): Promise<RunRow> {
  const owner = ownerOf(principal);
  const body = { assistant_id: ask.assistantId, input: { messages: [{ role: "user", content: ask.text }] } };
  let thread: ThreadRow | undefined;
  if (ask.threadId !== undefined) {
    if (!UUID.test(ask.threadId)) throw notFound("thread");
    thread = await context.store.get(owner, ask.threadId.toLowerCase());
    if (!thread) throw notFound("thread");
  } else {
    // The request must be valid before a thread is written for it.
    const request = parseBody(RunCreate, body);
    context.manager.graph(request.assistant_id);
    if (request.input) toGraphInput(request.input);
    thread = await context.store.create(owner, { thread_id: randomUUID(), metadata: {} });
    if (!thread) throw new ApiError("internal_error", "could not create a thread");
  }
  try {
    return (await startRunAs(context, principal, thread, body, { delivery: "wait" })).run;
  } catch (error) {
    // A new thread whose first run was refused (the run limit, a shutdown) is not left behind empty.
    if (ask.threadId === undefined) await context.store.delete(owner, thread.thread_id).catch(() => undefined);
    throw error;
  }
}

/** Waits up to `ms` for the run to end (a pause for review ends it too). */
export async function waitBriefly(context: RouteContext, owner: Owner, run: RunRow, ms: number): Promise<void> {
  const stop = new AbortController();
  try {
    await Promise.race([context.manager.wait(owner, run.thread_id, run.run_id, stop.signal), delay(ms, stop.signal)]);
  } finally {
    stop.abort();
  }
}

/** Links to the review of a thread, on the server the caller reached. */
export function reviewLinks(origin: string, threadId: string): { url: string; page_url: string } {
  return { url: `${origin}/reviews/${threadId}`, page_url: `${origin}/?thread=${threadId}` };
}

/**
 * Where the run `runId` of the caller's thread `threadId` stands, followed
 * through the resumes that came after it (a reviewer's decision is a new
 * run on the same thread) up to the next new message. `not_found` when the
 * thread or run is not the caller's.
 */
export async function describeRun(
  context: RouteContext,
  principal: Principal,
  threadId: string,
  runId: string,
  origin: string,
): Promise<RunView> {
  if (!UUID.test(threadId) || !UUID.test(runId)) throw notFound("run");
  const owner = ownerOf(principal);
  const run = await context.store.getRun(owner, threadId.toLowerCase(), runId.toLowerCase());
  if (!run) throw notFound("run");
  const { latest, superseded } = await followResumes(context, owner, run);
  // The thread's checkpoint says more only while this task is the thread's last and its run has ended.
  const ended = latest.status !== "running" && latest.status !== "pending";
  const snapshot = ended && !superseded ? await context.snapshotOf(run.thread_id) : undefined;
  return runView({
    run,
    latest,
    superseded,
    origin,
    ...(snapshot
      ? {
          values: (snapshot.values ?? {}) as ThreadValues,
          pending: pendingInterrupts(snapshot).map((entry) => entry.value),
        }
      : {}),
  });
}

/** The public values of a thread's checkpoint that a view reads. */
export interface ThreadValues {
  status?: unknown;
  termination_reason?: unknown;
  result?: { answer?: unknown; citations?: unknown; abstained?: unknown } | null;
}

/**
 * A task's view from what was read: its first run, the last run of its
 * chain, whether a later message superseded it, and (when it is the
 * thread's last) the checkpoint's values and pending interrupts.
 */
export function runView(input: {
  run: RunRow;
  latest: RunRow;
  superseded: boolean;
  origin: string;
  values?: ThreadValues | undefined;
  pending?: unknown[] | undefined;
}): RunView {
  const { run, latest, origin } = input;
  const base: RunView = {
    state: "working",
    thread_id: run.thread_id,
    run_id: run.run_id,
    assistant_id: run.assistant_id,
    status: null,
    termination_reason: null,
    answer: null,
    citations: [],
    abstained: null,
    review: null,
    authorization: null,
    error: null,
  };
  if (latest.status === "running" || latest.status === "pending") return base;
  if (latest.status === "error" || latest.status === "timeout")
    return { ...base, state: "failed", error: latest.error ?? { error: "run_failed", message: "the run failed" } };
  if (latest.status === "interrupted") return { ...base, state: "canceled" };
  if (input.superseded || input.values === undefined) {
    // A later message started a new task on the thread: this one ended where its last run left it.
    const status = latest.outcome?.status ?? null;
    return { ...base, state: stateOf(status), status, termination_reason: latest.outcome?.termination_reason ?? null };
  }
  const values = input.values;
  const status = typeof values.status === "string" ? values.status : null;
  const view: RunView = { ...base, status, termination_reason: values.termination_reason ?? null };
  const pending = input.pending ?? [];
  const authorization = pending.flatMap(authorizationAsks);
  if (authorization.length > 0) return { ...view, state: "auth_required", authorization };
  if (pending.length > 0)
    return {
      ...view,
      state: "input_required",
      review: { ...reviewLinks(origin, run.thread_id), actions: pending.flatMap(reviewActions) },
    };
  const result = values.result;
  return {
    ...view,
    state: stateOf(status),
    answer: typeof result?.answer === "string" ? result.answer : null,
    citations: Array.isArray(result?.citations)
      ? result.citations.filter((item): item is Record<string, unknown> => typeof item === "object" && item !== null)
      : [],
    abstained: typeof result?.abstained === "boolean" ? result.abstained : null,
  };
}

/** The run's state once it ended without a pause, from the agent's terminal status. */
function stateOf(status: string | null): ExternalRunState {
  if (status === "completed" || status === "abstained") return "completed";
  if (status === "cancelled") return "canceled";
  return "failed";
}

/** The last run of the task that began with `run`: the resumes after it, up to the thread's next message. */
async function followResumes(
  context: RouteContext,
  owner: Owner,
  run: RunRow,
): Promise<{ latest: RunRow; superseded: boolean }> {
  const runs = (await context.store.listRuns(owner, run.thread_id, { limit: RUNS_READ, offset: 0 })).reverse();
  const index = runs.findIndex((row) => row.run_id === run.run_id);
  if (index < 0) return { latest: run, superseded: true };
  let latest = run;
  for (const row of runs.slice(index + 1)) {
    if (row.kwargs["kind"] === "input") return { latest, superseded: true };
    latest = row;
  }
  return { latest, superseded: false };
}

function authorizationAsks(value: unknown): { server: string; authorization_url: string }[] {
  const asks = (value as { authorization_required?: unknown } | null)?.authorization_required;
  if (!Array.isArray(asks)) return [];
  return asks.flatMap((ask: { server?: unknown; authorization_url?: unknown }) =>
    typeof ask?.server === "string" && typeof ask.authorization_url === "string"
      ? [{ server: ask.server, authorization_url: ask.authorization_url }]
      : [],
  );
}

function reviewActions(value: unknown): { name: string; description: string | null }[] {
  const requests = (value as { action_requests?: unknown } | null)?.action_requests;
  if (!Array.isArray(requests)) return [];
  return requests.flatMap((request: { name?: unknown; description?: unknown }) =>
    typeof request?.name === "string"
      ? [{ name: request.name, description: typeof request.description === "string" ? request.description : null }]
      : [],
  );
}
