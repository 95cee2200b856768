/**
 * What a domain adds to a run, as the run state keeps it: the context its
 * provider loaded at the run's start (`state.run.context`, by provider name)
 * and the question a run ended with (`state.pending`). The providers
 * themselves are a port (`ContextProvider`, src/ports.ts).
 */
export interface DomainContext {
  /** Data for the domain's own planner branch (validated by the domain). */
  data: unknown;
  /** What a model planner is shown, as data not instructions; null for nothing. */
  model_note: string | null;
}

/** A question a run ended with, kept in state until the thread's next message (survives restarts with the checkpoint). */
export interface PendingQuestion {
  /** The provider that recorded it (its `name`): only it reads the answer. */
  provider: string;
  /** The run that asked. */
  run_id: string;
  /** The request being completed: the original, with the answers merged so far. */
  request: string;
  /** The facts still missing, as the domain names them (e.g. `start_time`, `duration`). */
  missing: string[];
  /** The question the run ended with (its `needs_human` reason). */
  question: string;
}
