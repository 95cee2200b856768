/**
 * Running a write (DESIGN §6 "unknown effect", §9 recovery): it is sent once
 * with its idempotency key; a write whose outcome is unknown (timeout, lost
 * response, or found `running` after a crash) is never re-run blindly but
 * reconciled through its contract's status tool (src/execution/ask-status.ts),
 * and sent again with the same key only when that tool found it not applied.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { NormalizedResult } from "../mcp/normalize.js";
import type { CatalogTool } from "../policy/contracts.js";
import { type AttemptResult, done, failed, withRetries } from "../retry.js";
import type { LedgerRow } from "../state/ledger.js";
import { askStatus } from "./ask-status.js";
import type { Allowed, CallJournal } from "./call-journal.js";
import { type ExecuteContext, failure, notStarted, type Settled, settled, success } from "./call-outcome.js";
import { MAX_WRITE_SENDS } from "../policy/contracts.js";
import { type FailureReason, RETRY_POLICIES } from "./retry-policies.js";

/**
 * Writes: each attempt sends the write (or, recovering, settles the send an
 * earlier execution made) and reconciles an unknown outcome; the write policy
 * sends again, with the same key, only after a status check found it not applied.
 */
export function runWrite(
  action: Allowed,
  tool: CatalogTool,
  context: ExecuteContext,
  journal: CallJournal,
  key: string | null,
  recovered: LedgerRow | undefined,
  sendsMade: number,
): Promise<Settled> {
  let earlier = recovered;
  const attempt = async (send: number): Promise<AttemptResult<Settled, FailureReason>> => {
    let unknownRow = earlier;
    earlier = undefined;
    if (!unknownRow) {
      // Same arguments, so the same idempotency key: the server applies it at most once even if an attempt lands late.
      const sent = await journal.attempt(tool, action.args, {
        risk: action.risk,
        fingerprint: action.fingerprint,
        idempotency_key: key,
      });
      if (sent.kind !== "ran") return done(notStarted(action, sent));
      const { row, outcome } = sent;
      if (outcome.ok) return done(settled(success(action, outcome.text, outcome.structured)));
      if (row.status !== "outcome_unknown") return done(settled(failure(action, outcome.code, outcome.message)));
      unknownRow = row;
    }
    return reconcile(action, tool, context, journal, key, unknownRow, send >= MAX_WRITE_SENDS);
  };
  return withRetries(RETRY_POLICIES.write(), attempt, { firstAttempt: Math.max(1, sendsMade) });
}

/**
 * Settles a write attempt whose outcome is unknown by asking the contract's
 * status tool. Applied → succeeded; not applied → failed for `not_applied`
 * (the write policy decides whether to send again); no readable answer →
 * `outcome_unknown`.
 */
async function reconcile(
  action: Allowed,
  tool: CatalogTool,
  context: ExecuteContext,
  journal: CallJournal,
  key: string | null,
  lost: LedgerRow,
  lastSend: boolean,
): Promise<AttemptResult<Settled, FailureReason>> {
  let unknownRow = lost;
  // A task whose server went away while it was polled: once the server is back, ask the task (not the status tool).
  if (unknownRow.task_id !== undefined && tool.contract.task && unknownRow.error_code === "server_unavailable") {
    const resumed = await resumeLostTask(tool, context, journal, unknownRow);
    if (resumed?.outcome.ok) return done(settled(success(action, resumed.outcome.text, resumed.outcome.structured)));
    if (resumed && !resumed.outcome.ok && resumed.row.status === "failed")
      return done(settled(failure(action, resumed.outcome.code, resumed.outcome.message)));
    // Still unknown (the task forgotten, the server gone again): the status tool settles it.
    if (resumed) unknownRow = resumed.row;
  }
  const rule = tool.contract.reconcile;
  const statusTool = rule ? context.decide.catalog.find(rule.tool) : undefined;
  if (!rule || !statusTool || key === null) {
    const message = "the write may have been applied, and there is no way to check it; it was not repeated";
    return done(settled(failure(action, "outcome_unknown", message)));
  }
  const answer = await askStatus(action, tool, statusTool, rule, key, context, journal, unknownRow);
  if (answer.kind === "unreachable") {
    const message = `the write may have been applied and its status could not be checked (${answer.code}); it was not repeated`;
    return done(settled(failure(action, "outcome_unknown", message)));
  }
  if (answer.kind === "applied") {
    await journal.finish(unknownRow, { status: "succeeded", error_code: null, reconciled_by: answer.row.attempt });
    const structured = { reconciled: true, status_tool: statusTool.name, status: answer.structured };
    return done(settled(success(action, JSON.stringify(structured), structured)));
  }
  // Known now: that attempt was not applied.
  // Keep what was observed (a timeout, a lost connection); an attempt cut off by a crash observed nothing.
  const code =
    unknownRow.error_code && unknownRow.error_code !== "outcome_unknown" ? unknownRow.error_code : "tool_failed";
  await journal.finish(unknownRow, { status: "failed", error_code: code, reconciled_by: answer.row.attempt });
  // What the call ends with when the write policy sends no more: its budget is spent and the effect never happened,
  // which only a person can settle (observe stops the run `needs_human`, naming the write).
  const message = `the write was not applied (checked with ${statusTool.name}) and has already been retried once`;
  const ended = failure(action, code, message);
  return failed("not_applied", settled(lastSend ? { ...ended, unfinished: true } : ended));
}

/** How long a task's server may take to come back before its task is given up to the status tool. */
const TASK_SERVER_WAIT_MS = 15_000;

/** Polls a task again once its server is healthy (it was restarted); undefined when it does not come back in time. */
async function resumeLostTask(
  tool: CatalogTool,
  context: ExecuteContext,
  journal: CallJournal,
  row: LedgerRow,
): Promise<{ row: LedgerRow; outcome: NormalizedResult } | undefined> {
  const deadline = Date.now() + Math.min(TASK_SERVER_WAIT_MS, tool.contract.timeout_ms);
  while (!context.tools.isHealthy(tool.server) && Date.now() < deadline)
    await sleep(100, undefined, context.signal ? { signal: context.signal } : undefined);
  return context.tools.isHealthy(tool.server) ? journal.resumeTask(tool, row) : undefined;
}
