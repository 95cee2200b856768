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

const STEPS_MARK = /\[bench: (\d+) tool steps( research)?\]$/;

/** The request for a thread of `steps` tool steps; `research` alternates `search_notes` and `read_note`. */
export function benchRequest(steps: number, research = false): string {
  return `${QUESTION} [bench: ${steps} tool steps${research ? " research" : ""}]`;
}

/** Whether a bench request asks for the research script. */
export function isResearch(request: string): boolean {
  return STEPS_MARK.exec(request)?.[2] !== undefined;
}

/** Released cs301 notes alice may read, in the order the research script reads them. */
const RESEARCH_NOTES = [
  "cs301.self-attention",
  "cs301.cross-attention",
  "cs301.scaled-dot-product-attention",
  "cs301.multi-head-attention",
  "cs301.encoder-decoder-attention",
  "cs301.positional-encoding",
  "cs301.causal-masking",
  "cs301.word-embeddings",
  "cs301.backpropagation",
  "cs301.dropout",
  "cs301.gradient-descent",
  "cs301.cross-entropy-loss",
  "cs301.bm25",
  "cs301.dense-retrieval",
  "cs301.reranking",
];

/** A scripted move: which tool, with the model-visible arguments. */
export interface Move {
  tool: "search_notes" | "read_note";
  args: Record<string, string | number>;
}

/** Step `step` (1-based) of a request's script. */
export function moveOf(request: string, step: number): Move {
  if (isResearch(request) && step % 2 === 0)
    return { tool: "read_note", args: { note_id: RESEARCH_NOTES[(step / 2 - 1) % RESEARCH_NOTES.length] ?? "" } };
  return { tool: "search_notes", args: stepArguments(step) };
}

/** The next move after `done` tool results, or null for the final answer. */
export function nextScriptedMove(request: string, done: number): Move | null {
  return done < stepsOf(request) ? moveOf(request, done + 1) : null;
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
