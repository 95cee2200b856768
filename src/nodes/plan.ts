/**
 * plan: builds the planner's context, offers this step's effective tools,
 * asks the planner, and records its proposals. It never runs anything.
 */
import { isGraphInterrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { isModelBehaviorError } from "../errors.js";
import type { Host } from "../host.js";
import { plannerView, type PlannerView } from "../planners/context.js";
import type { PlanResult, Planner } from "../planners/planner.js";
import { sanitizePlan } from "../planners/sanitize.js";
import { toToolSpec } from "../policy/contracts.js";
import { costOf } from "../policy/pricing.js";
import { threadIdFrom } from "../run-config.js";
import { beginStep, concludeStep, proposeCalls } from "../graph/step.js";
import { withoutSecrets } from "../planners/reply-redaction.js";
import type { NodeUpdate, State } from "../state.js";

export function makePlanNode(host: Host) {
  return async function plan(state: State, config: LangGraphRunnableConfig): Promise<NodeUpdate<"plan">> {
    const step = await beginStep(host, state, config);
    const { run } = step;
    const withContext = (update: NodeUpdate<"plan">): NodeUpdate<"plan"> =>
      view && view.compactions > 0 && update.tool_offer
        ? { ...update, tool_offer: { ...update.tool_offer, context: compactionOf(view) } }
        : update;

    let result: PlanResult;
    let price: Planner["price"];
    let view: PlannerView | undefined;
    try {
      const planner = await host.planner();
      price = planner.price;
      view = plannerView(state.messages, {
        ...(planner.contextBudgetTokens !== undefined ? { budgetTokens: planner.contextBudgetTokens } : {}),
        ...(planner.model !== undefined ? { model: planner.model } : {}),
      });
      result = await planner.plan({
        request: step.request,
        messages: view.messages,
        tools: step.offered.map(toToolSpec),
        candidates: step.candidates.map(toToolSpec),
        evidence: state.evidence,
        turn: run.turn,
        thread_id: threadIdFrom(config),
        context: run.context ?? {},
        ...(config.signal ? { signal: config.signal } : {}),
      });
    } catch (error) {
      if (isGraphInterrupt(error)) throw error;
      if (!isModelBehaviorError(error)) throw error;
      // A bad model reply still costs a turn; observe ends the run with planner_error.
      return withContext(
        concludeStep(state, step, { type: "error", code: error.code, message: error.message }, { model_calls: 1 }),
      );
    }

    const usage = {
      model_calls: 1,
      input_tokens: result.usage.input_tokens,
      output_tokens: result.usage.output_tokens,
      cost_usd: costOf(result.usage, price),
    };
    // Planner output is untrusted text: nothing unstorable, and no secret, reaches the checkpoint or our tables.
    const outcome = await withoutSecrets(sanitizePlan(result.outcome, state.messages), {
      host,
      tools: await host.tools(),
      threadId: threadIdFrom(config),
      run,
    });
    if (outcome.type === "tool_calls" && outcome.calls.length > 0)
      return withContext(proposeCalls(state, step, outcome, usage));
    const verdict =
      outcome.type === "tool_calls"
        ? { type: "error" as const, code: "model_empty_reply", message: "the planner proposed an empty set of calls" }
        : outcome;
    return withContext(concludeStep(state, step, verdict, usage));
  };
}

/** What the trace shows of a compacted context (recorded only once a compaction happened in the thread). */
function compactionOf(view: PlannerView) {
  return {
    tokens: view.tokens,
    compacted_through: view.compactedThrough,
    compacted_results: view.compactedResults,
    compactions: view.compactions,
  };
}
