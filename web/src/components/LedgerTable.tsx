/** The run's tool calls as a timeline of steps, in words: what was done, how it went, how long it took. */
import type { LedgerRow } from "../types";
import { formatDuration, toolWords } from "../wording";

const STATUS_WORDS: Record<string, string> = {
  running: "in progress",
  succeeded: "done",
  failed: "failed",
  outcome_unknown: "outcome unknown, being checked",
  abandoned: "abandoned",
  denied: "refused",
};

export function LedgerTable({ rows }: { rows: LedgerRow[] }) {
  if (rows.length === 0) return null;
  return (
    <section className="ledger" aria-label="Tool ledger">
      <h3>Steps</h3>
      <ol className="timeline">
        {rows.map((row) => (
          <li key={`${row.call_id}#${row.attempt}`} data-status={row.status} data-tool={row.tool}>
            <span className="step">{toolWords(row.tool)}</span>{" "}
            <span
              className={`state state-${row.status === "succeeded" ? "good" : row.status === "running" ? "busy" : "bad"}`}
            >
              {STATUS_WORDS[row.status] ?? "unknown"}
            </span>
            {row.attempt > 1 && <span className="muted"> · try {row.attempt}</span>}
            {row.task_id && (
              <span className="muted" data-task-id={row.task_id}>
                {" "}
                · a task at the server
              </span>
            )}
            {row.elapsed_ms !== null && <span className="muted"> · {formatDuration(row.elapsed_ms)}</span>}
            {row.error_code && (
              <details className="details">
                <summary>Details</summary>
                <code>{row.error_code}</code>
              </details>
            )}
          </li>
        ))}
      </ol>
    </section>
  );
}
