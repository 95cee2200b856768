/** Plain-text rendering of a run for the terminal. */
import type { State } from "../state.js";
import { approvalCard, type PendingReview } from "./review.js";

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length))) ?? [];
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/**
 * The run as the terminal shows it. `state` may be partial (a thread with no
 * checkpoint yet); `review` is the pending review, if any, and `resume` the
 * command that answers it.
 */
export function formatRun(
  threadId: string,
  state: Partial<State>,
  review: PendingReview | undefined,
  resume: string | undefined,
): string {
  const lines: string[] = [`thread: ${threadId}`, `status: ${state.status ?? "(no checkpoint yet)"}`, ""];
  if (state.result) {
    lines.push(state.result.answer, "");
    if (state.result.citations.length > 0) {
      lines.push("citations:");
      for (const [index, citation] of state.result.citations.entries()) {
        const page = citation.page !== undefined ? ` p.${citation.page}` : "";
        lines.push(`  [${index + 1}] ${citation.source_id}${page}  ${citation.ref}`);
      }
      lines.push("");
    }
  }
  if (review) {
    lines.push(approvalCard(review), "");
    if (resume)
      lines.push(
        "approve all with:",
        `  ${resume}`,
        `(or send {"type":"edit","action_id":…,"edited_action":{"name":…,"args":{…}}} or {"type":"reject","action_id":…,"message":…} per action)`,
        "",
      );
  }
  lines.push("ledger:");
  const ledger = state.ledger ?? [];
  if (ledger.length === 0) lines.push("  (no tool executions)");
  else {
    const rows = [["call_id", "attempt", "tool", "status", "error", "ms"]];
    for (const row of ledger)
      rows.push([
        row.call_id,
        String(row.attempt),
        row.tool,
        row.status,
        row.error_code ?? "",
        String(row.elapsed_ms ?? ""),
      ]);
    lines.push(
      ...table(rows)
        .split("\n")
        .map((line) => `  ${line}`),
    );
  }
  const usage = state.usage;
  if (usage) {
    const tokens = usage.input_tokens + usage.output_tokens;
    // Turns that spent no token and no cost were the rules planner's (or code steps'): no model was asked.
    const planning =
      tokens === 0 && usage.cost_usd === 0
        ? `${usage.model_calls} planner turn(s) (rules planner, no model)`
        : `${usage.model_calls} model call(s), ${tokens} tokens`;
    lines.push("", `usage: ${planning}, ${usage.tool_calls} tool call(s)`);
  }
  const reason = state.termination_reason;
  lines.push(
    `termination: ${reason ? `${reason.code}${reason.budget ? ` (${reason.budget})` : ""}: ${reason.detail}` : "(run not finished)"}`,
  );
  return lines.join("\n");
}
