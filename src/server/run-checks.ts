/**
 * What a run request may do to a thread, decided from checkpoints: whether a
 * resume, new input or a continuation fits the thread's state, and whether a
 * fork to an earlier checkpoint could replay an approval or a write.
 */
import type { StateSnapshot } from "@langchain/langgraph";
import type { LedgerRow } from "../runtime/ledger.js";
import { ApiError, notFound } from "./api-error.js";
import { pendingInterrupts, type ServedGraph } from "./runs.js";
import { checkpointIdFrom, threadConfig } from "../runtime/run-config.js";

/** Whether the thread, at this snapshot, can take a resume, new input, or a continuation. */
export function assertRunnable(snapshot: StateSnapshot, resume: { resume: unknown } | undefined, hasInput: boolean): void {
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
    throw new ApiError("thread_busy", "the thread is waiting for a review decision; answer it with command.resume");
  } else if (snapshot.next.length === 0) {
    throw new ApiError("nothing_to_run", "the thread has nothing left to run; send input");
  }
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
export async function forkTarget(graph: ServedGraph, threadId: string, checkpointId: string, head: StateSnapshot): Promise<StateSnapshot> {
  if (checkpointIdFrom(head.config) === checkpointId) return head;
  const target = await graph.getState(threadConfig(threadId, checkpointId));
  if (checkpointIdFrom(target.config) !== checkpointId) throw notFound("checkpoint");
  const ranAfter = new Set<string>(target.next);
  for await (const snapshot of graph.getStateHistory(threadConfig(threadId))) {
    if (checkpointIdFrom(snapshot.config) === checkpointId) break;
    if (checkpointIdFrom(snapshot.config) !== checkpointIdFrom(head.config)) for (const node of snapshot.next) ranAfter.add(node);
  }
  const key = (row: LedgerRow) => `${row.call_id}#${row.attempt}`;
  const before = new Set(((target.values as { ledger?: LedgerRow[] }).ledger ?? []).map(key));
  const writesAfter = ((head.values as { ledger?: LedgerRow[] }).ledger ?? []).some((row) => row.risk !== "read" && !before.has(key(row)));
  if (ranAfter.has("human_review") || writesAfter) {
    throw new ApiError("fork_refused", "forking to this checkpoint could replay an approval or a write");
  }
  return target;
}
