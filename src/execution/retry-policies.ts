/**
 * The retry matrix of tool calls (DESIGN §6): one policy per kind of call —
 * `maxAttempts`, `retryOn` and a backoff with full jitter — run by the one
 * loop, `withRetries` (src/retry.ts), for reads, status checks and write
 * sends alike.
 */
import { errorClassOf, type ToolErrorCode } from "../errors.js";
import { MAX_WRITE_SENDS, type Risk } from "../policy/contracts.js";
import { jitteredBackoff, type RetryPolicy } from "../retry.js";

/** Why an attempt failed: a tool error code, or a write a status check found not applied. */
export type FailureReason = ToolErrorCode | "not_applied";

export function isRetryable(code: ToolErrorCode, risk: Risk): boolean {
  return risk === "read" && errorClassOf(code) === "transient";
}

/** Delay before attempt `attempt + 1` (attempt is 1-based): full jitter over 100 ms · 2^(attempt-1), capped at 2 s. */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  return jitteredBackoff(attempt, { baseMs: 100, maxMs: 2_000 }, random);
}

/**
 * Failures of a status check worth one more try: transient ones, and a server
 * that was unavailable (a lost response often means the server process went
 * away; the host reconnects it, and the question is harmless to repeat).
 */
export function statusCheckRetryable(code: FailureReason): boolean {
  return code === "tool_timeout" || code === "transient_error" || code === "server_unavailable";
}

/** The policy for each kind of call (the retry matrix of DESIGN §6). */
export const RETRY_POLICIES = {
  /** A read: transient failures, up to the contract's `max_attempts`, with backoff. */
  read: (maxAttempts: number): RetryPolicy<FailureReason> => ({
    maxAttempts,
    retryOn: (reason) => reason !== "not_applied" && isRetryable(reason, "read"),
    backoffMs: (attempt) => backoffMs(attempt),
  }),
  /** A status check of a write whose outcome is unknown: a read of the status tool, asked again while it is unreachable. */
  status: (maxAttempts: number): RetryPolicy<FailureReason> => ({
    maxAttempts,
    retryOn: statusCheckRetryable,
    backoffMs: (attempt) => backoffMs(attempt),
  }),
  /**
   * A write: never after a failure the server answered or an outcome still
   * unknown; sent again (same idempotency key, at once) only when a status
   * check found it not applied.
   */
  write: (): RetryPolicy<FailureReason> => ({
    maxAttempts: MAX_WRITE_SENDS,
    retryOn: (reason) => reason === "not_applied",
    backoffMs: () => 0,
  }),
} as const;
