/**
 * One step of a run that proposes (the agent's plan node, and each of the
 * fixed workflow's code-owned steps): which run it belongs to (a new one, or
 * the one in progress), as whom it acts, which tools this step offers, and
 * how its proposals or its verdict are written. Shared so that both graphs
 * start runs, offer tools and record proposals with the same code.
 */
import { randomUUID } from "node:crypto";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Principal } from "../auth/principal.js";
import type { Host } from "../host.js";
import type { ToolHost } from "../mcp/tool-host.js";
import { latestRequest } from "../planners/context.js";
import type { PlanOutcome } from "../planners/planner.js";
import { toolCallMessage } from "../planners/sanitize.js";
import type { CatalogTool } from "../policy/contracts.js";
import type { Usage } from "../policy/usage.js";
import { candidateTools, effectiveTools } from "../policy/effective-tools.js";
import type { PlanVerdict, RunInfo, RunUpdate, State, ToolOffer, Update } from "../state.js";
import type { DomainContext, PendingQuestion } from "../state/domain-context.js";
import { pendingFrom, resolveRequest } from "./follow-up.js";
import { runOwner } from "./owner.js";
import { principalFrom, runIdFrom, threadIdFrom } from "../run-config.js";
import { isTerminal, transition, type RunStatus } from "../state/transitions.js";

/** Reads and writes are offered in the default stage; writes still need approval in authorize. */
export const STAGE = "default";

/** What a proposing step knows before it decides anything. */
export interface Step {
  /** The run's owner with current permissions. */
  principal: Principal;
  request: string;
  /** This step's effective tools. */
  offered: CatalogTool[];
  /** The run's candidate set (fixed at its start; a superset of `offered`): the model's tools block. */
  candidates: CatalogTool[];
  /** The run this step belongs to, its turn counted. */
  run: RunInfo;
  /** What every proposing step writes: its run, its offer, and no pending question (a step that asks one sets it). */
  base: { run: RunUpdate; tool_offer: ToolOffer; pending: null };
  /** The question a `needs_human` ending leaves for the next message (a domain's, through its provider), or null. */
  pendingFor: (reason: string) => PendingQuestion | null;
  /** A new run starts its usage sums from zero. */
  usageReset: { reset?: true };
  /** Status hops from where the state is to `planning`. */
  hops: RunStatus[];
}

function startsNewRun(status: RunStatus): boolean {
  return status === "created" || isTerminal(status);
}

/** Asks each domain's context provider once, at the run's start, as the owner. */
async function loadContext(
  host: Host,
  input: {
    tools: ToolHost;
    offered: readonly CatalogTool[];
    request: string;
    principal: Principal;
    threadId: string;
    now: number;
    signal?: AbortSignal | undefined;
  },
): Promise<Record<string, DomainContext>> {
  const context: Record<string, DomainContext> = {};
  for (const provider of host.contextProviders) {
    const loaded = await provider.load(input);
    if (loaded !== undefined) context[provider.name] = loaded;
  }
  return context;
}

/** Starts a run (or takes the next turn of the one in progress) and computes this step's offer. */
export async function beginStep(host: Host, state: State, config: LangGraphRunnableConfig): Promise<Step> {
  const newRun = startsNewRun(state.status);
  const starting = newRun || !state.run;
  // A new run belongs to whoever started it; a continuing run acts for its owner, whoever resumed it.
  const principal = starting ? await host.currentPrincipal(principalFrom(config)) : await runOwner(state, config, host);
  // A new run reads its message as the answer to the question the last one asked first; a later turn keeps the run's request.
  const request = starting
    ? resolveRequest(host.contextProviders, state.pending, latestRequest(state.messages)).request
    : (state.run?.request ?? latestRequest(state.messages));
  const tools = await host.tools();
  const catalog = tools.catalog();
  const selection = {
    tools: catalog,
    principal,
    allowedRisks: ["read", "write_reversible", "write_irreversible"] as const,
    maxTools: tools.maxTools,
    request,
  };
  // Fixed at the run's start and kept in its record, so every turn (and a resume) binds the same tools block.
  const candidates = (!starting && state.run?.candidates) || candidateTools(selection);
  const offer = effectiveTools({
    ...selection,
    stage: STAGE,
    isHealthy: (server) => tools.isHealthy(server),
    candidates,
  });
  // One clock reading starts the run: its record and what its domains take for "now".
  const now = host.now();
  // Domain context is read once, at the start of a run, as its owner; later turns reuse it.
  const context = starting
    ? await loadContext(host, {
        tools,
        offered: offer.offered,
        request,
        principal,
        threadId: threadIdFrom(config),
        now,
        signal: config.signal,
      })
    : (state.run?.context ?? {});
  const run: RunInfo =
    starting || !state.run
      ? {
          // One id names the run everywhere: the API's run id when there is one.
          run_id: runIdFrom(config) ?? randomUUID(),
          request,
          started_at: new Date(now).toISOString(),
          turn: 1,
          owner: principal.user_id,
          // The principal as the entry point verified it (permissions are refreshed at each use).
          principal: principalFrom(config),
          context,
          candidates,
        }
      : { ...state.run, turn: state.run.turn + 1 };
  return {
    principal,
    request,
    offered: offer.offered,
    candidates: catalog.filter((tool) => candidates.includes(tool.name)),
    run,
    // A new run stores its whole record; a later turn only its number (state.ts mergeRun).
    base: {
      run: starting || !state.run ? run : { run_id: run.run_id, turn: run.turn },
      tool_offer: { offered: offer.offered.map((tool) => tool.name), withheld: offer.withheld },
      pending: null,
    },
    pendingFor: (reason) => pendingFrom(host.contextProviders, { run_id: run.run_id, request, reason }),
    usageReset: newRun ? { reset: true } : {},
    hops: state.status === "planning" ? [] : ["planning"],
  };
}

/** The fields a proposing step writes (the plan node's slice). */
export type StepUpdate = Pick<
  Update,
  "messages" | "status" | "proposals" | "usage" | "run" | "verdict" | "tool_offer" | "pending"
>;

/**
 * Records proposed calls already made storable (`sanitizePlan`): the AI
 * message and the proposals authorize will decide.
 */
export function proposeCalls(
  state: State,
  step: Step,
  outcome: Extract<PlanOutcome, { type: "tool_calls" }>,
  usage: Partial<Usage> = {},
): StepUpdate {
  return {
    ...step.base,
    ...transition(state.status, ...step.hops, "tool_proposed"),
    messages: [toolCallMessage(outcome)],
    proposals: outcome.calls,
    verdict: { type: "tool_calls" },
    usage: { ...step.usageReset, ...usage },
  };
}

/** Records a verdict without calls (an answer, a reason a person must act, an error): observe ends the run with it. */
export function concludeStep(
  state: State,
  step: Step,
  verdict: Exclude<PlanVerdict, { type: "tool_calls" }>,
  usage: Partial<Usage> = {},
): StepUpdate {
  return {
    ...step.base,
    ...transition(state.status, ...step.hops, "observing"),
    proposals: [],
    verdict,
    pending: verdict.type === "needs_human" ? step.pendingFor(verdict.reason) : null,
    usage: { ...step.usageReset, ...usage },
  };
}
