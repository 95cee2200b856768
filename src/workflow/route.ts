/**
 * The fixed workflow's routing, as pure functions of state: code, not a
 * planner, chooses each next step. The control-plane nodes (authorize,
 * human_review, execute, observe) are the agent's own.
 *
 *   notes question: retrieve → read → generate → validate → observe → END
 *   study request:  study (each turn) … → validate → observe → END
 *   claim (case id): case (each turn) … → validate → observe → END
 *   each proposing step → authorize → (execute | human_review | observe) → observe → next step
 */
import { END } from "@langchain/langgraph";
import { contextProviders } from "../domains/index.js";
import { latestRequest } from "../planners/context.js";
import type { ContextProvider } from "../ports.js";
import { resolveRequest } from "../graph/follow-up.js";
import { isTerminal } from "../state/transitions.js";
import { NODES, type State } from "../state.js";
import { workflowRequest } from "./request.js";
import { readAttempted } from "./retrieved.js";

/** The workflow's own steps; the control-plane nodes keep the agent's names. */
export const STEPS = {
  retrieve: "retrieve",
  read: "read",
  generate: "generate",
  validate: "validate",
  study: "study",
  case: "case",
} as const;

/** The step that repeats each turn for a request with its own sequence (study, case); undefined for a notes question. */
function ownSequence(request: string): typeof STEPS.study | typeof STEPS.case | undefined {
  const kind = workflowRequest(request).kind;
  return kind === "study" ? STEPS.study : kind === "case" ? STEPS.case : undefined;
}

/**
 * The sequence a run takes, from its request: study requests and claims have
 * their own. The new message is read as the answer to the question the last
 * run asked first, as the run's first step will read it (graph/step.ts).
 */
export function makeFirstStep(providers: readonly ContextProvider[]) {
  return (state: State) =>
    ownSequence(resolveRequest(providers, state.pending, latestRequest(state.messages)).request) ?? STEPS.retrieve;
}

/** The first step with the shipped domains' providers. */
export const firstStep = makeFirstStep(contextProviders);

/** After a proposing step: its calls go to authorize; an answer to validate; any other ending straight to observe. */
export const afterStep = (state: State) => {
  if ((state.proposals ?? []).length > 0) return NODES.authorize;
  return state.verdict?.type === "final" ? STEPS.validate : NODES.observe;
};

/** After observe: the run ended, or the next step of its sequence. */
export const nextStep = (state: State) => {
  if (isTerminal(state.status)) return END;
  // In a run, its request is the one its first step resolved (a follow-up's completed request).
  const own = ownSequence(state.run?.request ?? latestRequest(state.messages));
  if (own !== undefined) return own;
  return readAttempted(state.messages) ? STEPS.generate : STEPS.read;
};
