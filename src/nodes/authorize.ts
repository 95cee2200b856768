/**
 * authorize: maps this step's proposals through the policy pipeline
 * (`src/policy/decide.ts`), records each denial as an audit event, and
 * returns its slice. Nothing here calls a tool.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Host } from "../host.js";
import { remainingToolCalls } from "../policy/budgets.js";
import { decideAll } from "../policy/decide.js";
import { denials } from "../policy/decision.js";
import { pendingConnections } from "../graph/connections.js";
import { decideContextFor, repeatCountsOf } from "../graph/decide-context.js";
import { recordDenials } from "../audit/events.js";
import { runStartOf } from "../audit/chain.js";
import { transition } from "../state/transitions.js";
import { repeatCountsUpdate, type NodeUpdate, type State } from "../state.js";

export function makeAuthorizeNode(host: Host) {
  return async function authorize(state: State, config: LangGraphRunnableConfig): Promise<NodeUpdate<"authorize">> {
    const context = await decideContextFor(state, config, host);
    const { decisions, counters } = decideAll(state.proposals ?? [], context, {
      budgetLeft: remainingToolCalls(state.usage, host.budgets),
      repeats: repeatCountsOf(state),
    });
    const denied = await recordDenials(await host.audit(), denials(decisions), {
      thread_id: context.threadId,
      run_id: state.run?.run_id ?? "",
      actor: context.owner.user_id,
      at: new Date(context.now).toISOString(),
      node: "authorize",
      stage: "propose",
      run: runStartOf(context.threadId, state.run),
    });
    const repeats = repeatCountsUpdate(state.run?.run_id ?? "", repeatCountsOf(state), counters.repeats);
    const connect = await pendingConnections(host, decisions, {
      thread_id: context.threadId,
      user_id: context.owner.user_id,
      tenant: context.owner.tenant,
    });
    const next =
      connect.length > 0 || decisions.some((decision) => decision.type === "review")
        ? "waiting_approval"
        : decisions.some((decision) => decision.type === "allow")
          ? "tool_authorized"
          : "observing";
    return {
      ...transition(state.status, next),
      decisions,
      repeats,
      connect: connect.length > 0 ? connect : null,
      ...(denied.length > 0 ? { denials: denied } : {}),
    };
  };
}
