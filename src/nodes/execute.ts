/**
 * execute: runs the allowed calls through MCP. Each attempt gets a ledger row
 * written before the call starts and updated after it ends; only transient
 * failures of read tools are retried. A call found `running` after a crash is
 * never blindly re-run when it is a write.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { principalFromConfig, type Principal } from "../auth/principal.js";
import type { Host } from "../host.js";
import { allowed, type Decision } from "../policy/decision.js";
import { remainingToolCalls } from "../policy/budgets.js";
import type { LedgerRow, LedgerStore } from "../runtime/ledger.js";
import { backoffMs, isRetryable } from "../runtime/retry.js";
import { transition } from "../runtime/transitions.js";
import type { CallResult, NodeUpdate, State } from "../state.js";
import type { ToolHost } from "../mcp/tool-host.js";
import { threadIdFrom } from "./authorize.js";

type Allowed = Extract<Decision, { type: "allow" }>;

interface CallContext {
  host: Host;
  tools: ToolHost;
  ledger: LedgerStore;
  threadId: string;
  principal: Principal;
  signal: AbortSignal | undefined;
  /** Attempts this node may still start (the run's tool-call budget). */
  budget: { left: number };
}

/** The key the host injected for a write, if its contract has one. */
function idempotencyKeyOf(action: Allowed): string | null {
  const key = action.args["idempotency_key"];
  return action.risk !== "read" && typeof key === "string" ? key : null;
}

function failure(action: Allowed, code: Extract<CallResult, { ok: false }>["code"], message: string): CallResult {
  return { call_id: action.call_id, tool: action.tool, ok: false, code, message };
}

/** Runs one allowed call with its retries; returns its result and the ledger rows it wrote. */
async function runCall(action: Allowed, context: CallContext): Promise<{ result: CallResult; rows: LedgerRow[] }> {
  const { host, ledger, threadId } = context;
  const rows: LedgerRow[] = [];
  const previous = await ledger.latest(threadId, action.call_id);
  let attempt = previous ? previous.attempt + 1 : 1;
  if (previous?.status === "running") {
    const abandoned: LedgerRow = { ...previous, status: previous.risk === "read" ? "abandoned" : "outcome_unknown", error_code: previous.risk === "read" ? null : "outcome_unknown", finished_at: new Date(host.now()).toISOString(), elapsed_ms: null };
    await ledger.finish(threadId, previous.call_id, previous.attempt, abandoned);
    rows.push(abandoned);
    // A write whose outcome we never saw is not repeated blindly.
    if (previous.risk !== "read") return { result: failure(action, "outcome_unknown", "a previous attempt may have applied this write"), rows };
  }
  const tool = context.tools.catalog().find((entry) => entry.name === action.tool);
  if (!tool) return { result: failure(action, "server_unavailable", "the tool is no longer available"), rows };

  const maxAttempts = tool.contract.max_attempts;
  for (let tries = 1; ; tries += 1, attempt += 1) {
    if (context.budget.left <= 0) return { result: failure(action, "budget_exhausted", "the run's tool-call budget is used up"), rows };
    context.budget.left -= 1;
    const started = host.now();
    const row: LedgerRow = {
      call_id: action.call_id,
      attempt,
      tool: action.tool,
      server: action.server,
      risk: action.risk,
      fingerprint: action.fingerprint,
      idempotency_key: idempotencyKeyOf(action),
      status: "running",
      error_code: null,
      started_at: new Date(started).toISOString(),
      finished_at: null,
      elapsed_ms: null,
    };
    await ledger.begin(threadId, row);
    const outcome = await context.tools.call(tool, action.args, {
      timeoutMs: tool.contract.timeout_ms,
      signal: context.signal,
      principal: context.principal,
      threadId,
    });
    const finished = host.now();
    const done: LedgerRow = {
      ...row,
      status: outcome.ok ? "succeeded" : "failed",
      error_code: outcome.ok ? null : outcome.code,
      finished_at: new Date(finished).toISOString(),
      elapsed_ms: Math.max(0, finished - started),
    };
    await ledger.finish(threadId, row.call_id, row.attempt, done);
    rows.push(done);
    if (outcome.ok) return { result: { call_id: action.call_id, tool: action.tool, ok: true, text: outcome.text, structured: outcome.structured }, rows };
    if (!isRetryable(outcome.code, action.risk) || tries >= maxAttempts) {
      return { result: failure(action, outcome.code, outcome.message), rows };
    }
    await sleep(backoffMs(tries));
  }
}

export function makeExecuteNode(host: Host) {
  return async function execute(state: State, config: LangGraphRunnableConfig): Promise<NodeUpdate<"execute">> {
    const context: CallContext = {
      host,
      tools: await host.tools(),
      ledger: await host.ledger(),
      threadId: threadIdFrom(config),
      principal: principalFromConfig(config),
      signal: config.signal,
      budget: { left: remainingToolCalls(state.usage, host.budgets) },
    };
    const outcomes = await Promise.all(allowed(state.decisions ?? []).map((action) => runCall(action, context)));
    const ledger = outcomes.flatMap((outcome) => outcome.rows);
    const executed = ledger.filter((row) => row.status === "succeeded" || row.status === "failed").length;
    return {
      ...transition(state.status, "tool_running", "observing"),
      ledger,
      call_results: outcomes.map((outcome) => outcome.result),
      usage: { tool_calls: executed, elapsed_ms: ledger.reduce((sum, row) => sum + (row.elapsed_ms ?? 0), 0) },
    };
  };
}
