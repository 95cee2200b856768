/**
 * human_review: the only node that pauses. It asks once for every pending
 * approval of the step (no side effects before `interrupt()`), checks that
 * the authenticated approver may decide each action under the review policy,
 * binds each decision to the exact action, and runs an edit through the same
 * policy pipeline as a proposal, as the run's owner.
 */
import { interrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Principal } from "../auth/principal.js";
import type { Host } from "../host.js";
import { bindResume, interruptPayload } from "../policy/approval.js";
import type { InterruptPayload, ResumeDecision } from "../policy/resume.js";
import { remainingToolCalls } from "../policy/budgets.js";
import { decideAnswer } from "../policy/decide.js";
import { approverRefusal, type Counters, type DecideContext } from "../policy/checks.js";
import { denials, pendingReview, type ApprovalOutcome, type Decision } from "../policy/decision.js";
import { connectionWaits, connectPayload, pendingConnections } from "../graph/connections.js";
import type { ApprovalRecord } from "../ports.js";
import { decideContextFor, repeatCountsOf } from "../graph/decide-context.js";
import { principalFrom } from "../run-config.js";
import { recordDenials } from "../audit/events.js";
import { withoutSecretsInResume } from "../audit/redactions.js";
import { runStartOf } from "../audit/chain.js";
import { transition } from "../state/transitions.js";
import { repeatCountsUpdate, type NodeUpdate, type ReviewWaits, type State } from "../state.js";

type Review = Extract<Decision, { type: "review" }>;

export function makeHumanReviewNode(host: Host) {
  return async function human_review(
    state: State,
    config: LangGraphRunnableConfig,
  ): Promise<NodeUpdate<"human_review">> {
    if ((state.connect ?? []).length > 0) return awaitConnections(host, state, config);
    const pending = pendingReview(state.decisions ?? []);
    const request = interruptPayload(pending);
    const payload: InterruptPayload = state.review_feedback ? { ...request, error: state.review_feedback } : request;
    // Exactly one interrupt per node run. A refused answer ends this run of the
    // node and the graph routes back here: the next run is a new task, so a
    // refused value is never replayed and re-judged under a later approver.
    const answer: unknown = interrupt(payload);
    const review_waits = waitsUntilNow(state, pending, host.now());
    // The approver is who sent this resume, with their permissions as they are now.
    const approver = await host.currentPrincipal(principalFrom(config));
    const context = await decideContextFor(state, config, host);
    const refused = approverRefusal(approver, context.owner, pending, context.engine, context.now);
    if (refused) {
      const policies = context.engine?.name === "cedar" ? { policies: refused.policies } : {};
      return { review_feedback: { code: refused.code, message: refused.message, ...policies }, review_waits };
    }
    const binding = bindResume(
      await withoutSecretsInResume(answer, {
        host,
        threadId: context.threadId,
        run: state.run,
        approver: approver.user_id,
        tools: pending.map((review) => review.tool),
      }),
      pending,
    );
    if (!binding.ok) return { review_feedback: { code: "invalid_resume", message: binding.message }, review_waits };

    const resolved = new Map<string, Decision>();
    const records: ApprovalRecord[] = [];
    const decidedAt = new Date(context.now).toISOString();
    let repeats = repeatCountsOf(state);
    for (const { review, decision } of binding.pairs) {
      const others = (state.decisions ?? []).filter(
        (entry) => entry.call_id !== review.call_id && entry.type !== "deny",
      ).length;
      const counters: Counters = {
        budgetLeft: remainingToolCalls(state.usage, host.budgets) - others,
        repeats: withoutOne(repeats, review.fingerprint),
      };
      const result = decideAnswer(review, decision, context, counters, approver);
      if (result.decision.type === "allow" && decision.type === "edit") repeats = result.counters.repeats;
      const outcome = outcomeOf(decision, result.decision);
      resolved.set(review.call_id, {
        ...result.decision,
        review: { approver: approver.user_id, outcome, decided_at: decidedAt },
      });
      records.push(recordOf(state, context, review, approver, outcome, result.decision, decidedAt));
    }
    // The record exists before any approved effect can start (execute runs after this node).
    await (await host.approvals()).record(records, runStartOf(context.threadId, state.run));
    const denied = await recordDenials(await host.audit(), denials([...resolved.values()]), {
      thread_id: context.threadId,
      run_id: state.run?.run_id ?? "",
      actor: context.owner.user_id,
      at: decidedAt,
      node: "human_review",
      stage: "edit",
      run: runStartOf(context.threadId, state.run),
    });
    const decisions = (state.decisions ?? []).map((decision) => resolved.get(decision.call_id) ?? decision);
    const next = decisions.some((decision) => decision.type === "allow") ? "tool_authorized" : "observing";
    const runRepeats = repeatCountsUpdate(state.run?.run_id ?? "", repeatCountsOf(state), repeats);
    return {
      ...transition(state.status, next),
      decisions,
      repeats: runRepeats,
      review_feedback: null,
      review_waits,
      ...(denied.length > 0 ? { denials: denied } : {}),
    };
  };
}

/**
 * An authorization pause: asks the owner to connect each server, then, on any
 * resume (the callback's, or anyone's), looks at the token store again as the
 * owner. Servers still missing are asked again with fresh URLs; once none is,
 * the step goes on to its reviews or its calls.
 */
async function awaitConnections(
  host: Host,
  state: State,
  config: LangGraphRunnableConfig,
): Promise<NodeUpdate<"human_review">> {
  interrupt(connectPayload(state.connect ?? []));
  // The owner's time at the authorization server is not the run's: excluded from its deadline.
  const review_waits = connectionWaits(state, host.now());
  const context = await decideContextFor(state, config, host);
  const waiting = new Set((state.connect ?? []).flatMap((connection) => connection.call_ids));
  const still = await pendingConnections(
    host,
    (state.decisions ?? []).filter((decision) => waiting.has(decision.call_id)),
    { thread_id: context.threadId, user_id: context.owner.user_id, tenant: context.owner.tenant },
    state.connect ?? [],
  );
  if (still.length > 0) return { connect: still, review_waits };
  const decisions = state.decisions ?? [];
  if (pendingReview(decisions).length > 0) return { connect: null, review_waits };
  const next = decisions.some((decision) => decision.type === "allow") ? "tool_authorized" : "observing";
  return { ...transition(state.status, next), connect: null, review_waits };
}

/** The repeat counts with one authorization of `fingerprint` taken back (an edit replaces that action). */
function withoutOne(repeats: Readonly<Record<string, number>>, fingerprint: string): Record<string, number> {
  const counts = { ...repeats };
  const seen = Object.hasOwn(counts, fingerprint) ? (counts[fingerprint] ?? 0) : 0;
  if (seen <= 1) delete counts[fingerprint];
  else counts[fingerprint] = seen - 1;
  return counts;
}

/** This run's review waits with the pending reviews' waits measured up to `now` (a later answer replaces an earlier one). */
function waitsUntilNow(state: State, pending: readonly Review[], now: number): ReviewWaits | null {
  const runId = state.run?.run_id;
  if (!runId) return state.review_waits ?? null;
  const byCall = state.review_waits?.run_id === runId ? { ...state.review_waits.by_call } : {};
  for (const review of pending) byCall[review.call_id] = Math.max(0, now - Date.parse(review.approval.requested_at));
  return { run_id: runId, by_call: byCall };
}

function outcomeOf(decision: ResumeDecision, result: Decision): ApprovalOutcome {
  if (result.type === "deny" && result.check === "expiry") return "expired";
  if (decision.type === "edit") return result.type === "allow" ? "edit" : "edit_refused";
  return decision.type;
}

function recordOf(
  state: State,
  context: DecideContext,
  review: Review,
  approver: Principal,
  outcome: ApprovalOutcome,
  result: Decision,
  decidedAt: string,
): ApprovalRecord {
  return {
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
    owner: context.owner.user_id,
    decided_at: decidedAt,
    expires_at: review.approval.expires_at,
  };
}
