/**
 * What-if: re-decides every recorded proposal of some runs under another
 * config, through the same pipeline authorize runs (`decideAll`), with the
 * facts of the time — the offer the model was shown, the owner as recorded
 * (permissions from the directory given, if any), the run's counters as they
 * stood — and lists the decisions that change, with the check responsible.
 * It executes nothing. Once a decision or an offer changes, the model would
 * have seen something else next, so the run's later proposals are marked
 * hypothetical.
 */
import type { Principal } from "../auth/principal.js";
import type { Budgets } from "../env.js";
import { remainingToolCalls } from "../policy/budgets.js";
import type { ReviewPolicy } from "../policy/config.js";
import type { CatalogTool, ToolContract } from "../policy/contracts.js";
import { decideAll } from "../policy/decide.js";
import type { DecideContext } from "../policy/checks.js";
import type { Decision } from "../policy/decision.js";
import type { PolicyEngine } from "../policy/engine.js";
import { effectiveTools } from "../policy/effective-tools.js";
import { runBoundFor } from "../policy/run-bound.js";
import { repeatCountsOf } from "../graph/decide-context.js";
import type { State } from "../state.js";

/** One authorize step as the checkpoint history holds it: the state it started from and what it decided. */
export interface RecordedStep {
  run_id: string;
  thread_id: string;
  /** When the checkpoint authorize started from was taken. */
  at: string;
  state: Pick<State, "proposals" | "tool_offer" | "usage" | "repeats" | "run">;
  decisions: readonly Decision[];
}

/** The other config, as the pipeline needs it. */
export interface ReplayPolicy {
  /** The other config's contracts joined with the tool definitions recorded for them. */
  catalog: readonly CatalogTool[];
  isListed(name: string): boolean;
  contracts: readonly ToolContract[];
  reviewPolicy: ReviewPolicy;
  maxTools: number;
  budgets: Budgets;
  /** The stage runs use. */
  stage: string;
  /** The owner's permissions under the other directory (the recorded principal itself without one). */
  principal(recorded: Principal): Principal;
  /** The engine behind `authorized` under the other policy (e.g. Cedar with new policy files); built-in when absent. */
  engine?: PolicyEngine;
}

export interface ReplayChange {
  run_id: string;
  thread_id: string;
  /** The model turn of the step. */
  turn: number;
  call_id: string;
  tool: string;
  before: string;
  after: string;
  /** The check that refused under the other config (or `review` when a review is now needed, null when allowed). */
  check: string | null;
  /** A decision after an earlier change in the same run: the model would have seen something else before proposing it. */
  hypothetical: boolean;
}

export interface OfferChange {
  run_id: string;
  turn: number;
  added: string[];
  removed: string[];
  hypothetical: boolean;
}

export interface ReplayReport {
  runs: string[];
  steps: number;
  proposals: number;
  changes: ReplayChange[];
  offers: OfferChange[];
}

/** A decision in one word or three: `allow`, `review (rule)`, `deny (check: code)`. */
export function summarize(decision: Decision): string {
  if (decision.type === "allow") return "allow";
  if (decision.type === "review") return `review (${decision.rule})`;
  return `deny (${decision.check}: ${decision.code})`;
}

function checkOf(decision: Decision): string | null {
  return decision.type === "deny" ? decision.check : decision.type === "review" ? "review" : null;
}

export function replay(steps: readonly RecordedStep[], policy: ReplayPolicy): ReplayReport {
  const report: ReplayReport = { runs: [], steps: 0, proposals: 0, changes: [], offers: [] };
  const diverged = new Set<string>();
  for (const step of steps) {
    if (!report.runs.includes(step.run_id)) report.runs.push(step.run_id);
    const run = step.state.run;
    if (!run) continue;
    report.steps += 1;
    const owner = policy.principal(
      run.principal ?? { user_id: run.owner, tenant: "", role: "", scopes: [], grants: {} },
    );
    const recordedOffer = step.state.tool_offer ?? { offered: [], withheld: [] };
    const context: DecideContext = {
      // The proposals were made against the offer the model was shown; a new offer is reported apart.
      offer: recordedOffer,
      catalog: {
        find: (name) => policy.catalog.find((tool) => tool.name === name),
        isListed: (name) => policy.isListed(name),
      },
      owner,
      threadId: step.thread_id,
      runBound: runBoundFor(run.request, policy.contracts),
      reviewPolicy: policy.reviewPolicy,
      maxRepeats: policy.budgets.max_repeats,
      now: Date.parse(step.at) || 0,
      ...(policy.engine ? { engine: policy.engine } : {}),
    };
    const proposals = step.state.proposals ?? [];
    report.proposals += proposals.length;
    const { decisions } = decideAll(proposals, context, {
      budgetLeft: remainingToolCalls(step.state.usage, policy.budgets),
      repeats: repeatCountsOf(step.state as State),
    });
    const hypothetical = diverged.has(step.run_id);
    let changed = false;
    decisions.forEach((decision, index) => {
      const recorded = step.decisions.find((item) => item.call_id === decision.call_id) ?? step.decisions[index];
      if (!recorded || summarize(recorded) === summarize(decision)) return;
      changed = true;
      report.changes.push({
        run_id: step.run_id,
        thread_id: step.thread_id,
        turn: run.turn,
        call_id: decision.call_id,
        tool: decision.tool,
        before: summarize(recorded),
        after: summarize(decision),
        check: checkOf(decision),
        hypothetical,
      });
    });
    const offerNow = reOffer(step, owner, policy);
    const added = offerNow.filter((tool) => !recordedOffer.offered.includes(tool));
    const removed = recordedOffer.offered.filter((tool) => !offerNow.includes(tool));
    if (added.length > 0 || removed.length > 0) {
      changed = true;
      report.offers.push({ run_id: step.run_id, turn: run.turn, added, removed, hypothetical });
    }
    if (changed) diverged.add(step.run_id);
  }
  return report;
}

/** The offer the other config would have made at this step (servers healthy as recorded). */
function reOffer(step: RecordedStep, owner: Principal, policy: ReplayPolicy): string[] {
  const run = step.state.run;
  const unhealthyTools = new Set(
    (step.state.tool_offer?.withheld ?? []).filter((entry) => entry.reason === "unhealthy").map((entry) => entry.tool),
  );
  const unhealthy = new Set(policy.catalog.filter((tool) => unhealthyTools.has(tool.name)).map((tool) => tool.server));
  return effectiveTools({
    tools: policy.catalog,
    principal: owner,
    stage: policy.stage,
    allowedRisks: ["read", "write_reversible", "write_irreversible"],
    isHealthy: (server) => !unhealthy.has(server),
    maxTools: policy.maxTools,
    request: run?.request ?? "",
  }).offered.map((tool) => tool.name);
}

export function renderReplay(report: ReplayReport, source: string): string {
  const lines = [
    `replayed ${report.proposals} proposal(s) in ${report.steps} step(s) of ${report.runs.length} run(s)` +
      ` under ${source}; nothing was executed`,
  ];
  if (report.changes.length === 0 && report.offers.length === 0) {
    lines.push("no decision changes");
    return lines.join("\n");
  }
  for (const change of report.changes) {
    const note = change.hypothetical
      ? "  (hypothetical: an earlier change in this run would have changed what the model saw)"
      : "";
    lines.push(
      `${change.run_id} turn ${change.turn} ${change.call_id} ${change.tool}: ${change.before} → ${change.after}${note}`,
    );
  }
  for (const offer of report.offers) {
    const parts = [
      offer.added.length > 0 ? `+${offer.added.join(", +")}` : "",
      offer.removed.length > 0 ? `-${offer.removed.join(", -")}` : "",
    ].filter(Boolean);
    lines.push(
      `${offer.run_id} turn ${offer.turn} offer: ${parts.join(" ")} — the model would have been shown other tools;` +
        " later proposals of this run are hypothetical",
    );
  }
  return lines.join("\n");
}
