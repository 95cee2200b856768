/**
 * plan: builds the planner's context, offers this step's effective tools,
 * asks the planner, and records its proposals. It never runs anything.
 */
import { randomUUID } from "node:crypto";
import { isGraphInterrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Principal } from "../auth/principal.js";
import { isModelBehaviorError } from "../errors.js";
import type { Host } from "../host.js";
import { latestRequest, plannerContext } from "../planners/context.js";
import type { PlanResult, Planner } from "../planners/planner.js";
import { sanitizePlan, toolCallMessage } from "../planners/sanitize.js";
import { toToolSpec, type CatalogTool } from "../policy/contracts.js";
import { effectiveTools } from "../policy/effective-tools.js";
import { costOf } from "../policy/pricing.js";
import type { ToolHost } from "../mcp/tool-host.js";
import type { DomainContext } from "../runtime/context-provider.js";
import { runOwner } from "../runtime/owner.js";
import { withoutSecrets } from "../runtime/redaction.js";
import { principalFrom, runIdFrom, threadIdFrom } from "../runtime/run-config.js";
import { isTerminal, transition, type RunStatus } from "../runtime/transitions.js";
import type { NodeUpdate, RunInfo, State } from "../state.js";

/** Reads and writes are planned in the default stage; writes still need approval in authorize. */
const STAGE = "default";

/** The principal as the entry point verified it (recorded as the run's owner; permissions are refreshed at each use). */
function verifiedPrincipal(config: LangGraphRunnableConfig): Principal {
  return principalFrom(config);
}

function startsNewRun(status: RunStatus): boolean {
  return status === "created" || isTerminal(status);
}

/** Asks each domain's context provider once, at the run's start, as the owner. */
async function loadContext(
  host: Host,
  input: { tools: ToolHost; offered: readonly CatalogTool[]; request: string; principal: Principal; threadId: string; signal?: AbortSignal | undefined },
): Promise<Record<string, DomainContext>> {
  const context: Record<string, DomainContext> = {};
  for (const provider of host.contextProviders) {
    const loaded = await provider.load(input);
    if (loaded !== undefined) context[provider.name] = loaded;
  }
  return context;
}

export function makePlanNode(host: Host) {
  return async function plan(state: State, config: LangGraphRunnableConfig): Promise<NodeUpdate<"plan">> {
    const newRun = startsNewRun(state.status);
    const starting = newRun || !state.run;
    // A new run belongs to whoever started it; a continuing run acts for its owner, whoever resumed it.
    const principal = starting ? await host.currentPrincipal(principalFrom(config)) : await runOwner(state, config, host);
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
    // Domain context is read once, at the start of a run, as its owner; later turns reuse it.
    const context = starting
      ? await loadContext(host, { tools, offered: offer.offered, request, principal, threadId: threadIdFrom(config), signal: config.signal })
      : (state.run?.context ?? {});
    const run: RunInfo =
      starting || !state.run
        ? {
            // One id names the run everywhere: the API's run id when there is one.
            run_id: runIdFrom(config) ?? randomUUID(),
            request,
            started_at: new Date(host.now()).toISOString(),
            turn: 1,
            owner: principal.user_id,
            principal: verifiedPrincipal(config),
            context,
          }
        : { ...state.run, turn: state.run.turn + 1 };
    const base = {
      run,
      tool_offer: { offered: offer.offered.map((tool) => tool.name), withheld: offer.withheld },
    };
    const usageReset = newRun ? { reset: true } : {};

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
        context,
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
    // Planner output is untrusted text: nothing unstorable, and no secret, reaches the checkpoint or our tables.
    const outcome = await withoutSecrets(sanitizePlan(result.outcome, state.messages), { host, tools, threadId: threadIdFrom(config), run });
    if (outcome.type === "tool_calls" && outcome.calls.length > 0) {
      const calls = outcome.calls;
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
