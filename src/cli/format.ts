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

/** What the terminal shows around a run: the pending review and the commands that answer it or the question. */
export interface RunExtras {
  /** The pending review, if any. */
  review?: PendingReview | undefined;
  /** The command that approves the whole review. */
  resume?: string | undefined;
  /** The command that answers the run's question, with the answer left to write. */
  reply?: string | undefined;
  /** What a paused run without a review waits for (e.g. "authorization"). */
  waiting?: string | undefined;
}

/** The question a run ended with, as a sentence: its `needs_human` reason without the code. */
export function questionOf(state: Partial<State>): string | undefined {
  const question = state.pending?.question;
  if (typeof question !== "string" || question.trim() === "") return undefined;
  const sentence = question.replace(/^[a-z_]+:\s*/, "").trim();
  return sentence.charAt(0).toUpperCase() + sentence.slice(1);
}

/**
 * The run as the terminal shows it. `state` may be partial (a thread with no
 * checkpoint yet). The thread id is not repeated here: the command wrote it
 * to stderr when the run started. A question the run ends with is the last
 * line, right above the shell's prompt, after the command that answers it.
 */
export function formatRun(state: Partial<State>, extras: RunExtras = {}): string {
  const { review, resume } = extras;
  const lines: string[] = [`status: ${state.status ?? "(no checkpoint yet)"}`, ""];
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
        '(or send {"type":"edit","action_id":…,"edited_action":{"name":…,"args":{…}}} ' +
          'or {"type":"reject","action_id":…,"message":…} per action)',
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
  const question = questionOf(state);
  const waiting = review ? "review" : extras.waiting;
  if (reason && question) {
    // The question is asked once, last; the termination line only names it.
    const code = /^([a-z_]+):/.exec(state.pending?.question ?? "")?.[1];
    lines.push(`termination: ${reason.code}: a question for you${code ? ` (${code})` : ""}`);
    if (extras.reply) lines.push(`answer with: ${extras.reply}`);
    lines.push(question);
  } else if (reason)
    lines.push(`termination: ${reason.code}${reason.budget ? ` (${reason.budget})` : ""}: ${reason.detail}`);
  else lines.push(`termination: none yet, ${waiting ? `waiting for ${waiting}` : "the run has not finished"}`);
  return lines.join("\n");
}
