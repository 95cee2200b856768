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
import { interrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { runCall } from "../execution/run-call.js";
import { type CallWaiting, isCallWaiting, TASK_WAIT, type TaskWaitInterrupt } from "../execution/task-wait.js";
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
import type { Principal } from "../auth/principal.js";

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
    detachTasks: host.taskWaits !== undefined,
    decide,
  };
  const attempts = await Promise.allSettled(allowed(state.decisions ?? []).map((action) => runCall(action, context)));
  const waiting: CallWaiting[] = [];
  const outcomes = attempts.flatMap((attempt) => {
    if (attempt.status === "fulfilled") return [attempt.value];
    if (isCallWaiting(attempt.reason)) waiting.push(attempt.reason);
    else throw attempt.reason;
    return [];
  });
  // Tasks still working: the thread pauses until the poller resumes it; the node then runs again and settles them.
  if (waiting.length > 0) await waitForTasks(host, waiting, decide.owner, config);
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

/**
 * Records the waits (the poller's schedule, as the owner) and pauses the thread on a `task_wait` interrupt; no run
 * holds a worker meanwhile. Never returns on the first pass (the interrupt); the poller's resume re-runs the node.
 */
async function waitForTasks(
  host: Host,
  waiting: readonly CallWaiting[],
  owner: Principal,
  config: LangGraphRunnableConfig,
): Promise<void> {
  const store = await host.taskWaits?.();
  if (!store) return;
  const threadId = threadIdFrom(config);
  const assistant = config.configurable?.["assistant_id"];
  for (const { task } of waiting)
    await store.schedule({
      thread_id: threadId,
      call_id: task.call_id,
      attempt: task.attempt,
      server: task.server,
      tool: task.tool,
      task_id: task.task_id,
      principal: owner,
      assistant_id: typeof assistant === "string" ? assistant : "agent",
      next_poll_at: new Date(task.poll_after),
      deadline: new Date(task.deadline),
    });
  const value: TaskWaitInterrupt = { kind: TASK_WAIT, tasks: waiting.map((call) => call.task) };
  interrupt(value);
}
