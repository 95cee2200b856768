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
import type { Principal } from "../auth/principal.js";
import type { ToolErrorCode } from "../errors.js";
import type { Host } from "../host.js";
import type { CatalogTool } from "../mcp/catalog.js";
import type { NormalizedResult } from "../mcp/normalize.js";
import type { ToolHost } from "../mcp/tool-host.js";
import { authorizeFor, injectArguments } from "../policy/authorization.js";
import { remainingToolCalls } from "../policy/budgets.js";
import type { ReconcileContract } from "../policy/contracts.js";
import { allowed, type Decision } from "../policy/decision.js";
import { actionFingerprint } from "../policy/fingerprint.js";
import { runStartOf, type RunStart } from "../runtime/audit-chain.js";
import type { LedgerOutcome, LedgerRow, LedgerStore } from "../runtime/ledger.js";
import { effectUnknown, idempotencyArgument, MAX_WRITE_SENDS, readStatus, statusArguments, statusCheckRetryable } from "../runtime/reconcile.js";
import { backoffMs, isRetryable } from "../runtime/retry.js";
import { runOwner } from "../runtime/owner.js";
import { threadIdFrom } from "../runtime/run-config.js";
import { transition } from "../runtime/transitions.js";
import type { CallResult, NodeUpdate, State } from "../state.js";

type Allowed = Extract<Decision, { type: "allow" }>;
type Failure = Extract<CallResult, { ok: false }>;

interface CallContext {
  host: Host;
  tools: ToolHost;
  ledger: LedgerStore;
  threadId: string;
  runId: string;
  /** The run's start record: each ledger write is a link of its audit chain. */
  run: RunStart | undefined;
  /** The run's owner with current permissions: the principal of every call. */
  principal: Principal;
  signal: AbortSignal | undefined;
  /** Attempts this node may still start (the run's tool-call budget); status checks count too. */
  budget: { left: number };
  /** Attempts this node started (what usage.tool_calls adds). */
  started: { count: number };
}

function failure(action: Allowed, code: ToolErrorCode, message: string): Failure {
  return { call_id: action.call_id, tool: action.tool, ok: false, code, message };
}

/**
 * The ledger rows of one call as this node leaves them: every attempt it began
 * or finished, each in its latest version, in first-touched order.
 */
class CallJournal {
  private readonly rows = new Map<number, LedgerRow>();
  next: number;

  constructor(
    private readonly context: CallContext,
    readonly action: Allowed,
    history: readonly LedgerRow[],
  ) {
    this.next = history.reduce((highest, row) => Math.max(highest, row.attempt), 0) + 1;
  }

  /** Starts an attempt: reserves budget, writes the `running` row before the external call. */
  async begin(fields: Pick<LedgerRow, "tool" | "server" | "risk" | "fingerprint" | "idempotency_key"> & { reconciles?: number }): Promise<LedgerRow | undefined> {
    if (this.context.budget.left <= 0) return undefined;
    this.context.budget.left -= 1;
    this.context.started.count += 1;
    const row: LedgerRow = {
      call_id: this.action.call_id,
      attempt: this.next,
      ...fields,
      ...this.identity(),
      status: "running",
      error_code: null,
      started_at: new Date(this.context.host.now()).toISOString(),
      finished_at: null,
      elapsed_ms: null,
    };
    this.next += 1;
    await this.context.ledger.begin(this.context.threadId, row, this.context.run);
    this.rows.set(row.attempt, row);
    return row;
  }

  /** The run, owner and approver every row of this call carries. */
  identity(): Pick<LedgerRow, "run_id" | "owner" | "approved_by"> {
    const approver = this.action.review?.approver;
    return {
      ...(this.context.runId ? { run_id: this.context.runId } : {}),
      owner: this.context.principal.user_id,
      ...(approver ? { approved_by: approver } : {}),
    };
  }

  /** Records a call refused at execution: one row, nothing called, no budget spent. */
  async refuse(tool: CatalogTool, fingerprint: string, idempotencyKey: string | null, code: ToolErrorCode): Promise<void> {
    const now = new Date(this.context.host.now()).toISOString();
    const row: LedgerRow = {
      call_id: this.action.call_id,
      attempt: this.next,
      tool: tool.name,
      server: tool.server,
      risk: tool.contract.risk,
      fingerprint,
      idempotency_key: idempotencyKey,
      status: "denied",
      error_code: code,
      started_at: now,
      finished_at: now,
      elapsed_ms: 0,
      ...this.identity(),
    };
    this.next += 1;
    await this.context.ledger.begin(this.context.threadId, row, this.context.run);
    this.rows.set(row.attempt, row);
  }

  /** Records how an attempt ended (or how a status check settled it). */
  async finish(row: LedgerRow, outcome: Partial<LedgerOutcome> & Pick<LedgerOutcome, "status" | "error_code">): Promise<LedgerRow> {
    // A settled `outcome_unknown` keeps its original finish time and duration: only status, code and the link change.
    const done: LedgerRow = { ...row, ...outcome };
    const { status, error_code, finished_at, elapsed_ms } = done;
    await this.context.ledger.finish(this.context.threadId, row.call_id, row.attempt, {
      status,
      error_code,
      finished_at,
      elapsed_ms,
      ...(done.reconciled_by ? { reconciled_by: done.reconciled_by } : {}),
    }, this.context.run);
    this.rows.set(done.attempt, done);
    return done;
  }

  /** Runs one external call inside a ledger row. */
  async attempt(
    tool: CatalogTool,
    args: Record<string, unknown>,
    fields: Pick<LedgerRow, "risk" | "fingerprint" | "idempotency_key"> & { reconciles?: number },
  ): Promise<{ row: LedgerRow; outcome: NormalizedResult } | undefined> {
    // A cancelled run starts no new external call (its node may outlive the graph's stream by a moment).
    this.context.signal?.throwIfAborted();
    const row = await this.begin({ tool: tool.name, server: tool.server, ...fields });
    if (!row) return undefined;
    const started = Date.parse(row.started_at);
    const outcome = await this.context.tools.call(tool, args, {
      timeoutMs: tool.contract.timeout_ms,
      signal: this.context.signal,
      principal: this.context.principal,
      threadId: this.context.threadId,
      record: { call_id: this.action.call_id, run_id: this.context.runId, run: this.context.run },
    });
    const finished = this.context.host.now();
    // A write whose answer never arrived may still have been applied: that is not a failure we know of.
    const unknown = !outcome.ok && fields.risk !== "read" && effectUnknown(outcome.code);
    const done = await this.finish(row, {
      status: outcome.ok ? "succeeded" : unknown ? "outcome_unknown" : "failed",
      error_code: outcome.ok ? null : outcome.code,
      finished_at: new Date(finished).toISOString(),
      elapsed_ms: Math.max(0, finished - started),
    });
    return { row: done, outcome };
  }

  list(): LedgerRow[] {
    return [...this.rows.values()];
  }
}

const budgetFailure = (action: Allowed) => failure(action, "budget_exhausted", "the run's tool-call budget is used up");

/** Runs one allowed call with its retries and reconciliation; returns its result and the ledger rows it wrote. */
async function runCall(action: Allowed, context: CallContext): Promise<{ result: CallResult; rows: LedgerRow[] }> {
  const history = (await context.ledger.list(context.threadId)).filter((row) => row.call_id === action.call_id);
  const journal = new CallJournal(context, action, history);
  const result = await settleCall(action, context, journal, history);
  return { result, rows: journal.list() };
}

async function settleCall(action: Allowed, context: CallContext, journal: CallJournal, history: readonly LedgerRow[]): Promise<CallResult> {
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
  const writeSent = action.risk !== "read" && history.some((row) => row.reconciles == null && row.tool === action.tool && row.status !== "denied");
  if (!writeSent) {
    // Authorized when proposed (and maybe approved long ago): check again as the owner is now.
    const authorization = authorizeFor(tool, action.model_args, context.principal);
    if (!authorization.ok) {
      const keyArgument = idempotencyArgument(tool.contract);
      const key = keyArgument !== undefined && typeof action.args[keyArgument] === "string" ? action.args[keyArgument] : null;
      await journal.refuse(tool, action.fingerprint, key, authorization.code);
      return failure(action, authorization.code, authorization.message);
    }
  }

  if (action.risk === "read") return runRead(action, tool, context, journal);

  const keyArgument = idempotencyArgument(tool.contract);
  const key = keyArgument !== undefined && typeof action.args[keyArgument] === "string" ? action.args[keyArgument] : null;
  const sends = history.filter((row) => row.reconciles == null && row.tool === action.tool && row.status !== "denied");
  if (sends.length > 0) {
    // An earlier execution sent this write and its result never reached the state: ask, do not resend.
    const last = recovered.find((row) => row.attempt === sends.at(-1)?.attempt) ?? sends.at(-1);
    if (!last) return failure(action, "outcome_unknown", "a previous attempt may have applied this write");
    return reconcile(action, tool, context, journal, key, last, MAX_WRITE_SENDS - sends.length);
  }

  const sent = await journal.attempt(tool, action.args, { risk: action.risk, fingerprint: action.fingerprint, idempotency_key: key });
  if (!sent) return budgetFailure(action);
  return afterWrite(action, tool, context, journal, key, sent, MAX_WRITE_SENDS - 1);
}

/** Reads: bounded retries of transient failures with backoff (DESIGN §6). */
async function runRead(action: Allowed, tool: CatalogTool, context: CallContext, journal: CallJournal): Promise<CallResult> {
  for (let tries = 1; ; tries += 1) {
    const done = await journal.attempt(tool, action.args, { risk: action.risk, fingerprint: action.fingerprint, idempotency_key: null });
    if (!done) return budgetFailure(action);
    const { outcome } = done;
    if (outcome.ok) return { call_id: action.call_id, tool: action.tool, ok: true, text: outcome.text, structured: outcome.structured };
    if (!isRetryable(outcome.code, action.risk) || tries >= tool.contract.max_attempts) return failure(action, outcome.code, outcome.message);
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
  if (outcome.ok) return { call_id: action.call_id, tool: action.tool, ok: true, text: outcome.text, structured: outcome.structured };
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
    return failure(action, "outcome_unknown", "the write may have been applied, and there is no way to check it; it was not repeated");
  }
  const answer = await askStatus(action, tool, statusTool, rule, key, context, journal, unknownRow);
  if (answer.kind === "unreachable") {
    return failure(action, "outcome_unknown", `the write may have been applied and its status could not be checked (${answer.code}); it was not repeated`);
  }
  if (answer.kind === "applied") {
    await journal.finish(unknownRow, { status: "succeeded", error_code: null, reconciled_by: answer.row.attempt });
    const structured = { reconciled: true, status_tool: statusTool.name, status: answer.structured };
    return { call_id: action.call_id, tool: action.tool, ok: true, text: JSON.stringify(structured), structured };
  }
  // Known now: that attempt was not applied.
  // Keep what was observed (a timeout, a lost connection); an attempt cut off by a crash observed nothing.
  const code = unknownRow.error_code && unknownRow.error_code !== "outcome_unknown" ? unknownRow.error_code : "tool_failed";
  await journal.finish(unknownRow, { status: "failed", error_code: code, reconciled_by: answer.row.attempt });
  if (retriesLeft <= 0) {
    return failure(action, code, `the write was not applied (checked with ${statusTool.name}) and has already been retried once`);
  }
  // Same arguments, so the same idempotency key: the server applies it at most once even if the first attempt lands late.
  const sent = await journal.attempt(tool, action.args, { risk: action.risk, fingerprint: action.fingerprint, idempotency_key: key });
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
    if (!(await awaitHealthy(context, statusTool.server, statusTool.contract.timeout_ms))) return { kind: "unreachable", code: "server_unavailable" };
    const done = await journal.attempt(statusTool, args, { risk: "read", fingerprint, idempotency_key: null, reconciles: unknownRow.attempt });
    if (!done) return { kind: "unreachable", code: "budget_exhausted" };
    const { outcome, row } = done;
    if (outcome.ok) {
      const answer = readStatus(outcome.structured, rule);
      return answer.kind === "unreadable" ? { kind: "unreachable", code: "protocol_error" } : { kind: answer.kind, row, structured: outcome.structured };
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
      usage: { tool_calls: context.started.count, elapsed_ms: ledger.reduce((sum, row) => sum + (row.elapsed_ms ?? 0), 0) },
    };
  };
}
