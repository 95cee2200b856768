/**
 * What each error code means, as data: the source of docs/reference/errors.md (`npm run docs`).
 * Keyed by the code unions of errors.ts and server/api-error.ts, so a new code without a meaning fails the type check.
 */
import type { ConfigErrorCode, ModelErrorCode, RuntimeErrorCode, ToolErrorCode, ApiErrorCode } from "./errors.js";

/** A tool call's result code: what the planner observes and the ledger records (never an HTTP status). */
export const TOOL_ERROR_MEANINGS: Record<ToolErrorCode, string> = {
  unknown_tool: "The proposed tool is not in the catalog. Returned to the planner as a repairable error.",
  invalid_arguments: "The arguments do not match the tool's input schema (strict: unknown fields are refused).",
  tool_not_permitted:
    "The tool exists but is not offered to this principal at this step (scopes, stage, risk, health, pin), " +
    "or a run-bound argument differs from the run's value.",
  access_denied:
    "The run's owner may not act on this resource; unauthorized and nonexistent resources look the same, " +
    "so existence cannot be probed.",
  approval_required: "The call needs a reviewer's decision before it runs; the run pauses in human_review.",
  approval_rejected: "A reviewer rejected the call; it never runs. The reviewer's message is the observation.",
  approval_expired: "The approval passed its expiry before it was decided; the call never runs.",
  authorization_required:
    "An OAuth-protected MCP server needs the run's owner to authorize Warrant first; the run pauses with a URL to visit.",
  not_found: "The tool ran and found nothing for these arguments.",
  capacity_exceeded: "The tool ran and the request cannot fit (e.g. a schedule beyond the daily limit).",
  tool_failed: "The tool ran and reported an error of its own.",
  task_cancelled:
    "A write its server ran as an MCP task was cancelled there (the run was cancelled) and the server says the task " +
    "ended cancelled, so it was not applied. A task that completed anyway is recorded as succeeded.",
  tool_timeout: "No answer within the contract's timeout. Retried for read tools only, bounded, with backoff.",
  transient_error: "A failure expected to pass. Retried for read tools only, bounded, with backoff.",
  protocol_error: "The server broke the MCP protocol (a malformed reply); the session is reinitialized.",
  server_unavailable: "The MCP server is down or unhealthy; its tools are withheld until it recovers.",
  outcome_unknown:
    "A write was sent but its result never arrived, so whether it took effect is unknown. It is never re-sent blindly: " +
    "the host asks the server by idempotency key whether it was applied (reconcile), or stops the run.",
  budget_exhausted:
    "A per-run limit was reached (model turns, tool calls, deadline, tokens or cost); the run stops and names the budget.",
  repeated_action: "The same tool with the same arguments (action fingerprint) passed its repeat limit; the run stops.",
};

/** Errors that stop a process or a run, not a single call. */
export const PROCESS_ERROR_MEANINGS: Record<ConfigErrorCode | ModelErrorCode | RuntimeErrorCode, string> = {
  config_invalid: "warrant.config.json or an environment variable is invalid; the process does not start.",
  database_unreachable: "The database at DATABASE_URL cannot be reached at start.",
  mcp_start_failed: "A configured MCP server could not be started or initialized.",
  principal_unknown: "The named principal is not in the principal directory.",
  principal_revoked: "The principal exists but has been revoked.",
  model_invalid_arguments: "The model proposed a tool call whose arguments are not valid JSON.",
  model_unknown_finish_reason: "The model's reply ended for a reason the planner does not know.",
  model_empty_reply: "The model replied with neither tool calls nor an answer.",
  model_request_failed: "The request to the model provider failed.",
  model_invalid_usage: "The model provider reported token usage that cannot be right.",
  illegal_transition:
    "A run status transition outside the transition table: a bug in the control plane, never an input.",
  ledger_order: "A call's ledger rows are not what the journal knows they must be: a bug, never an input.",
  elicitation_url_refused:
    "A server's URL-mode elicitation named a URL the host refuses to show (not https, or http off loopback, " +
    "credentials in it, too long, control characters): the server gets this code as an invalid-params error " +
    "(on 2026-07-28, where an input response cannot be an error, a `decline`), the refusal is audited and no one " +
    "is asked.",
};

/** Errors the HTTP API answers with, as `{ "error": code, "message": text }`; the status is ApiError's. */
export const API_ERROR_MEANINGS: Record<ApiErrorCode, string> = {
  token_missing: "No bearer token (`Authorization: Bearer` or `X-Api-Key`).",
  token_malformed: "The token is not a well-formed token.",
  token_invalid: "The token's signature or contents do not verify.",
  token_expired: "The token has expired.",
  token_revoked: "The token was revoked.",
  token_issuer_unknown: "The token's issuer is not a configured identity provider.",
  token_audience_mismatch: "The token was issued for another audience.",
  token_algorithm_refused: "The token is signed with an algorithm the server does not accept.",
  token_header_refused: "The token's header carries fields the server refuses.",
  principal_unmapped: "The token verifies but maps to no principal in the directory.",
  principal_revoked: "The token's principal has been revoked.",
  invalid_json: "The request body is not JSON.",
  invalid_request: "The request does not match the route's schema.",
  body_too_large: "The body is larger than WARRANT_MAX_BODY_BYTES.",
  not_found: "No such route or resource, or one the caller may not see.",
  thread_busy: "The thread already has a run in progress (one run at a time per thread).",
  thread_exists: "A thread with this id already exists.",
  thread_unfinished: "The thread's last run has not finished.",
  review_pending: "The thread is waiting for a review; answer it before starting another run.",
  no_pending_interrupt: "A resume was sent but nothing is waiting for one.",
  task_waiting:
    "The thread waits for an MCP task of a write; the server resumes it when the task ends (only the server may).",
  review_expired: "The approval expired before it was decided.",
  approver_not_permitted: "The caller may not decide this review (review policy per risk).",
  nothing_to_run: "The request has no input, command or resume.",
  command_not_allowed: "Clients may not send `command.update` or `goto`.",
  state_write_refused: "Clients may not write a thread's state.",
  fork_refused: "Forking from this checkpoint could replay an approval or a write.",
  unsupported: "The API option exists in LangGraph but Warrant does not support it.",
  too_many_runs: "The principal has WARRANT_MAX_ACTIVE_RUNS runs already; retry after `Retry-After`.",
  too_many_crons: "The principal has WARRANT_MAX_CRONS crons already.",
  webhook_refused: "The webhook's destination is not allowlisted.",
  idempotency_key_reused: "The idempotency key was used before with a different request.",
  idempotency_key_in_use: "A request with this idempotency key is still running.",
  shutting_down: "The server is shutting down; retry on another instance.",
  database_busy: "No database connection within WARRANT_PG_POOL_WAIT_MS; retry after `Retry-After`.",
  database_unavailable: "The database cannot be reached; retry after `Retry-After`.",
  auth_unavailable: "The identity provider's keys cannot be fetched; retry after `Retry-After`.",
  elicitation_forbidden: "The caller may not answer this elicitation.",
  invalid_state: "The OAuth callback's state is unknown.",
  expired_state: "The OAuth callback's state has expired.",
  authorization_forbidden: "The OAuth callback belongs to another principal.",
  authorization_failed: "The authorization server refused the code exchange.",
  elicitation_closed: "The elicitation was already answered, cancelled or expired.",
  invalid_elicitation_answer: "The answer does not match the elicitation's requested schema.",
  internal_error: "A bug on the server; the body says nothing more, the log has the details.",
};
