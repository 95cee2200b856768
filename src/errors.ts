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
