/**
 * The planner's view of the transcript: trimmed, with every tool result
 * quoted inside its fence (`fence.ts`) together with the evidence ids it
 * holds, so that text inside a result reaches the model as quoted data in a
 * tool message, never as system or user text, and cannot close its fence.
 */
import { ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { extractEvidence } from "../state/extract-evidence.js";
import { fenceToolResult } from "./fence.js";

/** Keeps the newest `maxMessages`, never starting on an orphaned tool result. */
export function plannerContext(messages: readonly BaseMessage[], maxMessages = 40): BaseMessage[] {
  let start = Math.max(0, messages.length - maxMessages);
  while (start < messages.length && ToolMessage.isInstance(messages[start])) start += 1;
  return messages
    .slice(start)
    .map((message) => (ToolMessage.isInstance(message) ? fencedToolMessage(message) : message));
}

/**
 * A tool message's fenced copy, by the message it was made from. The planner
 * is shown every tool result of the window at every turn, so without this
 * each result is fenced again at each turn (quadratic over a thread). The
 * copy is reused only while the fields it was made from are the same values;
 * messages read back from a checkpoint are new objects and are fenced anew.
 */
const fenced = new WeakMap<ToolMessage, { source: readonly unknown[]; copy: ToolMessage }>();

/** What a fenced copy is made from. */
function fenceSource(message: ToolMessage): readonly unknown[] {
  return [message.content, message.name, message.status, message.tool_call_id, message.artifact];
}

function fencedToolMessage(message: ToolMessage): ToolMessage {
  const source = fenceSource(message);
  const cached = fenced.get(message);
  if (cached?.source.every((value, index) => value === source[index])) return cached.copy;
  const copy = fenceOf(message);
  fenced.set(message, { source, copy });
  return copy;
}

function fenceOf(message: ToolMessage): ToolMessage {
  const body = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
  const tool = message.name ?? "tool";
  const evidence = message.status === "error" ? [] : extractEvidence(message.artifact, tool, message.tool_call_id);
  return new ToolMessage({
    tool_call_id: message.tool_call_id,
    name: message.name,
    artifact: message.artifact,
    status: message.status,
    content: fenceToolResult({
      tool,
      call_id: message.tool_call_id,
      status: message.status === "error" ? "error" : "ok",
      refs: [...new Set(evidence.map((item) => item.ref))],
      sources: [...new Set(evidence.map((item) => item.source_id))],
      body,
    }),
  });
}

/** The text of the newest human message: the request of the current run. */
export function latestRequest(messages: readonly BaseMessage[]): string {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (message && message.getType() === "human") {
      return typeof message.content === "string" ? message.content : message.text;
    }
  }
  return "";
}
