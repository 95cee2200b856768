/**
 * Tool-call ids as the model is shown them. Every step's request repeats
 * every earlier call's id twice (in the assistant's `tool_calls` and in its
 * result's `tool_call_id`), and the ids a provider mints are long random
 * strings (`call_` and 24 characters on OpenAI, a UUID on some local
 * servers: 15–25 o200k tokens each), so they are a tenth of what a tool step
 * adds to every later request. The model only needs them to pair a result
 * with its call, so the request names the n-th call of the thread
 * `call` + n in five digits (`call00001`): nine letters and digits, the
 * strictest format a provider asks for, three tokens.
 *
 * Only the request changes: state, checkpoints, ledger, audit and evidence
 * keep the ids the model minted (a reply's ids are its own, and the plan
 * node records them). The numbering is a pure function of the transcript in
 * order, so an earlier call keeps its id as the thread grows (the request
 * stays append-only), and a result is paired with the newest call that
 * carried its id before it, so ids a planner reuses across runs become
 * distinct.
 */
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";

/** Calls numbered `call00001`…`call99999`; later ones `c` + eight base-36 digits (`c0000255s`), still nine characters. */
export function wireCallId(ordinal: number): string {
  return ordinal < 100_000 ? `call${String(ordinal).padStart(5, "0")}` : `c${ordinal.toString(36).padStart(8, "0")}`;
}

/** The transcript with every tool-call id replaced by its wire id; other messages are passed through as they are. */
export function withWireCallIds(messages: readonly BaseMessage[]): BaseMessage[] {
  const current = new Map<string, string>();
  let ordinal = 0;
  const next = () => {
    ordinal += 1;
    return wireCallId(ordinal);
  };
  return messages.map((message) => {
    if (AIMessage.isInstance(message) && (message.tool_calls?.length ?? 0) > 0) {
      const calls = (message.tool_calls ?? []).map((call) => {
        const id = next();
        if (call.id !== undefined) current.set(call.id, id);
        return { ...call, id };
      });
      return new AIMessage({
        content: message.content,
        tool_calls: calls,
        ...(message.id !== undefined ? { id: message.id } : {}),
        ...(message.name !== undefined ? { name: message.name } : {}),
      });
    }
    if (ToolMessage.isInstance(message)) {
      return new ToolMessage({
        tool_call_id: current.get(message.tool_call_id) ?? next(),
        content: message.content,
        ...(message.name !== undefined ? { name: message.name } : {}),
        ...(message.status !== undefined ? { status: message.status } : {}),
        artifact: message.artifact,
      });
    }
    return message;
  });
}
