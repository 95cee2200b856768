/**
 * The seam through which a domain adds context to a run without the control
 * plane knowing the domain: at the start of a run, plan asks each provider
 * once, as the run's owner, and keeps what it returns in `state.run.context`
 * under the provider's name. Planners read it (the rules planner by name;
 * the model planner only the fenced `model_note`). A provider reads through
 * the tool host, so servers check the caller again; it never widens what the
 * run may do.
 */
import type { Principal } from "../auth/principal.js";
import type { CatalogTool } from "../policy/contracts.js";
import type { ToolHost } from "../mcp/tool-host.js";

export interface DomainContext {
  /** Data for the domain's own planner branch (validated by the domain). */
  data: unknown;
  /** What a model planner is shown, as data not instructions; null for nothing. */
  model_note: string | null;
}

export interface ContextProviderInput {
  tools: ToolHost;
  /** This step's effective set: a provider may read only through tools offered to the owner. */
  offered: readonly CatalogTool[];
  request: string;
  principal: Principal;
  threadId: string;
  /** The run's clock at its start (milliseconds since the epoch): what "today" means for the request. */
  now: number;
  signal?: AbortSignal | undefined;
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

export interface ContextProvider {
  /** Key in `state.run.context`, e.g. `notes.course`. */
  name: string;
  /** Undefined when the request is not one this provider serves. */
  load(input: ContextProviderInput): Promise<DomainContext | undefined>;
  /** When a run on `request` ended `needs_human`: the missing facts this domain asked for, or undefined when it asked for none. */
  pendingQuestion?(input: {
    request: string;
    reason: string;
  }): Pick<PendingQuestion, "missing" | "request"> | undefined;
  /** The next message read as the answer to `pending`: the completed request, or undefined when it answers nothing (a new request). */
  readAnswer?(pending: PendingQuestion, message: string): string | undefined;
}
