/**
 * One simulated reply, pure: a request body in, the completion and what it
 * attempted out. The endpoint serves this over HTTP; tests call it directly
 * to check that the same seed gives the same reply.
 */
import type { AttemptCounts } from "./attempts.js";
import { readConversation } from "./conversation.js";
import type { Profile } from "./profiles/profile.js";
import { drawsFor } from "./random.js";
import { promptText, toCompletion } from "./reply.js";
import type { WireCompletion } from "./wire.js";

export interface SimulatedResponse {
  completion: WireCompletion;
  attempts: Partial<AttemptCounts>;
  /** The user request the reply worked on (the newest user message). */
  request: string;
}

export function respond(profile: Profile, seed: number, body: Record<string, unknown>): SimulatedResponse {
  const conversation = readConversation(body);
  const draws = drawsFor(seed, profile.name, conversation.request, conversation.turns);
  const reply = profile.reply(conversation, draws);
  return {
    completion: toCompletion(reply.move, draws, promptText(body)),
    attempts: reply.attempts,
    request: conversation.request,
  };
}
