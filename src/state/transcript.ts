/**
 * The transcript's reducer, for a `DeltaChannel` (src/state.ts): the
 * checkpointer stores each step's new messages, never the whole list again,
 * and a thread's transcript is rebuilt by replaying those writes through this
 * function. So it must give the same list whether it sees the writes one
 * step at a time or all at once (`reduce(reduce(s, a), b)` equals
 * `reduce(s, [...a, ...b])`).
 *
 * Semantics are `messagesStateReducer`'s: a message whose id is already in
 * the list replaces it, a `RemoveMessage` removes its id (the
 * `REMOVE_ALL_MESSAGES` id clears the list), anything else is appended.
 * A message without an id gets one here. `messagesStateReducer` draws a
 * random one, which a replay would draw again differently; this one is
 * derived from the message itself and the ids the list holds at that point,
 * which a replay sees the same.
 */
import { createHash } from "node:crypto";
import { BaseMessage, RemoveMessage, coerceMessageLikeToMessage, type BaseMessageLike } from "@langchain/core/messages";
import { REMOVE_ALL_MESSAGES } from "@langchain/langgraph";

/**
 * One write to `messages`: a message or a list of them (objects and strings
 * are coerced; any array is a list, as in `messagesDeltaReducer`).
 */
export type TranscriptWrite = BaseMessageLike | BaseMessageLike[];

const flatten = (writes: readonly TranscriptWrite[]): BaseMessageLike[] =>
  writes.flatMap((write): BaseMessageLike[] => (Array.isArray(write) ? (write as BaseMessageLike[]) : [write]));

const asMessage = (like: BaseMessageLike): BaseMessage =>
  BaseMessage.isInstance(like) ? like : coerceMessageLikeToMessage(like);

/** A stable id for a message that came without one: its content's hash, numbered past ids already taken. */
function derivedId(message: BaseMessage, taken: { has(id: string): boolean }): string {
  const toolCallId = (message as { tool_call_id?: unknown }).tool_call_id;
  const digest = createHash("sha256")
    .update(JSON.stringify([message.getType(), message.content, typeof toolCallId === "string" ? toolCallId : null]))
    .digest("hex")
    .slice(0, 24);
  const base = `msg-${digest}`;
  let id = base;
  for (let n = 2; taken.has(id); n += 1) id = `${base}-${n}`;
  return id;
}

export function appendTranscript(current: readonly BaseMessage[], writes: readonly TranscriptWrite[]): BaseMessage[] {
  const incoming = flatten(writes);
  if (incoming.length === 0) return [...current];
  // id → position in `slots`; a removed message leaves a hole, closed at the end.
  const slots: (BaseMessage | null)[] = current.map(asMessage);
  const index = new Map<string, number>();
  slots.forEach((message, position) => {
    if (message?.id != null) index.set(message.id, position);
  });
  for (const like of incoming) {
    const message = asMessage(like);
    if (RemoveMessage.isInstance(message)) {
      if (message.id === REMOVE_ALL_MESSAGES) {
        slots.length = 0;
        index.clear();
        continue;
      }
      const position = message.id == null ? undefined : index.get(message.id);
      if (position !== undefined && message.id != null) {
        slots[position] = null;
        index.delete(message.id);
      }
      continue;
    }
    if (message.id == null) {
      // As messagesStateReducer does: the id goes on the message and in what it serializes (lc_kwargs).
      message.id = derivedId(message, index);
      message.lc_kwargs.id = message.id;
    }
    const position = index.get(message.id);
    if (position !== undefined) {
      slots[position] = message;
      continue;
    }
    index.set(message.id, slots.length);
    slots.push(message);
  }
  return slots.filter((message): message is BaseMessage => message !== null);
}
