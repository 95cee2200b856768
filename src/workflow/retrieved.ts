/**
 * The retrieved set: what this run's successful `read_note` calls returned
 * (for a claim: what every successful call of this run returned — the case,
 * its policy, the aliases resolved). It is what the workflow reranks and
 * generates from, and the only evidence its answers may cite (items seen by
 * earlier runs of the thread are not part of it). Derived from the transcript since the request, so it needs no
 * state of its own. Pure.
 */
import { ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { Evidence } from "../state/evidence.js";

/** Tool messages since the newest human message, oldest first. */
function toolMessagesSinceRequest(messages: readonly BaseMessage[]): ToolMessage[] {
  let first = messages.length;
  while (first > 0 && messages[first - 1]?.getType() !== "human") first -= 1;
  return messages.slice(first).filter((message): message is ToolMessage => ToolMessage.isInstance(message));
}

/** Whether this run has asked for any note yet (allowed, denied or failed alike). */
export function readAttempted(messages: readonly BaseMessage[]): boolean {
  return toolMessagesSinceRequest(messages).some((message) => message.name === "read_note");
}

/** Which calls' results count as retrieved: `read_note` (notes), or every tool (a claim's sequence). */
export type Retrieval = "notes" | "case";

/** Evidence from this run's successful reads, in the order they were answered. */
export function retrievedEvidence(
  messages: readonly BaseMessage[],
  evidence: readonly Evidence[],
  retrieval: Retrieval = "notes",
): Evidence[] {
  const counts = (tool: string | undefined) => retrieval === "case" || tool === "read_note";
  const reads = toolMessagesSinceRequest(messages)
    .filter((message) => counts(message.name) && message.status !== "error")
    .map((message) => message.tool_call_id);
  return reads.flatMap((callId) => evidence.filter((item) => counts(item.tool) && item.call_id === callId));
}
