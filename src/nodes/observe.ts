/**
 * observe: turns this turn's decisions and results into tool messages and
 * evidence, checks every stop condition, and either ends the run with a
 * termination reason or hands back to plan. It is the only node that ends a run.
 */
import { createHash } from "node:crypto";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Host } from "../host.js";
import { extractEvidence } from "../state/extract-evidence.js";
import { exhaustedBudget } from "../policy/budgets.js";
import type { Decision, RecordedDenial } from "../policy/decision.js";
import { deniedToolMessage, errorToolMessage } from "../policy/refusal.js";
import { mergeEvidence, type Evidence } from "../state/evidence.js";
import { runStartOf } from "../audit/chain.js";
import { MAX_WRITE_SENDS } from "../runtime/retry.js";
import { describeAction } from "../wording/proposal.js";
import { transition, type RunStatus } from "../state/transitions.js";
import type {
  CallResult,
  Citation,
  NodeUpdate,
  Progress,
  ProgressUpdate,
  RunResult,
  State,
  TerminationReason,
} from "../state.js";
import { threadIdFrom } from "../runtime/run-config.js";

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

function citationsFor(
  refs: readonly string[],
  evidence: readonly Evidence[],
): { citations: Citation[]; unsupported: string[] } {
  const citations: Citation[] = [];
  const unsupported: string[] = [];
  for (const ref of new Set(refs)) {
    const item = evidence.find((entry) => entry.ref === ref);
    if (!item) {
      unsupported.push(ref);
      continue;
    }
    const citation: Citation = { ref, source_id: item.source_id };
    if (item.page !== undefined) citation.page = item.page;
    if (item.title !== undefined) citation.title = item.title;
    citations.push(citation);
  }
  return { citations, unsupported };
}

function answerMessage(result: RunResult): AIMessage {
  const sources = result.citations.map(
    (citation, index) =>
      `[${index + 1}] ${citation.source_id}${citation.page !== undefined ? ` p.${citation.page}` : ""} (${citation.ref})`,
  );
  const content = sources.length > 0 ? `${result.answer}\n\nSources:\n${sources.join("\n")}` : result.answer;
  return new AIMessage({ content, additional_kwargs: { warrant_result: result } });
}

/**
 * A write whose effect is still unknown after execute tried to reconcile it
 * (no status tool, status unreachable, no budget left to ask) stops the run
 * for a human, with that reason: neither the planner nor the host may guess
 * whether to send it again. Only this step's results count.
 */
export function unresolvedWrites(
  state: Pick<State, "proposals" | "call_results"> & Partial<Pick<State, "decisions">>,
): string | undefined {
  const proposed = new Set((state.proposals ?? []).map((proposal) => proposal.call_id));
  const results = (state.call_results ?? []).filter((result) => proposed.has(result.call_id));
  const unfinished = results.filter((result) => !result.ok && result.unfinished === true);
  if (unfinished.length > 0) return unfinishedWrites(unfinished, state.decisions ?? []);
  const unknown = results.filter((result) => !result.ok && result.code === "outcome_unknown");
  if (unknown.length === 0) return undefined;
  const calls = unknown.map((result) => `${result.tool} (${result.call_id})${result.ok ? "" : `: ${result.message}`}`);
  return `outcome_unknown: ${calls.join("; ")}. Check whether it took effect before asking again.`;
}

/**
 * Writes whose every send was found not applied (execute's `unfinished`): the
 * approved effect never happened and the host sends it no more. Each is named
 * by its tool and what it would have done, so the person knows what to redo.
 */
function unfinishedWrites(results: readonly CallResult[], decisions: readonly Decision[]): string {
  const named = results.map((result) => {
    const action = decisions.find((decision) => decision.type === "allow" && decision.call_id === result.call_id);
    const args = action?.type === "allow" ? action.model_args : {};
    const zone = typeof args["timezone"] === "string" ? args["timezone"] : "UTC";
    return `${result.tool} (${result.call_id}): “${describeAction(result.tool, args, zone).summary}”`;
  });
  return (
    `unfinished write: ${named.join("; ")}. It was approved and sent ${MAX_WRITE_SENDS} times, and each time the ` +
    "server reported it not applied, so nothing was done and it will not be sent again. Check the server, then ask again."
  );
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
      return {
        ...transition(state.status, status),
        messages: [...messages, ...extra],
        evidence: fresh,
        progress,
        termination_reason: { ...reason, turn },
        result,
      };
    };

    const unresolved = state.verdict?.type === "tool_calls" ? unresolvedWrites(state) : undefined;
    if (unresolved !== undefined) return end("needs_human", { code: "needs_human", detail: unresolved });

    const verdict = state.verdict;
    if (verdict?.type === "final") {
      const { citations, unsupported } = citationsFor(verdict.citations, allEvidence);
      if (unsupported.length > 0) {
        return end("failed", {
          code: "unsupported_citation",
          detail: `cited refs not in evidence: ${unsupported.join(", ")}`,
        });
      }
      const result: RunResult = { answer: verdict.answer, citations, abstained: verdict.abstained };
      if (verdict.abstained)
        return end("abstained", { code: "abstained", detail: "no supporting evidence" }, result, [
          answerMessage(result),
        ]);
      return end(
        "completed",
        { code: "final_answer", detail: `answered with ${citations.length} citation(s)` },
        result,
        [answerMessage(result)],
      );
    }
    if (verdict?.type === "needs_human") return end("needs_human", { code: "needs_human", detail: verdict.reason });
    if (verdict?.type === "error")
      return end("failed", { code: "planner_error", detail: `${verdict.code}: ${verdict.message}` });
    if (verdict?.type === "stop") return end("failed", { code: verdict.code, detail: verdict.detail });

    const stopDenial = decisions.find(
      (decision): decision is Extract<Decision, { type: "deny" }> =>
        decision.type === "deny" && (decision.code === "budget_exhausted" || decision.code === "repeated_action"),
    );
    const stopResult = results.find((result) => !result.ok && result.code === "budget_exhausted");
    if (stopDenial?.code === "repeated_action") {
      return end("stopped", {
        code: "repeated_action",
        detail: `${stopDenial.tool} was proposed again with the same arguments`,
      });
    }
    if (stopDenial || stopResult) {
      return end("stopped", {
        code: "budget_exhausted",
        budget: "tool_calls",
        detail: `tool-call budget of ${host.budgets.tool_calls} used up`,
      });
    }
    const waits = state.review_waits?.run_id === run?.run_id ? Object.values(state.review_waits?.by_call ?? {}) : [];
    const waited = waits.reduce((sum, ms) => sum + ms, 0);
    const budget = run ? exhaustedBudget(state.usage, host.budgets, run.started_at, host.now(), waited) : undefined;
    if (budget) return end("stopped", { code: "budget_exhausted", budget, detail: `${budget} budget used up` });
    if (progress.steps_without_progress >= host.budgets.no_progress_steps) {
      return end("stopped", {
        code: "no_progress",
        detail: `${progress.steps_without_progress} turns without new results or evidence`,
      });
    }
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
