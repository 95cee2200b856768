/**
 * Every error Warrant raises or reports. One base class, a string-union code,
 * and guards by name/code (never `instanceof` across package copies).
 */

/** Codes a tool call can end with; they are shown to the planner as repairable observations. */
export const TOOL_ERROR_CODES = [
  // contract
  "unknown_tool",
  "invalid_arguments",
  "tool_not_permitted",
  // authorization
  "access_denied",
  "approval_required",
  "approval_rejected",
  "approval_expired",
  /** An OAuth-protected server needs the run's owner to authorize Warrant first (a URL to visit). */
  "authorization_required",
  // business
  "not_found",
  "capacity_exceeded",
  "tool_failed",
  /** A write run as an MCP task was cancelled at its server (a run cancel), and the server says it ended cancelled. */
  "task_cancelled",
  // transient
  "tool_timeout",
  "transient_error",
  // protocol
  "protocol_error",
  "server_unavailable",
  // unknown effect
  "outcome_unknown",
  // control: these also stop the run
  "budget_exhausted",
  "repeated_action",
] as const;
export type ToolErrorCode = (typeof TOOL_ERROR_CODES)[number];

export type ErrorClass =
  | "contract"
  | "authorization"
  | "business"
  | "transient"
  | "protocol"
  | "unknown_effect"
  | "control";

const CLASS_OF: Record<ToolErrorCode, ErrorClass> = {
  unknown_tool: "contract",
  invalid_arguments: "contract",
  tool_not_permitted: "contract",
  access_denied: "authorization",
  approval_required: "authorization",
  approval_rejected: "authorization",
  approval_expired: "authorization",
  authorization_required: "authorization",
  not_found: "business",
  capacity_exceeded: "business",
  tool_failed: "business",
  task_cancelled: "business",
  tool_timeout: "transient",
  transient_error: "transient",
  protocol_error: "protocol",
  server_unavailable: "protocol",
  outcome_unknown: "unknown_effect",
  budget_exhausted: "control",
  repeated_action: "control",
};

/** The retry class of a tool error code (DESIGN §6). */
export function errorClassOf(code: ToolErrorCode): ErrorClass {
  return CLASS_OF[code];
}

export function isToolErrorCode(value: unknown): value is ToolErrorCode {
  return typeof value === "string" && (TOOL_ERROR_CODES as readonly string[]).includes(value);
}

export type ConfigErrorCode =
  | "config_invalid"
  | "database_unreachable"
  | "mcp_start_failed"
  | "principal_unknown"
  | "principal_revoked";
export type ModelErrorCode =
  | "model_invalid_arguments"
  | "model_unknown_finish_reason"
  | "model_empty_reply"
  | "model_request_failed"
  | "model_invalid_usage";
/** `ledger_order`: a call's ledger rows are not what the journal knows they must be (a bug, never an input). */
export type RuntimeErrorCode = "illegal_transition" | "ledger_order" | "elicitation_url_refused";

/** Base of all Warrant errors. */
export class WarrantError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Bad configuration or an environment the process cannot start in. */
export class ConfigError extends WarrantError {
  declare readonly code: ConfigErrorCode;
  constructor(code: ConfigErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/** The model replied with something that is not a usable plan. */
export class ModelBehaviorError extends WarrantError {
  declare readonly code: ModelErrorCode;
  constructor(code: ModelErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/** A bug in the control plane itself (an illegal status transition). */
export class InvariantError extends WarrantError {
  declare readonly code: RuntimeErrorCode;
  constructor(code: RuntimeErrorCode, message: string) {
    super(code, message);
  }
}

/** A user must visit `url` and authorize Warrant before `owner` can use `server`. */
export class AuthorizationRequired extends Error {
  constructor(
    readonly server: string,
    readonly owner: string,
    readonly url: string,
  ) {
    super(`authorization required for ${server}`);
    this.name = "AuthorizationRequired";
  }
}

export function isAuthorizationRequired(error: unknown): error is AuthorizationRequired {
  return error instanceof Error && error.name === "AuthorizationRequired" && "url" in error;
}

/**
 * An authorization response that may not come from the server the resource names (RFC 9207 `iss`): its code is
 * never exchanged. Reported to the owner as `authorization_failed`.
 */
export class IssuerMismatch extends Error {
  constructor(message: string) {
    super(message);
    this.name = "IssuerMismatch";
  }
}

export function isIssuerMismatch(error: unknown): error is IssuerMismatch {
  return error instanceof Error && error.name === "IssuerMismatch";
}

/** A namespace, key, value or search a principal's store refused: where and why. */
export class StoreInputError extends Error {
  readonly code = "invalid_request" as const;
  constructor(readonly problem: StoreInputProblem) {
    super(`${problem.path}: ${problem.reason}`);
    this.name = new.target.name;
  }
}

export function isStoreInputError(error: unknown): error is StoreInputError {
  return error instanceof Error && error.name === "StoreInputError";
}

/** Why a namespace, key or value is refused: the path inside the body and the reason. */
export interface StoreInputProblem {
  path: string;
  reason: string;
}

export type CliErrorCode =
  | "usage"
  | "thread_not_found"
  | "idempotency_key_reused"
  /** `--resume` on a thread with no pending review (the API's 409 code). */
  | "no_pending_interrupt"
  /** Something the running server's API cannot do for the CLI. */
  | "unsupported"
  /** The identity provider could not be reached or gave no usable token. */
  | "auth_unavailable";

/** A refusal the CLI prints as one `warrant: <code>: <message>` line. */
export class CliError extends WarrantError {
  declare readonly code: CliErrorCode;
  constructor(code: CliErrorCode, message: string) {
    super(code, message);
  }
}

/** The database could not be reached (or kept failing transiently) for the whole retry budget. */
export class DatabaseUnavailableError extends WarrantError {
  declare readonly code: "database_unavailable";
  constructor(options?: { cause?: unknown }) {
    super("database_unavailable", "the database is unavailable right now; retry shortly", options);
  }
}

export const isDatabaseUnavailable = (error: unknown): error is DatabaseUnavailableError =>
  typeof error === "object" && error !== null && (error as { code?: unknown }).code === "database_unavailable";

/** Every connection of the pool stayed busy for the whole wait: retry shortly. */
export class DatabaseBusyError extends WarrantError {
  declare readonly code: "database_busy";
  constructor(waitMs: number, max: number) {
    super("database_busy", `all ${max} database connections stayed busy for ${waitMs} ms; retry shortly`);
  }
}

export const isDatabaseBusy = (error: unknown): error is DatabaseBusyError =>
  typeof error === "object" && error !== null && (error as { code?: unknown }).code === "database_busy";

/** A worker's first start failed; `line` is what it said (`warrant: <code>: <message>`), when it said it. */
export class WorkerStartFailure extends Error {
  constructor(
    message: string,
    readonly line: string | undefined,
  ) {
    super(message);
    this.name = "WorkerStartFailure";
  }
}

/** Codes the HTTP API answers with, always as `{ "error": code, "message": text }` (server/api-error.ts). */
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
  | "task_waiting"
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

/** The HTTP status each API error code is answered with. */
export const API_ERROR_STATUS: Record<ApiErrorCode, number> = {
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
  task_waiting: 409,
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
export const API_ERROR_CODES = Object.keys(API_ERROR_STATUS) as ApiErrorCode[];

/** A refusal of the HTTP API: a typed code and its status. */
export class ApiError extends WarrantError {
  declare readonly code: ApiErrorCode;
  readonly status: number;
  constructor(code: ApiErrorCode, message: string) {
    super(code, message);
    this.status = API_ERROR_STATUS[code];
  }
}

export const isApiError = (error: unknown): error is ApiError =>
  typeof error === "object" && error !== null && (error as { name?: unknown }).name === "ApiError";

function hasName(error: unknown, name: string): error is WarrantError {
  return typeof error === "object" && error !== null && (error as { name?: unknown }).name === name;
}

export const isConfigError = (error: unknown): error is ConfigError => hasName(error, "ConfigError");
export const isModelBehaviorError = (error: unknown): error is ModelBehaviorError =>
  hasName(error, "ModelBehaviorError");
export const isInvariantError = (error: unknown): error is InvariantError => hasName(error, "InvariantError");

/** One line, no stack: what a CLI prints before exiting non-zero. */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === "string" ? `${code}: ${error.message}` : `${error.name}: ${error.message}`;
  }
  return String(error);
}
