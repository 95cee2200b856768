/**
 * The retry matrix of DESIGN §6: only transient failures of read tools are
 * retried, with bounded exponential backoff and full jitter.
 */
import { errorClassOf, type ToolErrorCode } from "../errors.js";
import type { Risk } from "./ledger.js";

export function isRetryable(code: ToolErrorCode, risk: Risk): boolean {
  return risk === "read" && errorClassOf(code) === "transient";
}

/** Delay before attempt `attempt + 1` (attempt is 1-based): full jitter over 100 ms · 2^(attempt-1), capped at 2 s. */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(2_000, 100 * 2 ** (attempt - 1));
  return Math.floor(random() * ceiling);
}
