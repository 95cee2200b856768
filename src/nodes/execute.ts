/**
 * execute: runs the allowed calls through MCP. Each attempt gets a ledger row
 * written before the call starts and updated after it ends; only transient
 * failures of read tools are retried blindly. A write whose outcome is unknown
 * (timeout, lost response, or found `running` after a crash) is reconciled
 * through its contract's status tool (src/runtime/reconcile.ts), never re-run
 * blindly. Before a call starts, its authorization is checked again against
 * the owner's current permissions (a scope revoked while an approval waited
 * is `access_denied`, ledger row `denied`, nothing called). Every call acts
 * for the run's owner, whoever sent the request that resumed it.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { ToolErrorCode } from "../errors.js";
import type { Host } from "../host.js";
import type { CatalogTool } from "../mcp/catalog.js";
import type { NormalizedResult } from "../mcp/normalize.js";
import { authorizeFor, injectArguments } from "../policy/authorization.js";
import { remainingToolCalls } from "../policy/budgets.js";
import type { ReconcileContract } from "../policy/contracts.js";
import { allowed } from "../policy/decision.js";
import { actionFingerprint } from "../policy/fingerprint.js";
import { runStartOf } from "../runtime/audit-chain.js";
import type { LedgerRow } from "../runtime/ledger.js";
import {
  idempotencyArgument,
  MAX_WRITE_SENDS,
  readStatus,
  statusArguments,
  statusCheckRetryable,
} from "../runtime/reconcile.js";
import { backoffMs, isRetryable } from "../runtime/retry.js";
import { runOwner } from "../runtime/owner.js";
import { threadIdFrom } from "../runtime/run-config.js";
import { transition } from "../runtime/transitions.js";
import { CallJournal, LedgerHistoryFound, type Allowed, type CallContext } from "../runtime/call-journal.js";
import type { CallResult, NodeUpdate, State } from "../state.js";

type Failure = Extract<CallResult, { ok: false }>;

function failure(action: Allowed, code: ToolErrorCode, message: string): Failure {
  return { call_id: action.call_id, tool: action.tool, ok: false, code, message };
}

/** The write's idempotency key, from the argument its contract names (null when it names none). */
function idempotencyKeyOf(tool: CatalogTool, action: Allowed): string | null {
  const argument = idempotencyArgument(tool.contract);
  const value = argument === undefined ? undefined : action.args[argument];
  return typeof value === "string" ? value : null;
}

const budgetFailure = (action: Allowed) => failure(action, "budget_exhausted", "the run's tool-call budget is used up");

/** Runs one allowed call with its retries and reconciliation; returns its result and the ledger rows it wrote. */
async function runCall(action: Allowed, context: CallContext): Promise<{ result: CallResult; rows: LedgerRow[] }> {
  // Almost always the call has no rows yet: settle it as such, with no read; its first insert checks.
  const fresh = new CallJournal(context, action, [], true);
  try {
    return { result: await settleCall(action, context, fresh, []), rows: fresh.list() };
  } catch (error) {
    if (!(error instanceof LedgerHistoryFound)) throw error;
  }
  // An earlier execution of this call left rows (it crashed, or was replayed): recover from them.
  const history = (await context.ledger.list(context.threadId)).filter((row) => row.call_id === action.call_id);
  const journal = new CallJournal(context, action, history);
  const result = await settleCall(action, context, journal, history);
  return { result, rows: journal.list() };
}

async function settleCall(
  action: Allowed,
  context: CallContext,
  journal: CallJournal,
  history: readonly LedgerRow[],
): Promise<CallResult> {
  // A row still `running` belongs to an execution that died mid-call: we never saw its outcome.
  const recovered: LedgerRow[] = [];
  for (const row of history) {
    if (row.status !== "running") continue;
    const unknown = row.risk !== "read";
    recovered.push(
      await journal.finish(row, {
        status: unknown ? "outcome_unknown" : "abandoned",
        error_code: unknown ? "outcome_unknown" : null,
        finished_at: new Date(context.host.now()).toISOString(),
        elapsed_ms: null,
      }),
    );
  }
  const tool = context.tools.catalog().find((entry) => entry.name === action.tool);
  if (!tool) return failure(action, "server_unavailable", "the tool is no longer available");
  // A write already sent is settled by reconciliation whatever changed since; anything else is checked again.
  const writeSent =
    action.risk !== "read" &&
    history.some((row) => row.reconciles == null && row.tool === action.tool && row.status !== "denied");
  if (!writeSent) {
    // Authorized when proposed (and maybe approved long ago): check again as the owner is now.
    const authorization = authorizeFor(tool, action.model_args, context.principal);
    if (!authorization.ok) {
      await journal.refuse(tool, action.fingerprint, idempotencyKeyOf(tool, action), authorization.code);
      return failure(action, authorization.code, authorization.message);
    }
  }

  if (action.risk === "read") return runRead(action, tool, context, journal);

  const key = idempotencyKeyOf(tool, action);
  const sends = history.filter((row) => row.reconciles == null && row.tool === action.tool && row.status !== "denied");
  if (sends.length > 0) {
    // An earlier execution sent this write and its result never reached the state: ask, do not resend.
    const last = recovered.find((row) => row.attempt === sends.at(-1)?.attempt) ?? sends.at(-1);
    if (!last) return failure(action, "outcome_unknown", "a previous attempt may have applied this write");
    return reconcile(action, tool, context, journal, key, last, MAX_WRITE_SENDS - sends.length);
  }

  const sent = await journal.attempt(tool, action.args, {
    risk: action.risk,
    fingerprint: action.fingerprint,
    idempotency_key: key,
  });
  if (!sent) return budgetFailure(action);
  return afterWrite(action, tool, context, journal, key, sent, MAX_WRITE_SENDS - 1);
}

/** Reads: bounded retries of transient failures with backoff (DESIGN §6). */
async function runRead(
  action: Allowed,
  tool: CatalogTool,
  _context: CallContext,
  journal: CallJournal,
): Promise<CallResult> {
  for (let tries = 1; ; tries += 1) {
    const done = await journal.attempt(tool, action.args, {
      risk: action.risk,
      fingerprint: action.fingerprint,
      idempotency_key: null,
    });
    if (!done) return budgetFailure(action);
    const { outcome } = done;
    if (outcome.ok)
      return {
        call_id: action.call_id,
        tool: action.tool,
        ok: true,
        text: outcome.text,
        structured: outcome.structured,
      };
    if (!isRetryable(outcome.code, action.risk) || tries >= tool.contract.max_attempts)
      return failure(action, outcome.code, outcome.message);
    await sleep(backoffMs(tries));
  }
}

/** What to do once a write attempt has ended. */
async function afterWrite(
  action: Allowed,
  tool: CatalogTool,
  context: CallContext,
  journal: CallJournal,
  key: string | null,
  sent: { row: LedgerRow; outcome: NormalizedResult },
  retriesLeft: number,
): Promise<CallResult> {
  const { row, outcome } = sent;
  if (outcome.ok)
    return { call_id: action.call_id, tool: action.tool, ok: true, text: outcome.text, structured: outcome.structured };
  if (row.status !== "outcome_unknown") return failure(action, outcome.code, outcome.message);
  return reconcile(action, tool, context, journal, key, row, retriesLeft);
}

/**
 * Settles a write attempt whose outcome is unknown by asking the contract's
 * status tool. Applied → succeeded; not applied → one retry with the same
 * key while `retriesLeft` allows; no readable answer → `outcome_unknown`.
 */
async function reconcile(
  action: Allowed,
  tool: CatalogTool,
  context: CallContext,
  journal: CallJournal,
  key: string | null,
  unknownRow: LedgerRow,
  retriesLeft: number,
): Promise<CallResult> {
  const rule = tool.contract.reconcile;
  const statusTool = rule ? context.tools.catalog().find((entry) => entry.name === rule.tool) : undefined;
  if (!rule || !statusTool || key === null) {
    return failure(
      action,
      "outcome_unknown",
      "the write may have been applied, and there is no way to check it; it was not repeated",
    );
  }
  const answer = await askStatus(action, tool, statusTool, rule, key, context, journal, unknownRow);
  if (answer.kind === "unreachable") {
    return failure(
      action,
      "outcome_unknown",
      `the write may have been applied and its status could not be checked (${answer.code}); it was not repeated`,
    );
  }
  if (answer.kind === "applied") {
    await journal.finish(unknownRow, { status: "succeeded", error_code: null, reconciled_by: answer.row.attempt });
    const structured = { reconciled: true, status_tool: statusTool.name, status: answer.structured };
    return { call_id: action.call_id, tool: action.tool, ok: true, text: JSON.stringify(structured), structured };
  }
  // Known now: that attempt was not applied.
  // Keep what was observed (a timeout, a lost connection); an attempt cut off by a crash observed nothing.
  const code =
    unknownRow.error_code && unknownRow.error_code !== "outcome_unknown" ? unknownRow.error_code : "tool_failed";
  await journal.finish(unknownRow, { status: "failed", error_code: code, reconciled_by: answer.row.attempt });
  if (retriesLeft <= 0) {
    return failure(
      action,
      code,
      `the write was not applied (checked with ${statusTool.name}) and has already been retried once`,
    );
  }
  // Same arguments, so the same idempotency key: the server applies it at most once even if the first attempt lands late.
  const sent = await journal.attempt(tool, action.args, {
    risk: action.risk,
    fingerprint: action.fingerprint,
    idempotency_key: key,
  });
  if (!sent) return budgetFailure(action);
  return afterWrite(action, tool, context, journal, key, sent, retriesLeft - 1);
}

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

type StatusCheck =
  | { kind: "applied" | "not_applied"; row: LedgerRow; structured: unknown }
  | { kind: "unreachable"; code: ToolErrorCode };

/** Asks the status tool, as the write's principal, with the write's key; each try is its own ledger row. */
async function askStatus(
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
  let code: ToolErrorCode = "budget_exhausted";
  for (let tries = 1; tries <= statusTool.contract.max_attempts; tries += 1) {
    // A lost response often means the server process died; the host reconnects it in the background.
    if (!(await awaitHealthy(context, statusTool.server, statusTool.contract.timeout_ms)))
      return { kind: "unreachable", code: "server_unavailable" };
    const done = await journal.attempt(statusTool, args, {
      risk: "read",
      fingerprint,
      idempotency_key: null,
      reconciles: unknownRow.attempt,
    });
    if (!done) return { kind: "unreachable", code: "budget_exhausted" };
    const { outcome, row } = done;
    if (outcome.ok) {
      const answer = readStatus(outcome.structured, rule);
      return answer.kind === "unreadable"
        ? { kind: "unreachable", code: "protocol_error" }
        : { kind: answer.kind, row, structured: outcome.structured };
    }
    code = outcome.code;
    if (!statusCheckRetryable(outcome.code)) break;
    if (tries < statusTool.contract.max_attempts) await sleep(backoffMs(tries));
  }
  return { kind: "unreachable", code };
}

export function makeExecuteNode(host: Host) {
  return async function execute(state: State, config: LangGraphRunnableConfig): Promise<NodeUpdate<"execute">> {
    const context: CallContext = {
      host,
      tools: await host.tools(),
      ledger: await host.ledger(),
      threadId: threadIdFrom(config),
      runId: state.run?.run_id ?? "",
      run: runStartOf(threadIdFrom(config), state.run),
      principal: await runOwner(state, config, host),
      signal: config.signal,
      budget: { left: remainingToolCalls(state.usage, host.budgets) },
      started: { count: 0 },
    };
    const outcomes = await Promise.all(allowed(state.decisions ?? []).map((action) => runCall(action, context)));
    const ledger = outcomes.flatMap((outcome) => outcome.rows);
    return {
      ...transition(state.status, "tool_running", "observing"),
      ledger,
      call_results: outcomes.map((outcome) => outcome.result),
      usage: {
        tool_calls: context.started.count,
        elapsed_ms: ledger.reduce((sum, row) => sum + (row.elapsed_ms ?? 0), 0),
      },
    };
  };
}
