/**
 * The model planner's Anthropic Messages path (`anthropic:` in
 * `WARRANT_MODEL`), through `ChatAnthropic`. The same prompt, reply mapping
 * and checks as the Chat Completions path; what differs is Anthropic's:
 * the tools block in its own shape, `cache_control` breakpoints
 * (`cache-breakpoints.ts`), the step's restriction always as an appended
 * note (Anthropic has no `allowed_tools`), the appended note as a user turn
 * (a system message is allowed only first), and `stop_reason` read as a
 * finish reason. Tool-call argument text is the model's own: streamed
 * replies keep `input_json_delta` pieces as `tool_call_chunks`, which
 * `model-tool-calls.ts` concatenates without LangChain's repair.
 */
import { ChatAnthropic } from "@langchain/anthropic";
import { HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import { markedMessages, markedTools, type AnthropicTool } from "./cache-breakpoints.js";
import { buildMessages } from "./model-prompt.js";
import { toOutcome } from "./model-reply.js";
import { FinishReasonRecorder, requestReply, usageOf } from "./model-request.js";
import type { PlanResult, PlannerInput } from "./planner.js";
import { isRecord, stringField } from "./reply-fields.js";
import { toolBlock } from "./tool-block.js";

/** Settings of the Anthropic path (from `ModelPlannerOptions`). */
export interface AnthropicPathOptions {
  model: string;
  apiKey: string;
  baseUrl?: string;
  timeoutMs?: number;
  maxRetries: number;
  /** Whether to set `cache_control` breakpoints (caching style `breakpoints`, the default here). */
  breakpoints: boolean;
}

/** Output tokens per reply: room for a plan or an answer; a longer reply stops with `max_tokens`. */
const MAX_OUTPUT_TOKENS = 4_096;

/** Anthropic's stop reasons in the vocabulary `toOutcome` checks; any other (e.g. `refusal`) passes as is and is refused. */
const FINISH_REASON_OF_STOP: Readonly<Record<string, string>> = {
  end_turn: "stop",
  stop_sequence: "stop",
  tool_use: "tool_calls",
  max_tokens: "length",
};

/** One planning step's request and reply on the Anthropic path. */
export function anthropicPath(options: AnthropicPathOptions): (input: PlannerInput) => Promise<PlanResult> {
  const chat = new ChatAnthropic({
    model: options.model,
    apiKey: options.apiKey,
    ...(options.baseUrl !== undefined ? { anthropicApiUrl: options.baseUrl } : {}),
    temperature: 0,
    maxTokens: MAX_OUTPUT_TOKENS,
    maxRetries: options.maxRetries,
    ...(options.timeoutMs !== undefined ? { clientOptions: { timeout: options.timeoutMs } } : {}),
  });
  return async (input) => {
    const block = toolBlock(input.candidates ?? input.tools, input.tools, false);
    const tools: Omit<AnthropicTool, "cache_control">[] = block.tools.map(({ function: tool }) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.parameters,
    }));
    const { messages, stableCount } = anthropicMessages(buildMessages(input, block.note));
    const sent = options.breakpoints ? markedMessages(messages, stableCount, tools.length > 0) : messages;
    const runnable = tools.length > 0 ? chat.bindTools(options.breakpoints ? markedTools(tools) : tools) : chat;
    const reply = await requestReply(runnable, sent, new FinishReasonRecorder(), input.signal, options.apiKey);
    return { outcome: toOutcome(reply, finishReasonOf(reply), input.turn), usage: usageOf(reply) };
  };
}

/** The note `buildMessages` appends as a system message becomes a user turn; it is not stable. */
function anthropicMessages(messages: BaseMessage[]): { messages: BaseMessage[]; stableCount: number } {
  const last = messages.at(-1);
  if (messages.length > 1 && last !== undefined && SystemMessage.isInstance(last))
    return {
      messages: [...messages.slice(0, -1), new HumanMessage({ content: last.content })],
      stableCount: messages.length - 1,
    };
  return { messages, stableCount: messages.length };
}

/** `stop_reason`: in `additional_kwargs` (streamed: from `message_delta`), else the response metadata. */
function finishReasonOf(reply: BaseMessage): string | undefined {
  const stop =
    stringField(reply.additional_kwargs, "stop_reason") ??
    (isRecord(reply.response_metadata) ? stringField(reply.response_metadata, "stop_reason") : undefined);
  if (stop === undefined) return undefined;
  return Object.hasOwn(FINISH_REASON_OF_STOP, stop) ? FINISH_REASON_OF_STOP[stop] : stop;
}
