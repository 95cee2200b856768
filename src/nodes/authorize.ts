/**
 * authorize: turns each proposal into allow / deny / review, in the order of
 * DESIGN §3: offered this step → arguments valid → run-bound resources →
 * principal authorized → budget reserved → under the repeat limit → risk.
 * Denials are typed, repairable observations; nothing here calls a tool.
 */
import { randomUUID } from "node:crypto";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { principalFromConfig, type Principal } from "../auth/principal.js";
import type { Host } from "../host.js";
import type { CatalogTool } from "../mcp/catalog.js";
import type { ToolHost } from "../mcp/tool-host.js";
import type { Proposal } from "../planners/planner.js";
import { authorizeCall, injectArguments } from "../policy/authorization.js";
import { remainingToolCalls } from "../policy/budgets.js";
import type { Decision } from "../policy/decision.js";
import { validateArguments } from "../policy/validation.js";
import { actionFingerprint } from "../runtime/fingerprint.js";
import { transition } from "../runtime/transitions.js";
import type { NodeUpdate, RepeatCounts, State } from "../state.js";

/** How long a reviewer has to decide on an approval request. */
export const APPROVAL_TTL_MS = 15 * 60 * 1000;

/** When an approval was requested (its expiry minus the TTL it was issued with). */
export function approvalRequestedAt(approval: { expires_at: string }): number {
  return Date.parse(approval.expires_at) - APPROVAL_TTL_MS;
}

export interface CheckContext {
  principal: Principal;
  threadId: string;
  runBound: Record<string, unknown>;
}

function deny(proposal: Proposal, code: Extract<Decision, { type: "deny" }>["code"], message: string): Decision {
  return { type: "deny", call_id: proposal.call_id, tool: proposal.name, code, message };
}

/** Run-bound values the host fixed for this run (set server-side, never from a client body). */
export function runBoundFrom(config: LangGraphRunnableConfig): Record<string, unknown> {
  const value = config.configurable?.["warrant_run_bound"];
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function threadIdFrom(config: LangGraphRunnableConfig): string {
  const value = config.configurable?.["thread_id"];
  return typeof value === "string" && value.length > 0 ? value : "no-thread";
}

/**
 * Static checks of one proposal: it names an offered tool, its arguments are
 * valid and it is authorized for the principal. Shared with human_review,
 * which re-checks a reviewer's edit.
 */
export function checkProposal(
  proposal: Proposal,
  offered: readonly string[],
  tools: ToolHost,
  context: CheckContext,
): { ok: true; tool: CatalogTool; modelArgs: Record<string, unknown>; args: Record<string, unknown> } | { ok: false; decision: Decision } {
  // The plan node refused a name or id it could not keep (planners/sanitize); what is left is a safe stand-in.
  if (proposal.refusal) return { ok: false, decision: deny(proposal, proposal.refusal.code, proposal.refusal.message) };
  const tool = offered.includes(proposal.name) ? tools.catalog().find((entry) => entry.name === proposal.name) : undefined;
  if (!tool) {
    const code = tools.isListed(proposal.name) ? "tool_not_permitted" : "unknown_tool";
    return { ok: false, decision: deny(proposal, code, code === "unknown_tool" ? "no such tool" : "this tool is not available in this step") };
  }
  const validation = validateArguments(tool, proposal.raw_arguments);
  if (!validation.ok) return { ok: false, decision: deny(proposal, validation.code, validation.message) };
  const authorization = authorizeCall(tool, validation.args, context.principal, context.runBound);
  if (!authorization.ok) return { ok: false, decision: deny(proposal, authorization.code, authorization.message) };
  const args = injectArguments(tool, validation.args, context.principal, context.threadId);
  return { ok: true, tool, modelArgs: validation.args, args };
}

export function makeAuthorizeNode(host: Host) {
  return async function authorize(state: State, config: LangGraphRunnableConfig): Promise<NodeUpdate<"authorize">> {
    const context: CheckContext = { principal: principalFromConfig(config), threadId: threadIdFrom(config), runBound: runBoundFrom(config) };
    const tools = await host.tools();
    const runId = state.run?.run_id ?? "";
    const counts: Record<string, number> = state.repeats?.run_id === runId ? { ...state.repeats.counts } : {};
    let budgetLeft = remainingToolCalls(state.usage, host.budgets);
    const offered = state.tool_offer?.offered ?? [];

    const decisions: Decision[] = (state.proposals ?? []).map((proposal) => {
      const checked = checkProposal(proposal, offered, tools, context);
      if (!checked.ok) return checked.decision;
      if (budgetLeft <= 0) {
        return { ...(deny(proposal, "budget_exhausted", "the run's tool-call budget is used up") as Extract<Decision, { type: "deny" }>), budget: "tool_calls" };
      }
      const fingerprint = actionFingerprint(checked.tool.name, checked.modelArgs);
      const seen = counts[fingerprint] ?? 0;
      if (seen >= host.budgets.max_repeats) return deny(proposal, "repeated_action", "this exact call was already made in this run");
      counts[fingerprint] = seen + 1;
      budgetLeft -= 1;
      const action = {
        call_id: proposal.call_id,
        tool: checked.tool.name,
        server: checked.tool.server,
        risk: checked.tool.contract.risk,
        args: checked.args,
        model_args: checked.modelArgs,
        fingerprint,
      };
      if (action.risk === "read") return { type: "allow", ...action };
      return {
        type: "review",
        ...action,
        description: `${checked.tool.name} (${action.risk.replace("_", " ")}) needs your approval`,
        approval: {
          action_id: randomUUID(),
          fingerprint,
          version: 1,
          expires_at: new Date(host.now() + APPROVAL_TTL_MS).toISOString(),
        },
      };
    });

    // Each denial is also an audit event, recorded before the step is (idempotent on replay).
    const at = new Date(host.now()).toISOString();
    const denials = decisions.filter((decision): decision is Extract<Decision, { type: "deny" }> => decision.type === "deny");
    if (denials.length > 0) {
      await (await host.audit()).record(
        denials.map((denial) => ({
          thread_id: context.threadId,
          run_id: runId,
          kind: "denied" as const,
          subject: denial.call_id,
          node: "authorize" as const,
          actor: context.principal.user_id,
          code: denial.code,
          tool: denial.tool,
          detail: denial.message,
          at,
        })),
      );
    }

    const repeats: RepeatCounts = { run_id: runId, counts };
    const next = decisions.some((decision) => decision.type === "review")
      ? "waiting_approval"
      : decisions.some((decision) => decision.type === "allow")
        ? "tool_authorized"
        : "observing";
    return { ...transition(state.status, next), decisions, repeats };
  };
}
