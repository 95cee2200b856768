/**
 * Retries as data (DESIGN §6): one policy type and one loop for everything
 * Warrant repeats — tool calls (their policies in src/execution/retry-policies.ts)
 * and database statements (src/db/retry.ts). An attempt says whether it is
 * done or why it failed; the policy alone decides whether another attempt
 * starts and after how long. Nothing is thrown to steer the loop. A leaf: it
 * imports nothing of Warrant's, so every layer may use it.
 */
import { setTimeout as sleep } from "node:timers/promises";

export interface RetryPolicy<Reason = string> {
  /** Attempts in total, the first included (`Infinity`: bounded by `budgetMs` alone). */
  maxAttempts: number;
  /** Whether a failure for this reason is worth another attempt. */
  retryOn(reason: Reason): boolean;
  /** Delay before attempt `attempt + 1` (attempt is 1-based), in ms. */
  backoffMs(attempt: number): number;
  /** Time from the first attempt's start past which no wait begins: the last failure is returned instead. */
  budgetMs?: number;
}

/** One attempt's result: done (whatever it found), or failed for a reason the policy judges. */
export type AttemptResult<T, Reason = string> = { done: true; value: T } | { done: false; reason: Reason; value: T };

export const done = <T>(value: T): { done: true; value: T } => ({ done: true, value });
export const failed = <T, Reason>(reason: Reason, value: T): { done: false; reason: Reason; value: T } => ({
  done: false,
  reason,
  value,
});

/**
 * Full jitter over an exponential ceiling: a whole number of ms drawn from
 * [0, min(maxMs, baseMs · 2^(attempt-1))), attempt 1-based.
 */
export function jitteredBackoff(
  attempt: number,
  ceiling: { baseMs: number; maxMs: number },
  random: () => number = Math.random,
): number {
  return Math.floor(random() * Math.min(ceiling.maxMs, ceiling.baseMs * 2 ** (attempt - 1)));
}

/**
 * Runs `attempt` until it is done, its failure is not one the policy retries,
 * the policy's attempts are used up, or the next wait would end past its
 * budget; returns the last attempt's value. `firstAttempt` counts attempts
 * an earlier execution already made (a write recovered after a crash starts
 * at the number of sends it found).
 */
export async function withRetries<T, Reason>(
  policy: RetryPolicy<Reason>,
  attempt: (number: number) => Promise<AttemptResult<T, Reason>>,
  options: { firstAttempt?: number; wait?: (ms: number) => Promise<unknown>; now?: () => number } = {},
): Promise<T> {
  const wait = options.wait ?? ((ms: number) => sleep(ms));
  const now = options.now ?? Date.now;
  const started = now();
  for (let number = options.firstAttempt ?? 1; ; number += 1) {
    const result = await attempt(number);
    if (result.done || number >= policy.maxAttempts || !policy.retryOn(result.reason)) return result.value;
    const delay = policy.backoffMs(number);
    if (policy.budgetMs !== undefined && now() - started + delay > policy.budgetMs) return result.value;
    if (delay > 0) await wait(delay);
  }
}
