/**
 * The retrieved set: what this run's successful `read_note` calls returned.
 * It is what the workflow reranks and generates from, and the only evidence
 * its answers may cite (notes seen by earlier runs of the thread are not
 * part of it). Derived from the transcript since the request, so it needs no
 * state of its own. Pure.
 */
import { ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { Evidence } from "../runtime/evidence.js";

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

/** Evidence from this run's successful reads, in the order they were answered. */
export function retrievedEvidence(messages: readonly BaseMessage[], evidence: readonly Evidence[]): Evidence[] {
  const reads = toolMessagesSinceRequest(messages).filter((message) => message.name === "read_note" && message.status !== "error").map((message) => message.tool_call_id);
  return reads.flatMap((callId) => evidence.filter((item) => item.tool === "read_note" && item.call_id === callId));
}
