/**
 * Per-run usage: what a run has spent, summed by the state's reducer and
 * compared with the budgets. A leaf: plain data and arithmetic.
 */
/** Per-run counters. `reset` starts a new run's totals (written by plan at the start of a run). */
export interface Usage {
  model_calls: number;
  tool_calls: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  elapsed_ms: number;
}
export type UsageUpdate = Partial<Usage> & { reset?: boolean };

export const ZERO_USAGE: Usage = {
  model_calls: 0,
  tool_calls: 0,
  input_tokens: 0,
  output_tokens: 0,
  cost_usd: 0,
  elapsed_ms: 0,
};

export function sumUsage(current: Usage, update: UsageUpdate): Usage {
  const base = update.reset ? ZERO_USAGE : current;
  return {
    model_calls: base.model_calls + (update.model_calls ?? 0),
    tool_calls: base.tool_calls + (update.tool_calls ?? 0),
    input_tokens: base.input_tokens + (update.input_tokens ?? 0),
    output_tokens: base.output_tokens + (update.output_tokens ?? 0),
    cost_usd: base.cost_usd + (update.cost_usd ?? 0),
    elapsed_ms: base.elapsed_ms + (update.elapsed_ms ?? 0),
  };
}
