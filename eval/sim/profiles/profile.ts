/**
 * What a behaviour profile of the simulated model is: a named, seeded
 * function from what the request shows (`Conversation`) to the next move and
 * the violations that move attempts.
 */
import type { AttemptCounts } from "../attempts.js";
import type { Conversation } from "../conversation.js";
import type { Draws } from "../random.js";

/** A call the profile makes; the argument text is sent exactly as written (it may be broken on purpose). */
export interface SimulatedCall {
  name: string;
  argumentText: string;
}

export type SimulatedMove =
  | { type: "tool_calls"; calls: SimulatedCall[]; text?: string }
  | { type: "final"; answer: string; citations: string[]; abstained: boolean }
  | { type: "needs_human"; reason: string }
  /** Raw assistant text, sent as is (a profile that does not follow the answer format). */
  | { type: "text"; text: string };

export interface ProfileReply {
  move: SimulatedMove;
  attempts: Partial<AttemptCounts>;
}

export interface Profile {
  name: string;
  description: string;
  reply(conversation: Conversation, draws: Draws): ProfileReply;
}

/** A call with JSON arguments. */
export function jsonCall(name: string, args: Record<string, unknown>): SimulatedCall {
  return { name, argumentText: JSON.stringify(args) };
}

/** The arguments of a call when they are a JSON object. */
export function argumentsOf(call: SimulatedCall): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(call.argumentText);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
