/**
 * Every denied call of the thread's latest run, from one state read: the
 * state's append-only `denials` field keeps each refused call once, at
 * whichever stage it was refused (proposal, review, execution), with its run.
 */
import { denialsOf } from "./read";
import type { AgentValues, Denial } from "./types";

export function useRunDenials(values: AgentValues): Denial[] {
  return values.run?.run_id ? denialsOf(values) : [];
}
