/** Why the run stopped, in plain words; the server's code and detail behind "details". */
import type { TerminationReason } from "../types";
import { terminationWords } from "../wording";

export const plainReason = terminationWords;

export function Termination({ reason }: { reason: TerminationReason }) {
  return (
    <div className={`termination termination-${reason.code}`} data-testid="termination" data-code={reason.code}>
      <strong>{terminationWords(reason)}</strong>
      <details className="details">
        <summary>Details</summary>
        <p>
          {reason.detail} <code>{reason.code}</code>
        </p>
      </details>
    </div>
  );
}
