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
  signal?: AbortSignal | undefined;
}

export interface ContextProvider {
  /** Key in `state.run.context`, e.g. `notes.course`. */
  name: string;
  /** Undefined when the request is not one this provider serves. */
  load(input: ContextProviderInput): Promise<DomainContext | undefined>;
}
