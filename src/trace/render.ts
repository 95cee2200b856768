/** `npm run trace` as text: one line per entry, times relative to the run's start. */
import type { Budgets } from "../env.js";
import { escapeUnsafe } from "../policy/safe-text.js";
import type { RunTrace, TraceEntry } from "./trace-entries.js";

const short = (id: string) => (id.length > 14 ? `${id.slice(0, 12)}…` : id);
const names = (items: readonly string[], max = 6) =>
  items.length <= max ? items.join(", ") : `${items.slice(0, max).join(", ")}, … (+${items.length - max})`;

function offset(at: string, start: number): string {
  const ms = Date.parse(at) - start;
  return Number.isFinite(ms) ? `+${ms} ms`.padStart(10) : "".padStart(10);
}

/**
 * What a planning step spent. A step that asked a planner and got no model
 * name, no tokens and no cost was answered by the rules planner (it counts
 * as a turn, not as a model call); a code step of the fixed workflow asked
 * no planner at all.
 */
function spending(entry: Extract<TraceEntry, { kind: "plan" }>): string {
  const { model_calls, input_tokens, output_tokens, cost_usd } = entry.usage;
  if (model_calls === 0) return "code step, no model";
  if (entry.model === null && input_tokens + output_tokens === 0 && cost_usd === 0) return "rules planner, no model";
  return `${model_calls} model call(s), ${input_tokens} in / ${output_tokens} out tokens, $${cost_usd.toFixed(6)}`;
}

function describe(entry: TraceEntry): string {
  switch (entry.kind) {
    case "plan": {
      const tokens = spending(entry);
      const withheld = entry.withheld.map((item) => `${item.tool}: ${item.reason}`);
      const proposed = entry.proposed.map((call) => `${call.tool} [${short(call.call_id)}]`);
      const node = entry.node === "plan" ? "" : `(${entry.node}) `;
      const model = entry.model ? `  model ${entry.model}` : "";
      const withheldPart = withheld.length ? `; withheld ${withheld.length}: ${names(withheld, 4)}` : "";
      const context = entry.context;
      const compaction = context
        ? [
            `            context compaction ${context.compactions}: ${context.compacted_results} older tool result(s)` +
              ` shown as refs + excerpt (messages 1–${context.compacted_through}), ~${context.tokens} tokens`,
          ]
        : [];
      return [
        `plan        ${node}turn ${entry.turn}${model}  ${tokens}`,
        `            offered ${entry.offered.length}: ${names(entry.offered)}${withheldPart}`,
        `            verdict ${entry.verdict}${proposed.length ? `; proposed ${names(proposed)}` : ""}`,
        ...compaction,
      ].join("\n");
    }
    case "decision": {
      const detail = entry.message ? ` (${entry.message})` : "";
      const denial = entry.outcome === "deny" ? `: ${entry.check} → ${entry.code}${detail}` : "";
      return `decision    ${entry.outcome.padEnd(6)} ${entry.tool} [${short(entry.call_id)}] by ${entry.node}${denial}`;
    }
    case "approval":
      return `approval    ${entry.outcome} ${entry.tool} [${short(entry.call_id)}] by ${entry.approver}, request version ${entry.version}`;
    case "execution": {
      const error = entry.error_code ? ` ${entry.error_code} (${entry.error_class})` : "";
      const approved = entry.approved_by ? `, approved by ${entry.approved_by}` : "";
      const elapsed = entry.elapsed_ms === null ? "" : ` in ${entry.elapsed_ms} ms`;
      const task = entry.task_id ? `, task ${entry.task_id}` : "";
      const where = `(${entry.server}, ${entry.risk}${approved}${task})`;
      return `execution   ${entry.tool} attempt ${entry.attempt}: ${entry.status}${error}${elapsed} ${where}`;
    }
    case "observe": {
      const evidence = entry.evidence_refs.length ? `evidence ${names(entry.evidence_refs, 4)}` : "no new evidence";
      return `observe     ${evidence}${entry.termination ? `; stop: ${entry.termination.code}` : ""}`;
    }
  }
}

function budgetLine(trace: RunTrace, budgets: Budgets | undefined): string {
  const used = trace.usage;
  const of = (value: number, limit: number | undefined) => (limit === undefined ? `${value}` : `${value}/${limit}`);
  return [
    `budget use: model turns ${of(used.model_calls, budgets?.model_turns)}, tool calls ${of(used.tool_calls, budgets?.tool_calls)},`,
    `tokens ${of(used.input_tokens + used.output_tokens, budgets?.tokens)},`,
    `cost $${used.cost_usd.toFixed(6)}${budgets ? `/$${budgets.cost_usd}` : ""}`,
    budgets ? "(limits as configured now)" : "",
  ]
    .filter(Boolean)
    .join(" ");
}

/** The trace as the text `npm run trace` prints. */
export function renderTrace(trace: RunTrace, budgets?: Budgets): string {
  const start = Date.parse(trace.started_at);
  const lines = [
    `run ${trace.run_id}  thread ${trace.thread_id}  owner ${trace.owner}${trace.graph_id ? `  graph ${trace.graph_id}` : ""}`,
    `request: ${JSON.stringify(trace.request ?? "")}`,
    `started ${trace.started_at}${trace.ended_at ? `  ended ${trace.ended_at}` : "  (not ended)"}  status ${trace.status ?? "unknown"}`,
  ];
  if (trace.api_runs.length > 0) lines.push(`API runs: ${trace.api_runs.join(", ")}`);
  lines.push("");
  for (const entry of trace.timeline) {
    const [first, ...rest] = describe(entry).split("\n");
    lines.push(`${offset(entry.at, start)}  ${first}`, ...rest.map((line) => `${"".padStart(10)}  ${line}`));
  }
  lines.push("");
  lines.push(
    trace.termination
      ? `termination: ${trace.termination.code}: ${trace.termination.detail}`
      : "termination: none yet (the run has not ended)",
  );
  lines.push(budgetLine(trace, budgets));
  lines.push(`evidence: ${trace.evidence_refs.length ? trace.evidence_refs.join(", ") : "none"}`);
  // Requests, messages and tool names are untrusted text: control and bidi characters are shown escaped, never interpreted.
  return lines.map(escapeUnsafe).join("\n");
}
