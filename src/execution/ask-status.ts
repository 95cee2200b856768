/**
 * Asking a write's status tool whether the write was applied (DESIGN §6):
 * as the write's principal, with the write's idempotency key, each try its
 * own ledger row (a read that `reconciles` the write's attempt), asked again
 * while its server is unreachable (the status policy), after waiting for the
 * host to reconnect a server that went away.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { InvariantError, type ToolErrorCode } from "../errors.js";
import type { CatalogTool } from "../policy/contracts.js";
import { injectArguments } from "../policy/authorization.js";
import type { ReconcileContract } from "../policy/contracts.js";
import { actionFingerprint } from "../policy/fingerprint.js";
import { type AttemptResult, done, failed, withRetries } from "../retry.js";
import type { LedgerRow } from "../state/ledger.js";
import type { Allowed, CallContext, CallJournal } from "./call-journal.js";
import { readStatus, statusArguments } from "./reconcile.js";
import { type FailureReason, RETRY_POLICIES } from "./retry-policies.js";

/** How often a status check looks whether its server is back. */
const HEALTH_POLL_MS = 100;

/** Waits up to `timeoutMs` for `server` to be healthy; false when it is not (or the run was aborted). */
async function awaitHealthy(context: CallContext, server: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!context.tools.isHealthy(server)) {
    if (Date.now() >= deadline || context.signal?.aborted) return false;
    await sleep(HEALTH_POLL_MS);
  }
  return true;
}

export type StatusCheck =
  | { kind: "applied" | "not_applied"; row: LedgerRow; structured: unknown }
  | { kind: "unreachable"; code: ToolErrorCode };

/** Asks the status tool, as the write's principal, with the write's key; each try is its own ledger row. */
export async function askStatus(
  action: Allowed,
  tool: CatalogTool,
  statusTool: CatalogTool,
  rule: ReconcileContract,
  key: string,
  context: CallContext,
  journal: CallJournal,
  unknownRow: LedgerRow,
): Promise<StatusCheck> {
  const args = statusArguments({
    rule,
    key,
    writeContract: tool.contract,
    writeArgs: action.args,
    statusContract: statusTool.contract,
    injected: injectArguments(statusTool, {}, context.principal, context.threadId),
  });
  const fingerprint = actionFingerprint(statusTool.name, args);
  const policy = RETRY_POLICIES.status(statusTool.contract.max_attempts);
  if (policy.maxAttempts < 1) return { kind: "unreachable", code: "budget_exhausted" };
  return withRetries(policy, async (): Promise<AttemptResult<StatusCheck, FailureReason>> => {
    // A lost response often means the server process died; the host reconnects it in the background.
    if (!(await awaitHealthy(context, statusTool.server, statusTool.contract.timeout_ms)))
      return done({ kind: "unreachable", code: "server_unavailable" });
    const started = await journal.attempt(statusTool, args, {
      risk: "read",
      fingerprint,
      idempotency_key: null,
      reconciles: unknownRow.attempt,
    });
    if (started.kind === "history_found")
      throw new InvariantError("ledger_order", "a status check is never a call's first row");
    if (started.kind === "no_budget") return done({ kind: "unreachable", code: "budget_exhausted" });
    const { outcome, row } = started;
    if (outcome.ok) {
      const answer = readStatus(outcome.structured, rule);
      return done(
        answer.kind === "unreadable"
          ? { kind: "unreachable", code: "protocol_error" }
          : { kind: answer.kind, row, structured: outcome.structured },
      );
    }
    return failed(outcome.code, { kind: "unreachable", code: outcome.code });
  });
}
