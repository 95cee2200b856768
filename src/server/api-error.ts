/**
 * Errors the HTTP API answers with: a status and a typed code, always as
 * `{ "error": code, "message": text }`. Nothing else (no stack, no
 * validation dump, no echo of the request) reaches the client.
 */
import { WarrantError } from "../errors.js";

export type ApiErrorCode =
  | "token_missing"
  | "token_malformed"
  | "token_invalid"
  | "token_expired"
  | "token_revoked"
  | "token_issuer_unknown"
  | "token_audience_mismatch"
  | "token_algorithm_refused"
  | "token_header_refused"
  | "principal_unmapped"
  | "principal_revoked"
  | "invalid_json"
  | "invalid_request"
  | "body_too_large"
  | "not_found"
  | "thread_busy"
  | "thread_exists"
  | "thread_unfinished"
  | "review_pending"
  | "no_pending_interrupt"
  | "review_expired"
  | "approver_not_permitted"
  | "nothing_to_run"
  | "command_not_allowed"
  | "state_write_refused"
  | "fork_refused"
  | "unsupported"
  | "too_many_runs"
  | "too_many_crons"
  | "webhook_refused"
  | "idempotency_key_reused"
  | "idempotency_key_in_use"
  | "shutting_down"
  | "database_busy"
  | "database_unavailable"
  | "auth_unavailable"
  | "elicitation_forbidden"
  | "invalid_state"
  | "expired_state"
  | "authorization_forbidden"
  | "authorization_failed"
  | "elicitation_closed"
  | "invalid_elicitation_answer"
  | "internal_error";

const STATUS: Record<ApiErrorCode, number> = {
  token_missing: 401,
  token_malformed: 401,
  token_invalid: 401,
  token_expired: 401,
  token_revoked: 401,
  token_issuer_unknown: 401,
  token_audience_mismatch: 401,
  token_algorithm_refused: 401,
  token_header_refused: 401,
  principal_unmapped: 401,
  principal_revoked: 401,
  invalid_json: 400,
  invalid_request: 422,
  body_too_large: 413,
  not_found: 404,
  thread_busy: 409,
  thread_exists: 409,
  thread_unfinished: 409,
  review_pending: 409,
  no_pending_interrupt: 409,
  review_expired: 409,
  approver_not_permitted: 403,
  nothing_to_run: 409,
  command_not_allowed: 400,
  state_write_refused: 403,
  fork_refused: 409,
  unsupported: 422,
  too_many_runs: 429,
  too_many_crons: 429,
  webhook_refused: 422,
  idempotency_key_reused: 422,
  idempotency_key_in_use: 409,
  shutting_down: 503,
  database_busy: 503,
  database_unavailable: 503,
  auth_unavailable: 503,
  elicitation_forbidden: 403,
  invalid_state: 400,
  expired_state: 400,
  authorization_forbidden: 403,
  authorization_failed: 400,
  elicitation_closed: 409,
  invalid_elicitation_answer: 422,
  internal_error: 500,
};

/** Every code the API answers with (the OpenAPI document's error body lists them). */
export const API_ERROR_CODES = Object.keys(STATUS) as ApiErrorCode[];

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

export class ApiError extends WarrantError {
  declare readonly code: ApiErrorCode;
  readonly status: number;
  constructor(code: ApiErrorCode, message: string) {
    super(code, message);
    this.status = STATUS[code];
  }
}

export const isApiError = (error: unknown): error is ApiError =>
  typeof error === "object" && error !== null && (error as { name?: unknown }).name === "ApiError";

/** The one shape of every error body. */
export function errorBody(code: ApiErrorCode, message: string): { error: ApiErrorCode; message: string } {
  return { error: code, message };
}

export const notFound = (what: string) => new ApiError("not_found", `${what} not found`);
