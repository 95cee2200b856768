/**
 * The model planner's Gemini API path (`google-genai:` in `WARRANT_MODEL`),
 * through `ChatGoogleGenerativeAI`. The same prompt, reply mapping and checks
 * as the other paths; what differs is Gemini's: the step's restriction is
 * `toolConfig.functionCallingConfig` with `allowedFunctionNames` over the
 * run's whole tools block (mode `VALIDATED`: a call to one of them or text,
 * so a restricted step can still answer; LangChain itself sends the names
 * only in mode `ANY`, which forces a call), mode `NONE` when the step offers
 * nothing; the appended note as a user turn (a system instruction is allowed
 * only first); `finishReason` read as a finish reason. Gemini sends a call's
 * arguments as a JSON object, so its text is that object serialized.
 * Caching is Gemini's implicit prefix cache: `cachedContentTokenCount` is
 * read as cached input.
 */
import { ChatGoogleGenerativeAI } from "@langchain/google-genai";
import { HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import { buildMessages } from "./model-prompt.js";
import { toOutcome } from "./model-reply.js";
import { FinishReasonRecorder, requestReply, usageOf } from "./model-request.js";
import type { PlanResult, PlannerInput } from "./planner.js";
import { isRecord, stringField } from "./reply-fields.js";
import { toolBlock, type ToolBlock } from "./tool-block.js";

/** Settings of the Gemini path (from `ModelPlannerOptions`). */
export interface GooglePathOptions {
  model: string;
  apiKey: string;
  baseUrl?: string;
  maxRetries: number;
}

const MAX_OUTPUT_TOKENS = 4_096;

/** Gemini's finish reasons in the vocabulary `toOutcome` checks; any other (`SAFETY`, `RECITATION`…) is refused. */
const FINISH_REASON_OF_GEMINI: Readonly<Record<string, string>> = { STOP: "stop", MAX_TOKENS: "length" };

type FunctionCallingConfig = { mode: "VALIDATED" | "NONE"; allowedFunctionNames?: string[] };

/** `ChatGoogleGenerativeAI` that sends the step's function calling config as given. */
class RestrictedGemini extends ChatGoogleGenerativeAI {
  override invocationParams(options?: this["ParsedCallOptions"]) {
    const params = super.invocationParams(options);
    const config = (options as { warrantFunctionCalling?: FunctionCallingConfig } | undefined)?.warrantFunctionCalling;
    if (config === undefined || params.tools === undefined) return params;
    return { ...params, toolConfig: { functionCallingConfig: config } } as typeof params;
  }
}

/** The step's restriction as Gemini's function calling config; none when the step offers the whole block. */
export function functionCallingOf(block: ToolBlock): FunctionCallingConfig | undefined {
  if (block.toolChoice === undefined) return undefined;
  if (block.toolChoice === "none") return { mode: "NONE" };
  return {
    mode: "VALIDATED",
    allowedFunctionNames: block.toolChoice.allowed_tools.tools.map((tool) => tool.function.name),
  };
}

/** One planning step's request and reply on the Gemini path. */
export function googlePath(options: GooglePathOptions): (input: PlannerInput) => Promise<PlanResult> {
  const chat = new RestrictedGemini({
    model: options.model,
    apiKey: options.apiKey,
    ...(options.baseUrl !== undefined ? { baseUrl: options.baseUrl } : {}),
    temperature: 0,
    maxOutputTokens: MAX_OUTPUT_TOKENS,
    maxRetries: options.maxRetries,
  });
  return async (input) => {
    const block = toolBlock(input.candidates ?? input.tools, input.tools, true);
    const messages = geminiMessages(buildMessages(input, block.note));
    const runnable = block.tools.length > 0 ? chat.bindTools(block.tools) : chat;
    const restriction = functionCallingOf(block);
    const reply = await requestReply(
      runnable,
      messages,
      new FinishReasonRecorder(),
      input.signal,
      options.apiKey,
      restriction !== undefined ? { warrantFunctionCalling: restriction } : {},
    );
    return { outcome: toOutcome(reply, finishReasonOf(reply), input.turn), usage: usageOf(reply) };
  };
}

/** A system message after the first (an appended note) becomes a user turn. */
function geminiMessages(messages: BaseMessage[]): BaseMessage[] {
  return messages.map((message, index) =>
    index > 0 && SystemMessage.isInstance(message) ? new HumanMessage({ content: message.content }) : message,
  );
}

function finishReasonOf(reply: BaseMessage): string | undefined {
  const reason =
    stringField(reply.additional_kwargs, "finishReason") ??
    (isRecord(reply.response_metadata) ? stringField(reply.response_metadata, "finishReason") : undefined);
  if (reason === undefined) return undefined;
  return Object.hasOwn(FINISH_REASON_OF_GEMINI, reason) ? FINISH_REASON_OF_GEMINI[reason] : reason;
}
