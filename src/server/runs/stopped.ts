/**
 * Closing a run that stopped part-way (cancelled, or its server died) when a
 * new request starts on its thread.
 */
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { threadConfig } from "../../run-config.js";
import { NODES } from "../../state.js";
import type { ServedGraph } from "./types.js";

/**
 * Closes a run that stopped part-way, as observe would end it: status
 * `cancelled`, a termination reason, and a tool message for every tool call
 * left without a result (the transcript stays well-formed for any model, and
 * the pending steps are dropped, never resumed). The ledger is untouched.
 */
export async function closeStoppedRun(
  graph: ServedGraph,
  threadId: string,
  metadata: Record<string, unknown>,
): Promise<void> {
  const config = { ...threadConfig(threadId), metadata };
  const snapshot = await graph.getState(config);
  const values = (snapshot.values ?? {}) as { messages?: BaseMessage[]; run?: { turn?: number } | null };
  const unanswered = unansweredToolCalls(values.messages ?? []);
  await graph.updateState(
    config,
    {
      status: "cancelled",
      termination_reason: {
        code: "cancelled",
        detail: "the run was stopped before it finished; a new request closed it",
        turn: values.run?.turn ?? 0,
      },
      messages: unanswered.map(
        (call) =>
          new ToolMessage({
            tool_call_id: call.id,
            name: call.name,
            status: "error",
            content: "cancelled: the run stopped before this call finished",
          }),
      ),
    },
    NODES.observe,
  );
}

/** Tool calls of the transcript that have no tool message answering them. */
export function unansweredToolCalls(messages: readonly BaseMessage[]): { id: string; name: string }[] {
  const answered = new Set(
    messages.flatMap((message) => (ToolMessage.isInstance(message) ? [message.tool_call_id] : [])),
  );
  return messages.flatMap((message) =>
    AIMessage.isInstance(message)
      ? (message.tool_calls ?? []).flatMap((call) =>
          call.id && !answered.has(call.id) ? [{ id: call.id, name: call.name }] : [],
        )
      : [],
  );
}
