/** Every proposal the control plane refused, in words; the check and the code behind "details". */
import type { Denial } from "../types";
import { toolWords } from "../wording";

export function DenialList({ denials }: { denials: Denial[] }) {
  if (denials.length === 0) return null;
  return (
    <section aria-label="Denied proposals" className="denials">
      <h3>Refused proposals</h3>
      <ul>
        {denials.map((denial) => (
          <li key={denial.call_id} data-code={denial.code} data-check={denial.check} data-tool={denial.tool}>
            <strong>{toolWords(denial.tool)}</strong>: {denial.message}
            <details className="details">
              <summary>Details</summary>
              <code>{denial.code}</code>
              {denial.check && (
                <small className="check">
                  {" "}
                  (check: {denial.check}
                  {denial.withheld ? `, ${denial.withheld}` : ""})
                </small>
              )}
            </details>
          </li>
        ))}
      </ul>
    </section>
  );
}
