/**
 * Reconciling writes whose outcome is unknown (DESIGN §6 "unknown effect",
 * §9 recovery): the rules, as pure functions. The calls and their ledger rows
 * are made by src/execution/run-write.ts and src/execution/ask-status.ts.
 *
 * The rule: a write that timed out, lost its response or was cut off by a
 * crash is never re-run blindly. If its contract names a status tool, that
 * tool is asked (a read, same idempotency key, same identity) whether the
 * write was applied: applied → the write succeeded; not applied → it may be
 * retried once with the same key (the server dedupes by key, so even a late
 * first attempt cannot create a second effect); no answer → the outcome stays
 * unknown and the run stops for a human (see `plan`).
 */
import type { ToolErrorCode } from "../errors.js";
import type { ReconcileContract, ToolContract } from "../policy/contracts.js";

/**
 * Failures after which a write may or may not have been applied: the request
 * left, but no readable answer came back. An error the server itself answered
 * (`isError`) is a known outcome and is not in this list.
 */
const UNKNOWN_EFFECT_CODES: readonly ToolErrorCode[] = [
  "tool_timeout",
  "server_unavailable",
  "protocol_error",
  "outcome_unknown",
];

/** Whether a write that ended with `code` may have been applied anyway. */
export function effectUnknown(code: ToolErrorCode): boolean {
  return UNKNOWN_EFFECT_CODES.includes(code);
}

/** The argument of a write that carries its host-made idempotency key, if the contract injects one. */
export function idempotencyArgument(contract: ToolContract): string | undefined {
  return Object.entries(contract.injected).find(([, source]) => source === "action.idempotency_key")?.[0];
}

/** What a status tool said, read from its structured result. */
export type StatusAnswer = { kind: "applied" } | { kind: "not_applied" } | { kind: "unreadable" };

/** Reads the contract's `applied_field` as a strict boolean; anything else is unreadable, never a guess. */
export function readStatus(structured: unknown, rule: ReconcileContract): StatusAnswer {
  if (typeof structured !== "object" || structured === null || Array.isArray(structured)) return { kind: "unreadable" };
  const value = (structured as Record<string, unknown>)[rule.applied_field];
  if (value === true) return { kind: "applied" };
  if (value === false) return { kind: "not_applied" };
  return { kind: "unreadable" };
}

/**
 * The status tool's arguments: the write's idempotency key, and every
 * host-injected identity taken from the write's own arguments when the write
 * carried the same source (so the question is asked as the write's principal,
 * even when a reviewer resumed the run), else from `injected`.
 */
export function statusArguments(options: {
  rule: ReconcileContract;
  key: string;
  writeContract: ToolContract;
  writeArgs: Record<string, unknown>;
  statusContract: ToolContract;
  injected: Record<string, unknown>;
}): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const [name, source] of Object.entries(options.statusContract.injected)) {
    const writeName = Object.entries(options.writeContract.injected).find(
      ([, writeSource]) => writeSource === source,
    )?.[0];
    if (writeName !== undefined && Object.hasOwn(options.writeArgs, writeName))
      args[name] = options.writeArgs[writeName];
    else if (Object.hasOwn(options.injected, name)) args[name] = options.injected[name];
  }
  args[options.rule.key_argument] = options.key;
  return args;
}
