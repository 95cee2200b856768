/** The run's budgets: used, limit and left, for each hard limit the server enforces. */
import type { Budgets, Usage } from "../types";

export function BudgetTable({ usage, budgets }: { usage: Usage; budgets: Budgets }) {
  const rows: [string, number, number, string][] = [
    ["Model turns", usage.model_calls, budgets.model_turns, ""],
    ["Tool calls", usage.tool_calls, budgets.tool_calls, ""],
    ["Tokens", usage.input_tokens + usage.output_tokens, budgets.tokens, ""],
    ["Time", Math.round(usage.elapsed_ms), budgets.deadline_ms, " ms"],
  ];
  return (
    <table className="budgets" aria-label="Budgets">
      <caption>Budgets</caption>
      <thead>
        <tr>
          <th scope="col">Budget</th>
          <th scope="col">Used</th>
          <th scope="col">Left</th>
          <th scope="col">Limit</th>
        </tr>
      </thead>
      <tbody>
        {rows.map(([name, used, limit, unit]) => (
          <tr key={name}>
            <th scope="row">{name}</th>
            <td>{`${used}${unit}`}</td>
            <td>{`${Math.max(0, limit - used)}${unit}`}</td>
            <td>{`${limit}${unit}`}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
