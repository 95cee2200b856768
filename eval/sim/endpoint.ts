/**
 * A SIMULATED model: a local OpenAI-compatible Chat Completions endpoint
 * (127.0.0.1, port 0) that plays a model with a named behaviour profile,
 * deterministically from a seed. Point the model planner at it
 * (`OPENAI_BASE_URL=baseUrl`, `WARRANT_MODEL=model`) and the agent runs
 * through the real model-planner code path with no real model anywhere.
 * Every reply is decided from the request alone (system and user text,
 * offered tools and their schemas, the tool results in the conversation),
 * so one endpoint can serve many runs at once. It counts what each reply
 * *attempted* (invented citations, wrong-course requests, …) so an
 * evaluation can set that against what the agent actually executed.
 */
import { addAttempts, emptyAttempts, type AttemptCounts } from "./attempts.js";
import { SimulationError } from "./errors.js";
import { findProfile, PROFILES } from "./profiles/index.js";
import { respond } from "./respond.js";
import { COMPLETIONS_PATH, serveCompletions, type WireAnswer, type WireRequest } from "./wire.js";

export { isSimulationError, SimulationError } from "./errors.js";
export type { AttemptCounts, AttemptKind } from "./attempts.js";

/** The profiles `startSimulatedModel` accepts, with what each does. */
export const SIMULATED_PROFILES: readonly { name: string; description: string }[] = PROFILES.map(
  ({ name, description }) => ({ name, description }),
);

export interface SimulatedModelOptions {
  profile: string;
  seed: number;
  /** Keep every request body (for tests that inspect what the model was shown); off by default. */
  recordRequests?: boolean;
}

export interface SimulatedModel {
  /** `http://127.0.0.1:<port>/v1`: the value for `OPENAI_BASE_URL`. */
  baseUrl: string;
  /** The model name to send (`WARRANT_MODEL`), `simulated-<profile>`: labelled a simulation wherever it is reported. */
  model: string;
  /**
   * Violations the replies attempted so far, by kind (a copy): all of them,
   * or only those made working on `request` (the user message of a run), so
   * runs of different tasks on one endpoint can be told apart.
   */
  attempts(request?: string): AttemptCounts;
  /** Completions answered so far. */
  completions(): number;
  /** Request bodies received, when `recordRequests` was set. */
  requests(): readonly Record<string, unknown>[];
  close(): Promise<void>;
}

/**
 * Starts the simulated model.
 *
 * @throws SimulationError `unknown_profile` for a profile not in
 * {@link SIMULATED_PROFILES}, `invalid_seed` for a seed that is not a safe integer.
 */
export async function startSimulatedModel(options: SimulatedModelOptions): Promise<SimulatedModel> {
  const profile = findProfile(options.profile);
  if (!profile) {
    throw new SimulationError(
      "unknown_profile",
      `no simulated profile ${JSON.stringify(options.profile)}; known: ${PROFILES.map((known) => known.name).join(", ")}`,
    );
  }
  if (!Number.isSafeInteger(options.seed))
    throw new SimulationError("invalid_seed", `seed must be a safe integer, got ${String(options.seed)}`);
  const model = `simulated-${profile.name}`;
  const attempts = emptyAttempts();
  const attemptsByRequest = new Map<string, AttemptCounts>();
  const recorded: Record<string, unknown>[] = [];
  let completions = 0;

  const answer = (request: WireRequest): WireAnswer => {
    if (request.method !== "POST" || request.path !== COMPLETIONS_PATH) {
      return { kind: "failure", status: 404, message: `the simulated model serves only POST ${COMPLETIONS_PATH}` };
    }
    if (options.recordRequests) recorded.push(request.body);
    const reply = respond(profile, options.seed, request.body);
    addAttempts(attempts, reply.attempts);
    const forRequest = attemptsByRequest.get(reply.request) ?? emptyAttempts();
    attemptsByRequest.set(reply.request, addAttempts(forRequest, reply.attempts));
    completions += 1;
    return { kind: "completion", completion: reply.completion };
  };

  const server = await serveCompletions(answer, { model, idPrefix: "chatcmpl-simulated-" });
  return {
    baseUrl: server.baseUrl,
    model,
    attempts: (request) => ({
      ...(request === undefined ? attempts : (attemptsByRequest.get(request) ?? emptyAttempts())),
    }),
    completions: () => completions,
    requests: () => recorded,
    close: () => server.close(),
  };
}
