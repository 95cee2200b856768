/**
 * Follow-ups: a run that ended `needs_human` for missing facts leaves its
 * question in `state.pending`; the thread's next message is read as the
 * answer to it first. The domain that asked decides (through its provider)
 * whether the message answers it and what the completed request is; the
 * control plane only keeps the record and hands the message back. Pure.
 */
import type { ContextProvider } from "../ports.js";
import type { PendingQuestion } from "../state/domain-context.js";

/** What a new run is about: the message as written, or the pending request it completes. */
export interface ResolvedRequest {
  request: string;
  /** Set when the message answered a pending question (the provider that read it). */
  answered?: { provider: string; question: string };
}

/** The request a new run starts with, reading `message` as the answer to `pending` first. */
export function resolveRequest(
  providers: readonly ContextProvider[],
  pending: PendingQuestion | null | undefined,
  message: string,
): ResolvedRequest {
  if (!pending) return { request: message };
  const provider = providers.find((candidate) => candidate.name === pending.provider);
  const completed = provider?.readAnswer?.(pending, message);
  return completed === undefined
    ? { request: message }
    : { request: completed, answered: { provider: pending.provider, question: pending.question } };
}

/** The question a run ending `needs_human` leaves for the next message, or null when no domain asked for facts. */
export function pendingFrom(
  providers: readonly ContextProvider[],
  input: { run_id: string; request: string; reason: string },
): PendingQuestion | null {
  for (const provider of providers) {
    const asked = provider.pendingQuestion?.({ request: input.request, reason: input.reason });
    if (asked && asked.missing.length > 0)
      return {
        provider: provider.name,
        run_id: input.run_id,
        request: asked.request,
        missing: [...asked.missing],
        question: input.reason,
      };
  }
  return null;
}
