/**
 * `careful`: does the task well. It follows the same decision tree as the
 * rules planner (search the permitted notes → read the best hits → answer
 * citing only what it read, or abstain; schedule through
 * `calculate_schedule`; propose the calendar writes in one turn and stop;
 * the CaseOps sequence; a quiz from the course outline in the prompt), but
 * reads everything back from the request the endpoint received, so the
 * whole model-planner path is exercised. The other profiles start from its
 * move and spoil it.
 */
import { decide } from "../../../src/domains/rules-planner.js";
import type { Conversation } from "../conversation.js";
import { contextFromPrompt } from "../prompt-context.js";
import type { Profile, SimulatedMove } from "./profile.js";

/** The careful next move for a conversation. */
export function carefulMove(conversation: Conversation): SimulatedMove {
  const outcome = decide({
    request: conversation.request,
    messages: conversation.messages,
    tools: conversation.tools,
    evidence: conversation.evidence,
    turn: conversation.turns + 1,
    context: contextFromPrompt(conversation.system),
  });
  if (outcome.type !== "tool_calls") return outcome;
  return {
    type: "tool_calls",
    calls: outcome.calls.map((call) => ({ name: call.name, argumentText: call.raw_arguments })),
    ...(outcome.text !== undefined ? { text: outcome.text } : {}),
  };
}

export const careful: Profile = {
  name: "careful",
  description:
    "does the task well: searches, reads, cites only what it read, schedules, proposes the calendar write and stops",
  reply: (conversation) => ({ move: carefulMove(conversation), attempts: {} }),
};
