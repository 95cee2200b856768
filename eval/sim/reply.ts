/**
 * A profile's move as a Chat Completions reply: call ids stable for the
 * seed, the final answer in the JSON shape the planner's prompt asks for,
 * and OpenAI-style `usage` estimated from the text (about four characters a
 * token), so token and cost accounting work on simulated runs too.
 */
import type { WireCompletion } from "./wire.js";
import type { Draws } from "./random.js";
import type { SimulatedMove } from "./profiles/profile.js";

/** Characters per token in the estimate (the usual rule of thumb for English text and JSON). */
const CHARS_PER_TOKEN = 4;

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/** What the request put in front of the model: messages and tool schemas. */
export function promptText(body: Record<string, unknown>): string {
  return JSON.stringify([body["messages"] ?? [], body["tools"] ?? []]);
}

export function toCompletion(move: SimulatedMove, draws: Draws, prompt: string): WireCompletion {
  const usage = (output: string) => ({
    prompt_tokens: estimateTokens(prompt),
    completion_tokens: Math.max(1, estimateTokens(output)),
  });
  switch (move.type) {
    case "tool_calls": {
      const tool_calls = move.calls.map((call, index) => ({
        id: `call_sim_${draws.tag(`call:${index}`)}`,
        name: call.name,
        arguments: call.argumentText,
      }));
      const output = (move.text ?? "") + tool_calls.map((call) => call.name + call.arguments).join("");
      return { content: move.text ?? null, tool_calls, finish_reason: "tool_calls", usage: usage(output) };
    }
    case "final": {
      const content = JSON.stringify({ answer: move.answer, citations: move.citations, abstained: move.abstained });
      return { content, finish_reason: "stop", usage: usage(content) };
    }
    case "needs_human": {
      const content = JSON.stringify({ needs_human: move.reason });
      return { content, finish_reason: "stop", usage: usage(content) };
    }
    case "text":
      return { content: move.text, finish_reason: "stop", usage: usage(move.text) };
  }
}
