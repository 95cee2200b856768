/**
 * "Why was this call decided so?", from a run's stored trace alone: for each
 * proposal, the checks it passed, the one that refused it (with its code and
 * message), the review and who decided it, and every execution attempt.
 * Pure: it quotes what the nodes and stores recorded and re-derives nothing.
 */
import { CHECKS } from "../policy/decide.js";
import type { ApprovalEntry, DecisionEntry, ExecutionEntry, RunTrace } from "./trace-entries.js";

export interface CallExplanation {
  call_id: string;
  tool: string;
  /** The model turn that proposed it (0 when the trace has no plan entry before it). */
  turn: number;
  /** Pipeline checks the proposal passed, in order. */
  passed: string[];
  /** The decisions recorded for it: authorize's, then human_review's (edits, expiry, rejection). */
  decisions: Pick<DecisionEntry, "node" | "outcome" | "check" | "code" | "message" | "at" | "policies">[];
  approvals: Pick<ApprovalEntry, "outcome" | "approver" | "version" | "at">[];
  executions: Pick<ExecutionEntry, "attempt" | "status" | "error_code" | "approved_by" | "at">[];
}

const PIPELINE = CHECKS.map((check) => check.name as string);

/** The pipeline checks before the one that refused (all of them for an allowed or reviewed call). */
export function checksPassed(check: string | null, outcome: DecisionEntry["outcome"]): string[] {
  if (outcome !== "deny" || check === null) return [...PIPELINE];
  const at = PIPELINE.indexOf(check);
  return at === -1 ? [...PIPELINE] : PIPELINE.slice(0, at);
}

/** Every proposal of the run (or the one call asked for), in the order they were decided. */
export function explainRun(trace: RunTrace, callId?: string): CallExplanation[] {
  const calls = new Map<string, CallExplanation>();
  let turn = 0;
  for (const entry of trace.timeline) {
    if (entry.kind === "plan") {
      turn = entry.turn;
      continue;
    }
    if (entry.kind === "observe" || (callId !== undefined && entry.call_id !== callId)) continue;
    let call = calls.get(entry.call_id);
    if (!call) {
      call = {
        call_id: entry.call_id,
        tool: entry.tool,
        turn,
        passed: [],
        decisions: [],
        approvals: [],
        executions: [],
      };
      calls.set(entry.call_id, call);
    }
    if (entry.kind === "decision") {
      if (entry.node === "authorize") call.passed = checksPassed(entry.check, entry.outcome);
      const { node, outcome, check, code, message, at, policies } = entry;
      call.decisions.push({ node, outcome, check, code, message, at, ...(policies ? { policies } : {}) });
    } else if (entry.kind === "approval") {
      const { outcome, approver, version, at } = entry;
      call.approvals.push({ outcome, approver, version, at });
    } else {
      const { attempt, status, error_code, approved_by, at } = entry;
      call.executions.push({ attempt, status, error_code, approved_by, at });
    }
  }
  return [...calls.values()];
}

export function renderExplanation(
  trace: RunTrace,
  calls: readonly CallExplanation[],
  /** The text of a policy by id (the configured Cedar files), to quote the policies that decided. */
  policyText: (id: string) => string | undefined = () => undefined,
): string {
  const lines = [`run ${trace.run_id} · thread ${trace.thread_id} · owner ${trace.owner}`];
  if (trace.request) lines.push(`request: ${trace.request}`);
  if (calls.length === 0) lines.push("", "no proposal of this run matches");
  for (const call of calls) {
    lines.push("", `call ${call.call_id} · ${call.tool} · proposed at turn ${call.turn}`);
    lines.push(`  checks passed: ${call.passed.length > 0 ? call.passed.join(", ") : "(none)"}`);
    for (const decision of call.decisions) {
      const why =
        decision.outcome === "deny"
          ? `refused by ${decision.check ?? "?"}: ${decision.code ?? "?"}: ${decision.message ?? ""}`
          : decision.outcome === "review"
            ? "needs a review"
            : "allowed";
      lines.push(`  ${decision.node}: ${why}`);
      if (decision.policies !== undefined) {
        const ids = decision.policies.length > 0 ? decision.policies.join(", ") : "none (default deny)";
        lines.push(`    determining policies: ${ids}`);
        for (const id of decision.policies) {
          const text = policyText(id);
          if (text !== undefined) for (const line of text.split("\n")) lines.push(`      ${line}`);
        }
      }
    }
    for (const approval of call.approvals)
      lines.push(`  review: ${approval.outcome} by ${approval.approver} (version ${approval.version})`);
    for (const execution of call.executions) {
      const by = execution.approved_by ? `, approved by ${execution.approved_by}` : "";
      const error = execution.error_code ? ` (${execution.error_code})` : "";
      lines.push(`  executed: attempt ${execution.attempt} ${execution.status}${error}${by}`);
    }
    if (call.executions.length === 0) lines.push("  executed: no");
  }
  return lines.join("\n");
}
