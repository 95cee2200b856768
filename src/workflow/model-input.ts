/**
 * What the generate step shows the model: the request, then only the
 * reranked passages as the read results they were (one AI turn proposing
 * those reads, then each tool message), fenced as data by the planner
 * context like any tool result. Other notes the run read are not shown.
 * Pure.
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { plannerContext } from "../planners/context.js";
import type { Evidence } from "../state/evidence.js";

export function passageTranscript(
  request: string,
  messages: readonly BaseMessage[],
  passages: readonly Evidence[],
): BaseMessage[] {
  const wanted = new Set(passages.map((item) => item.call_id));
  const results = messages.filter(
    (message): message is ToolMessage => ToolMessage.isInstance(message) && wanted.has(message.tool_call_id),
  );
  if (results.length === 0) return [new HumanMessage(request)];
  const reads = new AIMessage({
    content: "",
    tool_calls: results.map((result) => ({
      id: result.tool_call_id,
      name: result.name ?? "read_note",
      args: { note_id: passages.find((item) => item.call_id === result.tool_call_id)?.item_id ?? "" },
      type: "tool_call" as const,
    })),
  });
  return plannerContext([new HumanMessage(request), reads, ...results]);
}
