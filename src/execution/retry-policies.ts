/**
 * Retries as data (DESIGN §6): one policy per kind of call — `maxAttempts`,
 * `retryOn` and a backoff with full jitter — and one loop, `withRetries`,
 * that runs reads, status checks and write sends alike. An attempt says
 * whether it is done or why it failed; the policy alone decides whether
 * another attempt starts. Nothing is thrown to steer the loop.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { errorClassOf, type ToolErrorCode } from "../errors.js";
import type { Risk } from "../policy/contracts.js";

/** Why an attempt failed: a tool error code, or a write a status check found not applied. */
export type FailureReason = ToolErrorCode | "not_applied";

export interface RetryPolicy {
  /** Attempts in total, the first included. */
  maxAttempts: number;
  /** Whether a failure for this reason is worth another attempt. */
  retryOn(reason: FailureReason): boolean;
  /** Delay before attempt `attempt + 1`, in ms. */
  backoffMs(attempt: number): number;
}

/** One attempt's result: done (whatever it found), or failed for a reason the policy judges. */
export type AttemptResult<T> = { done: true; value: T } | { done: false; reason: FailureReason; value: T };

export const done = <T>(value: T): AttemptResult<T> => ({ done: true, value });
export const failed = <T>(reason: FailureReason, value: T): AttemptResult<T> => ({ done: false, reason, value });

export function isRetryable(code: ToolErrorCode, risk: Risk): boolean {
  return risk === "read" && errorClassOf(code) === "transient";
}

/** Delay before attempt `attempt + 1` (attempt is 1-based): full jitter over 100 ms · 2^(attempt-1), capped at 2 s. */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(2_000, 100 * 2 ** (attempt - 1));
  return Math.floor(random() * ceiling);
}

/**
 * Failures of a status check worth one more try: transient ones, and a server
 * that was unavailable (a lost response often means the server process went
 * away; the host reconnects it, and the question is harmless to repeat).
 */
export function statusCheckRetryable(code: FailureReason): boolean {
  return code === "tool_timeout" || code === "transient_error" || code === "server_unavailable";
}

/** How many times one write intent may be sent in total: the first attempt and one retry after a "not applied". */
export const MAX_WRITE_SENDS = 2;

/** The policy for each kind of call (the retry matrix of DESIGN §6). */
export const RETRY_POLICIES = {
  /** A read: transient failures, up to the contract's `max_attempts`, with backoff. */
  read: (maxAttempts: number): RetryPolicy => ({
    maxAttempts,
    retryOn: (reason) => reason !== "not_applied" && isRetryable(reason, "read"),
    backoffMs: (attempt) => backoffMs(attempt),
  }),
  /** A status check of a write whose outcome is unknown: a read of the status tool, asked again while it is unreachable. */
  status: (maxAttempts: number): RetryPolicy => ({
    maxAttempts,
    retryOn: statusCheckRetryable,
    backoffMs: (attempt) => backoffMs(attempt),
  }),
  /**
   * A write: never after a failure the server answered or an outcome still
   * unknown; sent again (same idempotency key, at once) only when a status
   * check found it not applied.
   */
  write: (): RetryPolicy => ({
    maxAttempts: MAX_WRITE_SENDS,
    retryOn: (reason) => reason === "not_applied",
    backoffMs: () => 0,
  }),
} as const;

/**
 * Runs `attempt` until it is done, its failure is not one the policy retries,
 * or the policy's attempts are used up; returns the last attempt's value.
 * `firstAttempt` counts attempts an earlier execution already made (a write
 * recovered after a crash starts at the number of sends it found).
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  attempt: (number: number) => Promise<AttemptResult<T>>,
  options: { firstAttempt?: number; wait?: (ms: number) => Promise<unknown> } = {},
): Promise<T> {
  const wait = options.wait ?? ((ms: number) => sleep(ms));
  for (let number = options.firstAttempt ?? 1; ; number += 1) {
    const result = await attempt(number);
    if (result.done || number >= policy.maxAttempts || !policy.retryOn(result.reason)) return result.value;
    const delay = policy.backoffMs(number);
    if (delay > 0) await wait(delay);
  }
}
