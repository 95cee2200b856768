/**
 * Anthropic prompt-cache breakpoints: Anthropic caches a request's prefix
 * only up to a block marked `cache_control`, and takes at most four marks.
 * Warrant's request is append-only within a run (`model-prompt.ts`), so the
 * marks go on what stays: the last tool of the tools block, the system
 * message, and the transcript's last stable message (before any appended
 * note), which moves forward as the transcript grows. The fourth mark stays
 * on the message that ended the previous step's transcript, where the last
 * request wrote the cache, so a step that appends more blocks than
 * Anthropic looks back over still reads it. Pure: returns new messages and
 * tools, never edits the ones it is given.
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";

/** Anthropic's limit of `cache_control` marks per request. */
export const MAX_CACHE_BREAKPOINTS = 4;
export const EPHEMERAL = { type: "ephemeral" } as const;

/** An Anthropic tool definition as sent (`bindTools` passes this shape through unchanged). */
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  cache_control?: typeof EPHEMERAL;
}

/** The tools block with its last tool marked (the whole block is then cached with the system message after it). */
export function markedTools(tools: readonly Omit<AnthropicTool, "cache_control">[]): AnthropicTool[] {
  return tools.map((tool, index) => (index === tools.length - 1 ? { ...tool, cache_control: EPHEMERAL } : tool));
}

/**
 * The messages with the system message and up to two transcript messages
 * marked. `stableCount` is how many messages (system first) stay the same in
 * the next request; what follows (appended notes) is never marked.
 * `toolsMarked` says whether the tools block used one of the four marks.
 */
export function markedMessages(
  messages: readonly BaseMessage[],
  stableCount: number,
  toolsMarked: boolean,
): BaseMessage[] {
  const marks = new Set<number>();
  const budget = MAX_CACHE_BREAKPOINTS - (toolsMarked ? 1 : 0);
  // In order of worth: the system message, the newest stable message, the previous step's end.
  const add = (index: number | undefined): void => {
    if (index !== undefined && marks.size < budget) marks.add(index);
  };
  if (messages[0] !== undefined && SystemMessage.isInstance(messages[0])) add(0);
  const last = lastMarkable(messages, stableCount);
  add(last);
  add(last !== undefined ? previousStepEnd(messages, last) : undefined);
  return messages.map((message, index) => (marks.has(index) ? marked(message) : message));
}

/** The last stable message that can carry a mark (an assistant message made only of tool calls cannot). */
function lastMarkable(messages: readonly BaseMessage[], stableCount: number): number | undefined {
  for (let index = Math.min(stableCount, messages.length) - 1; index > 0; index -= 1) {
    if (canMark(messages[index])) return index;
  }
  return undefined;
}

/** The message just before the last assistant message before `from`: the end of the previous step's transcript. */
function previousStepEnd(messages: readonly BaseMessage[], from: number): number | undefined {
  for (let index = from - 1; index > 0; index -= 1) {
    if (!AIMessage.isInstance(messages[index])) continue;
    for (let before = index - 1; before > 0; before -= 1) if (canMark(messages[before])) return before;
    return undefined;
  }
  return undefined;
}

function canMark(message: BaseMessage | undefined): boolean {
  if (message === undefined) return false;
  if (AIMessage.isInstance(message)) return false;
  return typeof message.content === "string" || (Array.isArray(message.content) && message.content.length > 0);
}

/** A copy of the message whose last content block carries the mark. */
function marked(message: BaseMessage): BaseMessage {
  const blocks =
    typeof message.content === "string"
      ? [{ type: "text", text: message.content }]
      : message.content.map((block) => ({ ...block }));
  const lastBlock = blocks.at(-1);
  if (lastBlock !== undefined) Object.assign(lastBlock, { cache_control: EPHEMERAL });
  const content = blocks as typeof message.content & unknown[];
  if (SystemMessage.isInstance(message)) return new SystemMessage({ content });
  if (ToolMessage.isInstance(message))
    return new ToolMessage({
      content,
      tool_call_id: message.tool_call_id,
      ...(message.name !== undefined ? { name: message.name } : {}),
      ...(message.status !== undefined ? { status: message.status } : {}),
    });
  return new HumanMessage({ content });
}
