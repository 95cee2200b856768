/**
 * plan: builds the planner's context, offers this step's effective tools,
 * asks the planner, and records its proposals. It never runs anything.
 */
import { randomUUID } from "node:crypto";
import { isGraphInterrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { principalFromConfig } from "../auth/principal.js";
import { isModelBehaviorError } from "../errors.js";
import type { Host } from "../host.js";
import { toToolSpec } from "../mcp/catalog.js";
import { loadCourseContext } from "../domains/notes/course-context.js";
import { latestRequest, plannerContext } from "../planners/context.js";
import type { PlanResult, Planner } from "../planners/planner.js";
import { sanitizeOutcome, sanitizeProposals, toolCallMessage } from "../planners/sanitize.js";
import { effectiveTools } from "../policy/effective-tools.js";
import { costOf } from "../policy/pricing.js";
import { isTerminal, transition, type RunStatus } from "../runtime/transitions.js";
import type { NodeUpdate, RunInfo, State } from "../state.js";
import { threadIdFrom } from "./authorize.js";

/** Reads and writes are planned in the default stage; writes still need approval in authorize. */
const STAGE = "default";

function startsNewRun(status: RunStatus): boolean {
  return status === "created" || isTerminal(status);
}

/**
 * A write whose effect is still unknown after execute tried to reconcile it
 * (no status tool, status unreachable, no budget left to ask) stops the run
 * for a human, with that reason: neither the planner nor the host may guess
 * whether to send it again.
 */
export function unresolvedWrites(state: Pick<State, "proposals" | "call_results">): string | undefined {
  // call_results keeps its last value across turns with no execution; only the results of the last proposals count.
  const proposed = new Set((state.proposals ?? []).map((proposal) => proposal.call_id));
  const unknown = (state.call_results ?? []).filter((result) => !result.ok && result.code === "outcome_unknown" && proposed.has(result.call_id));
  if (unknown.length === 0) return undefined;
  const calls = unknown.map((result) => `${result.tool} (${result.call_id})${result.ok ? "" : `: ${result.message}`}`);
  return `outcome_unknown: ${calls.join("; ")}. Check whether it took effect before asking again.`;
}

export function makePlanNode(host: Host) {
  return async function plan(state: State, config: LangGraphRunnableConfig): Promise<NodeUpdate<"plan">> {
    const principal = principalFromConfig(config);
    const newRun = startsNewRun(state.status);
    const request = latestRequest(state.messages);
    const hops: RunStatus[] = state.status === "planning" ? [] : ["planning"];

    const tools = await host.tools();
    const offer = effectiveTools({
      tools: tools.catalog(),
      principal,
      stage: STAGE,
      allowedRisks: ["read", "write_reversible", "write_irreversible"],
      isHealthy: (server) => tools.isHealthy(server),
      maxTools: tools.maxTools,
      request,
    });
    const starting = newRun || !state.run;
    // Course context is read once, at the start of a run, as this principal; later turns reuse it.
    const courseContext = starting
      ? ((await loadCourseContext({ tools, offered: offer.offered, request, principal, threadId: threadIdFrom(config), signal: config.signal })) ?? null)
      : (state.run?.course_context ?? null);
    const run: RunInfo =
      starting || !state.run
        ? { run_id: randomUUID(), request, started_at: new Date(host.now()).toISOString(), turn: 1, owner: principal.user_id, course_context: courseContext }
        : { ...state.run, turn: state.run.turn + 1 };
    const base = {
      run,
      tool_offer: { offered: offer.offered.map((tool) => tool.name), withheld: offer.withheld },
    };
    const usageReset = newRun ? { reset: true } : {};

    const unresolved = newRun ? undefined : unresolvedWrites(state);
    if (unresolved !== undefined) {
      return { ...base, ...transition(state.status, ...hops, "observing"), proposals: [], verdict: { type: "needs_human", reason: unresolved }, usage: usageReset };
    }

    let result: PlanResult;
    let price: Planner["price"];
    try {
      const planner = await host.planner();
      price = planner.price;
      result = await planner.plan({
        request,
        messages: plannerContext(state.messages),
        tools: offer.offered.map(toToolSpec),
        evidence: state.evidence,
        turn: run.turn,
        ...(courseContext ? { course: courseContext } : {}),
        ...(config.signal ? { signal: config.signal } : {}),
      });
    } catch (error) {
      if (isGraphInterrupt(error)) throw error;
      if (!isModelBehaviorError(error)) throw error;
      // A bad model reply still costs a turn; observe ends the run with planner_error.
      return {
        ...base,
        ...transition(state.status, ...hops, "observing"),
        proposals: [],
        verdict: { type: "error", code: error.code, message: error.message },
        usage: { ...usageReset, model_calls: 1 },
      };
    }

    const usage = {
      ...usageReset,
      model_calls: 1,
      input_tokens: result.usage.input_tokens,
      output_tokens: result.usage.output_tokens,
      cost_usd: costOf(result.usage, price),
    };
    // Planner output is untrusted text: nothing unstorable reaches the checkpoint or our tables.
    const outcome = sanitizeOutcome(result.outcome);
    if (outcome.type === "tool_calls" && outcome.calls.length > 0) {
      const calls = sanitizeProposals(outcome.calls, state.messages);
      return {
        ...base,
        ...transition(state.status, ...hops, "tool_proposed"),
        messages: [toolCallMessage({ ...outcome, calls })],
        proposals: calls,
        verdict: { type: "tool_calls" },
        usage,
      };
    }
    const verdict =
      outcome.type === "tool_calls"
        ? { type: "error" as const, code: "model_empty_reply", message: "the planner proposed an empty set of calls" }
        : outcome;
    return { ...base, ...transition(state.status, ...hops, "observing"), proposals: [], verdict, usage };
  };
}
