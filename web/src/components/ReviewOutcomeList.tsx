/** After a decision: per action what came of it (from the server's reading of the ledger) and the final answer. */
import { isRecord } from "../read";
import { describeAction, outcomeWords, timesInWords, VIEWER_ZONE } from "../wording";

interface Reviewed {
  action_id: string;
  tool: string;
  outcome: string;
  reason: string | null;
  args: Record<string, unknown>;
}

function reviewedOf(value: unknown): Reviewed | null {
  if (!isRecord(value) || typeof value.tool !== "string" || typeof value.outcome !== "string") return null;
  return {
    action_id: typeof value.action_id === "string" ? value.action_id : "",
    tool: value.tool,
    outcome: value.outcome,
    reason: typeof value.reason === "string" ? value.reason : null,
    args: isRecord(value.args) ? value.args : {},
  };
}

export function ReviewOutcomeList({ actions, answer }: { actions: unknown[]; answer: string | null }) {
  const rows = actions.map(reviewedOf).filter((row): row is Reviewed => row !== null);
  return (
    <section className="review-outcome" aria-label="What came of your decision" data-testid="review-outcome-list">
      <h3>What happened</h3>
      <ol className="outcomes">
        {rows.map((row) => (
          <li key={row.action_id} data-outcome={row.outcome} className={`outcome outcome-${row.outcome}`}>
            <span className="outcome-word">{outcomeWords(row.outcome, row.reason)}</span>
            <span>{describeAction(row.tool, row.args, VIEWER_ZONE).summary}</span>
          </li>
        ))}
      </ol>
      {answer && (
        <div className="final-answer">
          <h3>The assistant's answer</h3>
          <p>{timesInWords(answer, VIEWER_ZONE)}</p>
        </div>
      )}
    </section>
  );
}
