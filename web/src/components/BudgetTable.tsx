/** The run's budgets: used of the limit, for each hard limit the server enforces, in human units. */
import type { Budgets, Usage } from "../types";
import { formatCount, formatDuration } from "../wording";

export function BudgetTable({ usage, budgets }: { usage: Usage; budgets: Budgets }) {
  const rows: [string, number, number, (value: number) => string][] = [
    ["Model turns", usage.model_calls, budgets.model_turns, formatCount],
    ["Tool calls", usage.tool_calls, budgets.tool_calls, formatCount],
    ["Tokens", usage.input_tokens + usage.output_tokens, budgets.tokens, formatCount],
    ["Time", Math.round(usage.elapsed_ms), budgets.deadline_ms, formatDuration],
  ];
  return (
    <section className="budgets" aria-label="Budgets">
      <h3>Budgets</h3>
      <dl className="budget-list">
        {rows.map(([name, used, limit, format]) => (
          <div key={name}>
            <dt>{name}</dt>
            <dd>
              {format(used)} of {format(limit)}
              <meter min={0} max={limit} value={Math.min(used, limit)} aria-label={`${name} used`} />
            </dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
