/** One row per tool execution attempt (the run's ledger): tool, status, attempt, error code, latency. */
import type { LedgerRow } from "../types";

export function LedgerTable({ rows }: { rows: LedgerRow[] }) {
  if (rows.length === 0) return null;
  return (
    <table className="ledger" aria-label="Tool ledger">
      <caption>Tool calls</caption>
      <thead>
        <tr>
          <th scope="col">Tool</th>
          <th scope="col">Status</th>
          <th scope="col">Attempt</th>
          <th scope="col">Error</th>
          <th scope="col">Latency</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={`${row.call_id}#${row.attempt}`} data-status={row.status}>
            <td>{row.tool}</td>
            <td>{row.status}</td>
            <td>{row.attempt}</td>
            <td>{row.error_code ?? "—"}</td>
            <td>{row.elapsed_ms === null ? "…" : `${row.elapsed_ms} ms`}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
