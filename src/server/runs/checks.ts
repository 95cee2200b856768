/**
 * What a run request may do to a thread, decided from checkpoints: whether a
 * resume, new input or a continuation fits the thread's state, and whether a
 * fork to an earlier checkpoint could replay an approval or a write.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { StateSnapshot } from "@langchain/langgraph";
import type { LedgerRow } from "../../state/ledger.js";
import type { LeaseFields } from "../../stores/run-admission.js";
import type { ThreadStore } from "../../stores/thread-store.js";
import type { Owner } from "../../stores/thread-rows.js";
import { notFound } from "../api-error.js";
import { assertReviewOpen } from "../review-expiry.js";
import { checkpointIdFrom, threadConfig } from "../../run-config.js";
import { pendingInterrupts } from "./outcome.js";
import { unansweredToolCalls } from "./stopped.js";
import type { ServedGraph } from "./types.js";
import { ApiError } from "../../errors.js";
import { isTaskWaitInterrupt } from "../../execution/task-wait.js";

/** What a run request asks of the thread. */
export type RunAsk =
  | { kind: "resume"; value: unknown }
  /** New input; `placeholders` are agent-chat-ui's tool messages for unanswered tool calls. */
  | { kind: "input"; placeholders: readonly { tool_call_id: string }[] }
  | { kind: "continue" }
  /** `command.goto: "__end__"` (agent-chat-ui's "Mark as resolved"). */
  | { kind: "end" };

/** How the accepted request proceeds. */
export interface RunPlan {
  /** The thread's last run stopped part-way: close it (`cancelled`) before the new request starts. */
  closeStopped: boolean;
}

/**
 * Whether the thread, at this snapshot, can take the request. `ledger` is
 * the thread's durable ledger (a stopped run's write may be in it while the
 * checkpoint does not know of it yet); `owner` names who must ask again when
 * the pending review has expired.
 */
export function assertRunnable(
  snapshot: StateSnapshot,
  ask: RunAsk,
  ledger: readonly LedgerRow[] = [],
  owner = "its owner",
): RunPlan {
  const pending = pendingInterrupts(snapshot);
  const none: RunPlan = { closeStopped: false };
  // A write's MCP task is being waited for: only the server's poller resumes the thread (task-waits.ts).
  if (pending.some((item) => isTaskWaitInterrupt(item.value)))
    throw new ApiError(
      "task_waiting",
      "the thread waits for an MCP task of a write; it resumes by itself when the task ends, or cancel its run",
    );
  switch (ask.kind) {
    case "resume":
      if (pending.length === 0)
        throw new ApiError("no_pending_interrupt", "the thread has no pending interrupt to resume");
      // One plain value would answer EVERY pending interrupt; with several, the client must say which is which.
      if (pending.length > 1 && !answersEach(ask.value, pending)) {
        throw new ApiError(
          "invalid_request",
          "command.resume: several interrupts are pending; send a map keyed by interrupt id",
        );
      }
      // An expired review is refused before anything runs, as the inbox refuses it.
      for (const item of pending) assertReviewOpen(item.value, owner);
      return none;
    case "end":
      // Ending the thread must never skip a review: it would drop a decision nobody made.
      if (pending.length > 0)
        throw reviewPending(pending, "answer the pending review (approve, edit or reject) first; it cannot be skipped");
      throw new ApiError("no_pending_interrupt", "the thread has no pending review to resolve");
    case "continue":
      if (pending.length > 0) throw reviewPending(pending, "answer it with command.resume (approve, edit or reject)");
      if (snapshot.next.length === 0)
        throw new ApiError("nothing_to_run", "the thread has nothing left to run; send input");
      return none;
    case "input": {
      if (pending.length > 0)
        throw reviewPending(
          pending,
          "answer the pending review (approve, edit or reject) before sending a new message",
        );
      const unanswered = new Set(
        unansweredToolCalls(((snapshot.values ?? {}) as { messages?: BaseMessage[] }).messages ?? []).map(
          (call) => call.id,
        ),
      );
      for (const placeholder of ask.placeholders) {
        if (!unanswered.has(placeholder.tool_call_id)) {
          throw new ApiError(
            "invalid_request",
            "input.messages: a tool message may only stand for a tool call of this thread that has no result;" +
              " tool results come from the server",
          );
        }
      }
      if (snapshot.next.length === 0) return none;
      // The last run stopped part-way (cancelled, or its server died). It is closed, never
      // resumed, unless a write it started may have taken effect: that is settled first.
      const doubtful = writesInDoubt(ledger);
      if (doubtful.length > 0) {
        throw new ApiError(
          "thread_unfinished",
          `the stopped run left a write whose outcome is unknown (${doubtful
            .map((row) => `${row.tool} ${row.call_id}`)
            .join(", ")
            .slice(0, 300)}); continue the thread with input null to settle it first`,
        );
      }
      return { closeStopped: true };
    }
  }
}

/** 409 `review_pending`, naming the pending actions (tool and action_id). */
function reviewPending(pending: { value: unknown }[], advice: string): ApiError {
  const actions = pending.flatMap((item) => pendingActions(item.value));
  const named =
    actions.length > 0
      ? actions
          .map((action) => `${action.name}${action.action_id ? ` (action_id ${action.action_id})` : ""}`)
          .join(", ")
      : "an interrupt";
  return new ApiError("review_pending", `a review is pending for ${named.slice(0, 600)}; ${advice}`);
}

/** The actions of one interrupt value (Warrant's approval request), defensively read. */
export function pendingActions(value: unknown): { name: string; action_id: string | undefined }[] {
  if (typeof value !== "object" || value === null) return [];
  const requests = (value as { action_requests?: unknown }).action_requests;
  const approvals = (value as { approvals?: unknown }).approvals;
  if (!Array.isArray(requests)) return [];
  return requests.map((request: unknown, index) => {
    const name =
      typeof (request as { name?: unknown } | null)?.name === "string"
        ? String((request as { name: string }).name).slice(0, 128)
        : "an action";
    const approval = Array.isArray(approvals) ? (approvals[index] as { action_id?: unknown } | undefined) : undefined;
    return { name, action_id: typeof approval?.action_id === "string" ? approval.action_id.slice(0, 128) : undefined };
  });
}

/**
 * Writes whose effect is unknown: the latest attempt of a non-read call is
 * still `running` (its process stopped mid-call) or `outcome_unknown` and
 * never reconciled.
 */
export function writesInDoubt(ledger: readonly LedgerRow[]): LedgerRow[] {
  const latest = new Map<string, LedgerRow>();
  for (const row of ledger) {
    if (row.risk === "read") continue;
    const seen = latest.get(row.call_id);
    if (!seen || row.attempt > seen.attempt) latest.set(row.call_id, row);
  }
  return [...latest.values()].filter(
    (row) => row.status === "running" || (row.status === "outcome_unknown" && !row.reconciled_by),
  );
}

/** Whether a resume value is a map with an entry for every pending interrupt id. */
function answersEach(value: unknown, pending: { id: string | undefined }[]): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  return pending.every((item) => item.id !== undefined && Object.hasOwn(value, item.id));
}

/**
 * The checkpoint a fork runs from. Refuses a fork that could replay an
 * approval or a write: when a review was answered after that checkpoint, or
 * a write was executed after it. Forking to the head is a no-op and allowed.
 */
export async function forkTarget(
  graph: ServedGraph,
  threadId: string,
  checkpointId: string,
  head: StateSnapshot,
): Promise<StateSnapshot> {
  if (checkpointIdFrom(head.config) === checkpointId) return head;
  const target = await graph.getState(threadConfig(threadId, checkpointId));
  if (checkpointIdFrom(target.config) !== checkpointId) throw notFound("checkpoint");
  const ranAfter = new Set<string>(target.next);
  for await (const snapshot of graph.getStateHistory(threadConfig(threadId))) {
    if (checkpointIdFrom(snapshot.config) === checkpointId) break;
    if (checkpointIdFrom(snapshot.config) !== checkpointIdFrom(head.config))
      for (const node of snapshot.next) ranAfter.add(node);
  }
  const key = (row: LedgerRow) => `${row.call_id}#${row.attempt}`;
  const before = new Set(((target.values as { ledger?: LedgerRow[] }).ledger ?? []).map(key));
  const writesAfter = ((head.values as { ledger?: LedgerRow[] }).ledger ?? []).some(
    (row) => row.risk !== "read" && !before.has(key(row)),
  );
  if (ranAfter.has("human_review") || writesAfter) {
    throw new ApiError("fork_refused", "forking to this checkpoint could replay an approval or a write");
  }
  return target;
}

/**
 * Admits a run in one atomic step in Postgres (run-admission.ts): takes the
 * thread's lease while its owner has fewer than `limit` runs in progress, in
 * any process. Throws 429 `too_many_runs` over the limit, 409 `thread_busy`
 * when another run holds the thread.
 */
export async function admitRun(
  store: ThreadStore,
  owner: Owner,
  threadId: string,
  runId: string,
  options: { leaseMs: number; limit: number; fields: LeaseFields },
): Promise<void> {
  const admission = await store.admission.admit(owner, threadId, runId, options);
  if (admission.type === "over_limit")
    throw new ApiError(
      "too_many_runs",
      `at most ${options.limit} runs may be in progress at once; wait for one to finish`,
    );
  if (admission.type === "thread_busy") throw new ApiError("thread_busy", "the thread already has a run in progress");
}
