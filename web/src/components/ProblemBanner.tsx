/** A readable error: what happened, the server's code, and what to do next. */
import type { Problem } from "../api";

const ADVICE: Record<Problem["kind"], string> = {
  auth: "Sign in again.",
  down: "The server may be restarting; try again in a moment.",
  refused: "",
};

export function ProblemBanner({
  problem,
  onRetry,
  onDismiss,
}: {
  problem: Problem;
  onRetry?: () => void;
  onDismiss?: () => void;
}) {
  return (
    <div className={`problem problem-${problem.kind}`} role="alert" data-code={problem.code}>
      <p>
        <strong>{problem.kind === "down" ? "The server did not answer." : problem.message}</strong>{" "}
        <code>{problem.code}</code>
      </p>
      {ADVICE[problem.kind] && <p>{ADVICE[problem.kind]}</p>}
      <div className="row">
        {onRetry && (
          <button type="button" onClick={onRetry}>
            Retry
          </button>
        )}
        {onDismiss && (
          <button type="button" className="secondary" onClick={onDismiss}>
            Dismiss
          </button>
        )}
      </div>
    </div>
  );
}
