/**
 * human_review: the only node that pauses. It asks once for every pending
 * approval of the step (no side effects before `interrupt()`), binds each
 * decision to the exact action, and re-checks an edit as a new proposal.
 * Only the run's owner or a principal with `approvals:decide` may decide; the
 * approver is the authenticated principal of the resume request.
 */
import { interrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { principalFromConfig, type Principal } from "../auth/principal.js";
import type { Host } from "../host.js";
import { bindResume, interruptPayload, type InterruptPayload, type ResumeDecision } from "../policy/approval.js";
import { pendingReview, type Decision } from "../policy/decision.js";
import { actionFingerprint } from "../runtime/fingerprint.js";
import { runStartOf } from "../runtime/audit-chain.js";
import { transition } from "../runtime/transitions.js";
import type { ApprovalOutcome, ApprovalRecord } from "../runtime/approvals.js";
import type { NodeUpdate, ReviewWaits, State } from "../state.js";
import { approvalRequestedAt, checkProposal, runBoundFrom, threadIdFrom } from "./authorize.js";

type Review = Extract<Decision, { type: "review" }>;

export const REVIEWER_SCOPE = "approvals:decide";

function mayDecide(approver: Principal, owner: string | undefined): boolean {
  return approver.user_id === owner || approver.scopes.includes(REVIEWER_SCOPE);
}

export function makeHumanReviewNode(host: Host) {
  return async function human_review(state: State, config: LangGraphRunnableConfig): Promise<NodeUpdate<"human_review">> {
    const pending = pendingReview(state.decisions ?? []);
    const request = interruptPayload(pending);
    const payload: InterruptPayload = state.review_feedback ? { ...request, error: state.review_feedback } : request;
    // Exactly one interrupt per node run. A refused answer ends this run of the
    // node and the graph routes back here: the next run is a new task, so a
    // refused value is never replayed and re-judged under a later approver.
    const answer: unknown = interrupt(payload);
    const review_waits = waitsUntilNow(state, pending, host.now());
    const approver = principalFromConfig(config);
    if (!mayDecide(approver, state.run?.owner)) {
      return { review_feedback: { code: "approver_not_permitted", message: "only the run's owner or a reviewer may decide" }, review_waits };
    }
    const binding = bindResume(answer, pending);
    if (!binding.ok) return { review_feedback: { code: "invalid_resume", message: binding.message }, review_waits };

    const tools = await host.tools();
    const context = { principal: approver, threadId: threadIdFrom(config), runBound: runBoundFrom(config) };
    const resolved = new Map<string, Decision>();
    const records: ApprovalRecord[] = [];
    const decidedAt = new Date(host.now()).toISOString();
    for (const { review, decision } of binding.pairs) {
      const result = await resolve(review, decision, host, tools, context, state.tool_offer?.offered ?? []);
      const outcome = outcomeOf(review, decision, result, host.now());
      resolved.set(review.call_id, { ...result, review: { approver: approver.user_id, outcome, decided_at: decidedAt } } as Decision);
      records.push({
        thread_id: context.threadId,
        run_id: state.run?.run_id ?? "",
        call_id: review.call_id,
        tool: review.tool,
        action_id: review.approval.action_id,
        version: review.approval.version,
        fingerprint: review.approval.fingerprint,
        outcome,
        edited_fingerprint: outcome === "edit" && result.type === "allow" ? result.fingerprint : null,
        approver: approver.user_id,
        approver_tenant: approver.tenant,
        owner: state.run?.owner ?? "",
        decided_at: decidedAt,
        expires_at: review.approval.expires_at,
      });
    }
    // The record exists before any approved effect can start (execute runs after this node).
    await (await host.approvals()).record(records, runStartOf(context.threadId, state.run));
    const decisions = (state.decisions ?? []).map((decision) => resolved.get(decision.call_id) ?? decision);
    const next = decisions.some((decision) => decision.type === "allow") ? "tool_authorized" : "observing";
    return { ...transition(state.status, next), decisions, review_feedback: null, review_waits };
  };
}

/** This run's review waits with the pending reviews' waits measured up to `now` (a later answer replaces an earlier one). */
function waitsUntilNow(state: State, pending: readonly Review[], now: number): ReviewWaits | null {
  const runId = state.run?.run_id;
  if (!runId) return state.review_waits ?? null;
  const byCall = state.review_waits?.run_id === runId ? { ...state.review_waits.by_call } : {};
  for (const review of pending) byCall[review.call_id] = Math.max(0, now - approvalRequestedAt(review.approval));
  return { run_id: runId, by_call: byCall };
}

function outcomeOf(review: Review, decision: ResumeDecision, result: Decision, now: number): ApprovalOutcome {
  if (Date.parse(review.approval.expires_at) <= now) return "expired";
  if (decision.type === "edit") return result.type === "allow" ? "edit" : "edit_refused";
  return decision.type;
}

async function resolve(
  review: Review,
  decision: ResumeDecision,
  host: Host,
  tools: Awaited<ReturnType<Host["tools"]>>,
  context: Parameters<typeof checkProposal>[3],
  offered: readonly string[],
): Promise<Decision> {
  const { approval, description: _description, type: _type, ...action } = review;
  if (Date.parse(approval.expires_at) <= host.now()) {
    return { type: "deny", call_id: review.call_id, tool: review.tool, code: "approval_expired", message: "the approval request expired" };
  }
  if (decision.type === "reject") {
    return { type: "deny", call_id: review.call_id, tool: review.tool, code: "approval_rejected", message: decision.message ?? "rejected by the reviewer" };
  }
  if (decision.type === "approve") return { type: "allow", ...action };
  // An edit is a new version of the action: validated and authorized again.
  if (decision.edited_action.name !== review.tool) {
    return { type: "deny", call_id: review.call_id, tool: review.tool, code: "tool_not_permitted", message: "an edit may not change the tool" };
  }
  const checked = checkProposal(
    { call_id: review.call_id, name: review.tool, raw_arguments: JSON.stringify(decision.edited_action.args) },
    offered,
    tools,
    context,
  );
  if (!checked.ok) return checked.decision;
  // Identity injected from the principal stays the run owner's (set when the action was
  // proposed), not the reviewer's; an edited action gets its own idempotency key.
  const args = { ...checked.args };
  for (const [name, source] of Object.entries(checked.tool.contract.injected)) {
    if (source.startsWith("principal.") && Object.hasOwn(review.args, name)) args[name] = review.args[name];
  }
  return { ...action, type: "allow", args, model_args: checked.modelArgs, fingerprint: actionFingerprint(review.tool, checked.modelArgs) };
}
