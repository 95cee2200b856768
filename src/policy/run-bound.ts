/**
 * Run-bound arguments: values the host fixes for a whole run from the
 * request (never from the model), declared per contract in
 * `warrant.config.json` (`"run_bound": {"<argument>": {"from_request": "<pattern>"}}`).
 * Authorization denies any call whose argument differs, and fails closed when
 * a contract declares a run-bound argument and the run fixed no value.
 */
import type { ToolContract } from "./contracts.js";

/** Longest value a run may fix for one argument. */
const MAX_VALUE_CHARS = 128;

/**
 * The run-bound values for a request: for each argument some contract
 * declares, the first match of its pattern in the request text. `explicit`
 * values (an entry point's own flag, e.g. the CLI's) win over the text; an
 * explicit value for an argument no contract declares is ignored.
 */
export function runBoundFor(
  request: string,
  contracts: Iterable<Pick<ToolContract, "run_bound">>,
  explicit: Record<string, string> = {},
): Record<string, string> {
  const bound: Record<string, string> = {};
  for (const contract of contracts) {
    for (const [argument, rule] of Object.entries(contract.run_bound)) {
      if (Object.hasOwn(bound, argument)) continue;
      const value = Object.hasOwn(explicit, argument)
        ? explicit[argument]
        : new RegExp(rule.from_request).exec(request)?.[0];
      if (value !== undefined && value.length > 0 && value.length <= MAX_VALUE_CHARS) bound[argument] = value;
    }
  }
  return bound;
}
