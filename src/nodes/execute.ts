/**
 * execute: runs the allowed calls through MCP. Each attempt gets a ledger row
 * written before the call starts and updated after it ends; retries follow
 * the policies of src/runtime/retry.ts (only transient failures of read tools
 * are retried blindly). A write whose outcome is unknown (timeout, lost
 * response, or found `running` after a crash) is reconciled through its
 * contract's status tool (src/runtime/reconcile.ts), never re-run blindly.
 * Before a call starts, the policy pipeline's execute stage checks it again
 * against the owner's current permissions (a scope revoked while an approval
 * waited is `tool_not_permitted` from `authorized`, ledger row `denied`,
 * nothing called). Every call acts for the run's owner, whoever sent the
 * request that resumed it.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { InvariantError, type ToolErrorCode } from "../errors.js";
import type { Host } from "../host.js";
import type { CatalogTool } from "../mcp/catalog.js";
import { injectArguments } from "../policy/authorization.js";
import { remainingToolCalls } from "../policy/budgets.js";
import type { ReconcileContract } from "../policy/contracts.js";
import { decideExecution, type DecideContext } from "../policy/decide.js";
import { allowed, type Denial } from "../policy/decision.js";
import { actionFingerprint } from "../policy/fingerprint.js";
import { recordDenials } from "../audit/events.js";
import { runStartOf } from "../audit/chain.js";
import {
  CallJournal,
  type Allowed,
  type CallContext,
  type HistoryFound,
  type Started,
} from "../runtime/call-journal.js";
import { decideContextFor } from "../runtime/decide-context.js";
import type { LedgerRow } from "../runtime/ledger.js";
import { idempotencyArgument, readStatus, statusArguments } from "../runtime/reconcile.js";
import { done, failed, MAX_WRITE_SENDS, RETRY_POLICIES, withRetries, type AttemptResult } from "../runtime/retry.js";
import { threadIdFrom } from "../runtime/run-config.js";
import { whileSettlingWrite } from "../runtime/writes-in-flight.js";
import { transition } from "../state/transitions.js";
import type { CallResult, NodeUpdate, State } from "../state.js";

type Failure = Extract<CallResult, { ok: false }>;

/** A call's context in this node: the ledger's, plus the pipeline's view for the execute stage. */
interface ExecuteContext extends CallContext {
  decide: DecideContext;
}

/** How settling a call ended: its result (and its denial, when the execute stage refused it), or history found. */
type Settled = { kind: "settled"; result: CallResult; denial?: Denial } | HistoryFound;

const settled = (result: CallResult, denial?: Denial): Settled =>
  denial ? { kind: "settled", result, denial } : { kind: "settled", result };

function failure(action: Allowed, code: ToolErrorCode, message: string): Failure {
  return { call_id: action.call_id, tool: action.tool, ok: false, code, message };
}

function success(action: Allowed, text: string, structured: unknown): CallResult {
  return { call_id: action.call_id, tool: action.tool, ok: true, text, structured };
}

/** The write's idempotency key, from the argument its contract names (null when it names none). */
function idempotencyKeyOf(tool: CatalogTool, action: Allowed): string | null {
  const argument = idempotencyArgument(tool.contract);
  const value = argument === undefined ? undefined : action.args[argument];
  return typeof value === "string" ? value : null;
}

const budgetFailure = (action: Allowed) => failure(action, "budget_exhausted", "the run's tool-call budget is used up");

/** An attempt that could not start: no budget left, or (first insert of a fresh journal) history found. */
function notStarted(action: Allowed, started: Started<never>): Settled {
  return started.kind === "history_found" ? started : settled(budgetFailure(action));
}

/** Runs one allowed call with its retries and reconciliation; returns its result and the ledger rows it wrote. */
async function runCall(
  action: Allowed,
  context: ExecuteContext,
): Promise<{ result: CallResult; denial?: Denial; rows: LedgerRow[] }> {
  // Almost always the call has no rows yet: settle it as such, with no read; its first insert checks.
  const fresh = new CallJournal(context, action, [], true);
  const first = await settleCall(action, context, fresh, []);
  if (first.kind === "settled") return { ...withoutKind(first), rows: fresh.list() };
  // An earlier execution of this call left rows (it crashed, or was replayed): recover from them.
  const history = (await context.ledger.list(context.threadId)).filter((row) => row.call_id === action.call_id);
  const journal = new CallJournal(context, action, history);
  const recovered = await settleCall(action, context, journal, history);
  if (recovered.kind !== "settled")
    throw new InvariantError("ledger_order", "a journal that read its history found more history");
  return { ...withoutKind(recovered), rows: journal.list() };
}

function withoutKind(outcome: Extract<Settled, { kind: "settled" }>): { result: CallResult; denial?: Denial } {
  return outcome.denial ? { result: outcome.result, denial: outcome.denial } : { result: outcome.result };
}

async function settleCall(
  action: Allowed,
  context: ExecuteContext,
  journal: CallJournal,
  history: readonly LedgerRow[],
): Promise<Settled> {
  // A row still `running` belongs to an execution that died mid-call: we never saw its outcome.
  const recovered: LedgerRow[] = [];
  for (const row of history) {
    if (row.status !== "running") continue;
    // A write whose request never left (its row still says `sent: false`) has no unknown effect: it was not a send.
    const unknown = row.risk !== "read" && row.sent !== false;
    recovered.push(
      await journal.finish(row, {
        status: unknown ? "outcome_unknown" : "abandoned",
        error_code: unknown ? "outcome_unknown" : null,
        finished_at: new Date(context.host.now()).toISOString(),
        elapsed_ms: null,
      }),
    );
  }
  // Sends are the attempts that may have reached the server: not a refusal, not an intent row that never left.
  const sends = history.filter(
    (row) => row.reconciles == null && row.tool === action.tool && row.status !== "denied" && row.sent !== false,
  );
  // A write already sent is settled by reconciliation whatever changed since; anything else is checked again.
  const writeSent = action.risk !== "read" && sends.length > 0;
  const checked = decideExecution(action, context.decide, writeSent ? "still_listed" : "execute");
  if (!checked.ok) {
    const { denial } = checked;
    const tool = context.decide.catalog.find(action.tool);
    if (tool) {
      const refused = await journal.refuse(tool, action.fingerprint, idempotencyKeyOf(tool, action), denial);
      if (refused.kind === "history_found") return refused;
    }
    return settled(failure(action, denial.code, denial.message), denial);
  }
  const tool = checked.tool;
  if (action.risk === "read") return runRead(action, tool, journal);

  const key = idempotencyKeyOf(tool, action);
  // An earlier execution sent this write and its result never reached the state: ask, do not resend.
  const lastSend = sends.at(-1);
  const unknown = lastSend ? (recovered.find((row) => row.attempt === lastSend.attempt) ?? lastSend) : undefined;
  return runWrite(action, tool, context, journal, key, unknown, sends.length);
}

/** Reads: bounded retries of transient failures with backoff (DESIGN §6). */
function runRead(action: Allowed, tool: CatalogTool, journal: CallJournal): Promise<Settled> {
  return withRetries(RETRY_POLICIES.read(tool.contract.max_attempts), async (): Promise<AttemptResult<Settled>> => {
    const started = await journal.attempt(tool, action.args, {
      risk: action.risk,
      fingerprint: action.fingerprint,
      idempotency_key: null,
    });
    if (started.kind !== "ran") return done(notStarted(action, started));
    const { outcome } = started;
    if (outcome.ok) return done(settled(success(action, outcome.text, outcome.structured)));
    return failed(outcome.code, settled(failure(action, outcome.code, outcome.message)));
  });
}

/**
 * Writes: each attempt sends the write (or, recovering, settles the send an
 * earlier execution made) and reconciles an unknown outcome; the write policy
 * sends again, with the same key, only after a status check found it not applied.
 */
function runWrite(
  action: Allowed,
  tool: CatalogTool,
  context: ExecuteContext,
  journal: CallJournal,
  key: string | null,
  recovered: LedgerRow | undefined,
  sendsMade: number,
): Promise<Settled> {
  let earlier = recovered;
  const attempt = async (send: number): Promise<AttemptResult<Settled>> => {
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
  unknownRow: LedgerRow,
  lastSend: boolean,
): Promise<AttemptResult<Settled>> {
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
  const policy = RETRY_POLICIES.status(statusTool.contract.max_attempts);
  if (policy.maxAttempts < 1) return { kind: "unreachable", code: "budget_exhausted" };
  return withRetries(policy, async (): Promise<AttemptResult<StatusCheck>> => {
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

export function makeExecuteNode(host: Host) {
  return async function execute(state: State, config: LangGraphRunnableConfig): Promise<NodeUpdate<"execute">> {
    // A step with a write is settled whole before a cancel may stop the run (runtime/writes-in-flight.ts).
    if (allowed(state.decisions ?? []).some((action) => action.risk !== "read"))
      return whileSettlingWrite(threadIdFrom(config), () => executeStep(host, state, config));
    return executeStep(host, state, config);
  };
}

async function executeStep(host: Host, state: State, config: LangGraphRunnableConfig): Promise<NodeUpdate<"execute">> {
  const decide = await decideContextFor(state, config, host);
  const context: ExecuteContext = {
    host,
    tools: await host.tools(),
    ledger: await host.ledger(),
    threadId: threadIdFrom(config),
    runId: state.run?.run_id ?? "",
    run: runStartOf(threadIdFrom(config), state.run),
    principal: decide.owner,
    signal: config.signal,
    budget: { left: remainingToolCalls(state.usage, host.budgets) },
    started: { count: 0 },
    decide,
  };
  const outcomes = await Promise.all(allowed(state.decisions ?? []).map((action) => runCall(action, context)));
  const ledger = outcomes.flatMap((outcome) => outcome.rows);
  const denied = await recordDenials(
    await host.audit(),
    outcomes.flatMap((outcome) => (outcome.denial ? [outcome.denial] : [])),
    {
      thread_id: context.threadId,
      run_id: context.runId,
      actor: decide.owner.user_id,
      at: new Date(host.now()).toISOString(),
      node: "execute",
      stage: "execute",
      run: context.run,
    },
  );
  return {
    ...transition(state.status, "tool_running", "observing"),
    ledger,
    call_results: outcomes.map((outcome) => outcome.result),
    usage: {
      tool_calls: context.started.count,
      elapsed_ms: ledger.reduce((sum, row) => sum + (row.elapsed_ms ?? 0), 0),
    },
    ...(denied.length > 0 ? { denials: denied } : {}),
  };
}
