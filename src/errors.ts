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
export type RuntimeErrorCode = "illegal_transition" | "ledger_order";

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
