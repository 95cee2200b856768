/**
 * What the HTTP API adds to its errors (src/errors.ts: `ApiError`, its codes
 * and statuses): the one body shape, `Retry-After`, and the not-found refusal.
 * Nothing else (no stack, no validation dump, no echo of the request) reaches
 * the client.
 */
import { ApiError, type ApiErrorCode } from "../errors.js";

/**
 * Seconds a client should wait before retrying, sent as `Retry-After`: a
 * principal's run slot frees when one of its runs ends, a pool connection
 * within milliseconds; one second keeps a backing-off client from spinning.
 */
export const RETRY_AFTER_SECONDS: Partial<Record<ApiErrorCode, number>> = {
  too_many_runs: 1,
  database_busy: 1,
  database_unavailable: 1,
  auth_unavailable: 1,
};

/** The one shape of every error body. */
export function errorBody(code: ApiErrorCode, message: string): { error: ApiErrorCode; message: string } {
  return { error: code, message };
}

export const notFound = (what: string) => new ApiError("not_found", `${what} not found`);
