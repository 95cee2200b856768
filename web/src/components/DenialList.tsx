/** Every proposal the control plane refused, with the check's code and its reason. */
import type { Denial } from "../types";

export function DenialList({ denials }: { denials: Denial[] }) {
  if (denials.length === 0) return null;
  return (
    <section aria-label="Denied proposals" className="denials">
      <h3>Refused proposals</h3>
      <ul>
        {denials.map((denial) => (
          <li key={denial.call_id} data-code={denial.code} data-check={denial.check}>
            <code>{denial.tool}</code>: <strong>{denial.code}</strong> — {denial.message}
            {denial.check && (
              <small className="check">
                {" "}
                (check: {denial.check}
                {denial.withheld ? `, ${denial.withheld}` : ""})
              </small>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
