/**
 * observe: turns this turn's decisions and results into tool messages and
 * evidence, runs the named stop conditions (graph/stop-conditions.ts), and
 * either ends the run with the first that holds or hands back to plan. It is the only node that ends a run.
 */
import { createHash } from "node:crypto";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Host } from "../host.js";
import { extractEvidence } from "../state/extract-evidence.js";
import { endRunAtNextCheckpoint } from "../graph/save-holding.js";
import { firstStop } from "../graph/stop-conditions.js";
import type { Decision, RecordedDenial } from "../policy/decision.js";
import { deniedToolMessage, errorToolMessage } from "../policy/refusal.js";
import { mergeEvidence } from "../state/evidence.js";
import { runStartOf } from "../audit/chain.js";
import { transition, type RunStatus } from "../state/transitions.js";
import type {
  CallResult,
  NodeUpdate,
  Progress,
  ProgressUpdate,
  RunResult,
  State,
  TerminationReason,
} from "../state.js";
import { threadIdFrom } from "../run-config.js";

/**
 * One tool message per proposal, in proposal order, so every tool call has its answer. A call denied at
 * any stage is answered from its denial (with the check that refused it), through the one formatter.
 */
function toolMessages(
  decisions: readonly Decision[],
  results: readonly CallResult[],
  denied: readonly RecordedDenial[],
): ToolMessage[] {
  return decisions.map((decision) => {
    if (decision.type === "deny") return new ToolMessage(deniedToolMessage(decision));
    const atExecution = denied.find((denial) => denial.call_id === decision.call_id);
    if (atExecution) return new ToolMessage(deniedToolMessage(atExecution));
    const result = results.find((entry) => entry.call_id === decision.call_id);
    if (!result)
      return new ToolMessage(
        errorToolMessage(decision, { code: "approval_required", message: "the call was not executed" }),
      );
    if (!result.ok) return new ToolMessage(errorToolMessage(result, result));
    return new ToolMessage({
      tool_call_id: result.call_id,
      name: result.tool,
      content: result.text,
      artifact: result.structured,
    });
  });
}

function resultHash(result: Extract<CallResult, { ok: true }>): string {
  return createHash("sha256").update(result.tool).update("\u0000").update(result.text).digest("hex").slice(0, 32);
}

function answerMessage(result: RunResult): AIMessage {
  const sources = result.citations.map(
    (citation, index) =>
      `[${index + 1}] ${citation.source_id}${citation.page !== undefined ? ` p.${citation.page}` : ""} (${citation.ref})`,
  );
  const content = sources.length > 0 ? `${result.answer}\n\nSources:\n${sources.join("\n")}` : result.answer;
  return new AIMessage({ content, additional_kwargs: { warrant_result: result } });
}

export function makeObserveNode(host: Host) {
  return async function observe(state: State, config: LangGraphRunnableConfig): Promise<NodeUpdate<"observe">> {
    const run = state.run;
    const turn = run?.turn ?? 0;
    const decisions = state.verdict?.type === "tool_calls" ? (state.decisions ?? []) : [];
    const results = state.verdict?.type === "tool_calls" ? (state.call_results ?? []) : [];
    const runDenials = (state.denials ?? []).filter((denial) => denial.run_id === (run?.run_id ?? ""));
    const messages = toolMessages(decisions, results, runDenials);

    const successes = results.filter((result): result is Extract<CallResult, { ok: true }> => result.ok);
    const fresh = successes.flatMap((result) => extractEvidence(result.structured, result.tool, result.call_id));
    const known = new Set(state.evidence.map((item) => item.ref));
    const newEvidence = fresh.filter((item) => !known.has(item.ref));
    const allEvidence = mergeEvidence(state.evidence, fresh);

    const previous: Progress =
      state.progress && state.progress.run_id === run?.run_id
        ? state.progress
        : { run_id: run?.run_id ?? "", steps_without_progress: 0, seen_results: [] };
    const hashes = successes.map(resultHash);
    const novel = hashes.filter((hash) => !previous.seen_results.includes(hash));
    const progressed = newEvidence.length > 0 || novel.length > 0;
    // The write carries only this turn's new hashes; the reducer appends them to the run's.
    const progress: ProgressUpdate = {
      run_id: previous.run_id,
      steps_without_progress: decisions.length === 0 || progressed ? 0 : previous.steps_without_progress + 1,
      seen_results: novel,
    };

    const end = async (
      status: RunStatus,
      reason: Omit<TerminationReason, "turn">,
      result: RunResult | null = null,
      extra: AIMessage[] = [],
    ) => {
      // How the run ended is also an audit event (one per run, idempotent on replay).
      await (await host.audit()).record(
        [
          {
            thread_id: threadIdFrom(config),
            run_id: run?.run_id ?? "",
            kind: "run_ended",
            subject: "",
            node: "observe",
            actor: run?.owner ?? "",
            code: reason.code,
            tool: null,
            detail: reason.budget ? `${reason.detail} (${reason.budget})` : reason.detail,
            at: new Date(host.now()).toISOString(),
          },
        ],
        runStartOf(threadIdFrom(config), run),
      );
      // The run ends with the checkpoint after this node: it is durable before the run reports done.
      await endRunAtNextCheckpoint(host, config);
      return {
        ...transition(state.status, status),
        messages: [...messages, ...extra],
        evidence: fresh,
        progress,
        termination_reason: { ...reason, turn },
        result,
      };
    };

    const waits = state.review_waits?.run_id === run?.run_id ? Object.values(state.review_waits?.by_call ?? {}) : [];
    const stop = firstStop({
      state,
      verdict: state.verdict,
      decisions,
      results,
      evidence: allEvidence,
      stepsWithoutProgress: progress.steps_without_progress,
      run,
      budgets: host.budgets,
      now: () => host.now(),
      waitedMs: waits.reduce((sum, ms) => sum + ms, 0),
    });
    if (stop)
      return end(stop.status, stop.reason, stop.result ?? null, stop.result ? [answerMessage(stop.result)] : []);
    // A new run on an old thread clears the previous run's outcome here.
    return {
      ...transition(state.status, "planning"),
      messages,
      evidence: fresh,
      progress,
      termination_reason: null,
      result: null,
    };
  };
}
