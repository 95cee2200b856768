/**
 * execute: runs the step's allowed calls through the write protocol of
 * src/execution/ (one call each, `runCall`: ledger rows before and after
 * every attempt, the retry policies, reconciliation of writes whose outcome
 * is unknown, the execute stage's check against the owner's current
 * permissions). This node is the wiring: it builds the calls' context from
 * the host, the state and the run's config, keeps a step with a write
 * settled whole before a cancel may stop the run, records the execute
 * stage's denials in the audit log and returns the step's update. Every call
 * acts for the run's owner, whoever sent the request that resumed it.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { runCall } from "../execution/run-call.js";
import type { ExecuteContext } from "../execution/call-outcome.js";
import { whileSettlingWrite } from "../execution/writes-in-flight.js";
import { decideContextFor } from "../graph/decide-context.js";
import type { Host } from "../host.js";
import { remainingToolCalls } from "../policy/budgets.js";
import { allowed } from "../policy/decision.js";
import { threadIdFrom } from "../run-config.js";
import { recordDenials } from "../audit/events.js";
import { runStartOf } from "../audit/chain.js";
import { transition } from "../state/transitions.js";
import type { NodeUpdate, State } from "../state.js";

export function makeExecuteNode(host: Host) {
  return async function execute(state: State, config: LangGraphRunnableConfig): Promise<NodeUpdate<"execute">> {
    // A step with a write is settled whole before a cancel may stop the run (execution/writes-in-flight.ts).
    if (allowed(state.decisions ?? []).some((action) => action.risk !== "read"))
      return whileSettlingWrite(threadIdFrom(config), () => executeStep(host, state, config));
    return executeStep(host, state, config);
  };
}

async function executeStep(host: Host, state: State, config: LangGraphRunnableConfig): Promise<NodeUpdate<"execute">> {
  const decide = await decideContextFor(state, config, host);
  const context: ExecuteContext = {
    now: () => host.now(),
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
