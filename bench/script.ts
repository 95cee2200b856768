/**
 * What every variant's scripted model does, so all three run the same
 * conversation: the request carries how many tool steps the thread takes;
 * step i proposes one `search_notes` call with a query of its own (distinct
 * arguments, so no repeat rule ends the thread), then comes a final answer.
 * Stateless: the next move is read from the request and the number of tool
 * results so far, so concurrent threads cannot disturb each other.
 */

/** The notes question of the issue; also the request whose tool offer is counted in tokens. */
export const QUESTION = "Compare self-attention with cross-attention using my notes";

/** The user whose notes every variant searches (the peers pass it as an argument, Warrant injects it). */
export const USER_ID = "alice";

export const TOOL_NAME = "search_notes";

export const FINAL_ANSWER =
  "Self-attention relates positions of one sequence; cross-attention attends from one sequence to another.";

const STEPS_MARK = /\[bench: (\d+) tool steps\]$/;

/** The request for a thread of `steps` tool steps. */
export function benchRequest(steps: number): string {
  return `${QUESTION} [bench: ${steps} tool steps]`;
}

/** How many tool steps a bench request asks for (0 for any other text). */
export function stepsOf(request: string): number {
  const match = STEPS_MARK.exec(request);
  return match ? Number(match[1]) : 0;
}

/**
 * The model-visible arguments of step `step` (1-based): one hit, so each
 * result is one ranked snippet (≈400 characters of JSON).
 */
export function stepArguments(step: number): { query: string; limit: number } {
  return { query: `attention step ${step}`, limit: 1 };
}

/** The next move after `done` tool results: the next step's arguments, or null for the final answer. */
export function nextMove(request: string, done: number): { query: string; limit: number } | null {
  return done < stepsOf(request) ? stepArguments(done + 1) : null;
}
