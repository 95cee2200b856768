/**
 * One request to the OpenAI-compatible endpoint through `ChatOpenAI`, and
 * the accounting of its reply: the finish reason (which a streamed reply
 * keeps only in the callback), typed failures that never carry the API key,
 * and token counts checked before they reach the budgets.
 */
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { BaseMessage } from "@langchain/core/messages";
import type { LLMResult } from "@langchain/core/outputs";
import { ensureConfig, mergeConfigs, type RunnableConfig } from "@langchain/core/runnables";
import { ModelBehaviorError } from "../errors.js";
import type { PlanUsage } from "./planner.js";
import type { ToolSpec } from "../policy/contracts.js";
import { isRecord, numberField, stringField, truncate } from "./reply-fields.js";

/** Longest piece of server-provided text copied into an error message. */
const MAX_DETAIL_LENGTH = 160;
/** More tokens than any context window holds: a reply reporting more is lying, and would exhaust or overflow the budgets. */
export const MAX_TOKENS_PER_REPLY = 10_000_000;

/** The one method of a (possibly tool-bound) chat model the planner uses. */
export interface ChatRunnable {
  invoke(input: BaseMessage[], options?: RunnableConfig): Promise<BaseMessage>;
}

/** An OpenAI function tool: passed to `bindTools` as-is, so no schema conversion happens. */
export interface OpenAIFunctionTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export function toOpenAITool(tool: ToolSpec): OpenAIFunctionTool {
  return {
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

/**
 * Captures the finish reason, which a streamed reply does not carry on the
 * message: LangChain keeps it only in the generation info it hands to
 * `handleLLMEnd`. Awaited, so it is set before `invoke` returns.
 */
export class FinishReasonRecorder extends BaseCallbackHandler {
  name = "warrant_finish_reason_recorder";
  override awaitHandlers = true;
  finishReason: string | undefined;

  override handleLLMEnd(output: LLMResult): void {
    const reason = output.generations[0]?.[0]?.generationInfo?.["finish_reason"];
    if (typeof reason === "string") this.finishReason = reason;
  }
}

/** The finish reason of a reply: from the recorder (streamed), else the message's metadata. */
export function finishReasonOf(reply: BaseMessage, recorder: FinishReasonRecorder): string | undefined {
  return recorder.finishReason ?? stringField(reply.response_metadata, "finish_reason");
}

/**
 * @throws ModelBehaviorError `model_request_failed`; a caller's abort is rethrown unchanged.
 */
export async function requestReply(
  runnable: ChatRunnable,
  messages: BaseMessage[],
  recorder: FinishReasonRecorder,
  signal: AbortSignal | undefined,
  apiKey: string,
  callOptions: Record<string, unknown> = {},
): Promise<BaseMessage> {
  // Passing `callbacks` would replace the ones inherited from an enclosing
  // LangGraph run (and with them its message stream), so merge onto the
  // implicit config instead. `callOptions` are the chat model's own (e.g. `promptCacheKey`).
  const config = {
    ...mergeConfigs(ensureConfig(), { callbacks: [recorder], ...(signal ? { signal } : {}) }),
    ...callOptions,
  };
  try {
    return await runnable.invoke(messages, config);
  } catch (error) {
    // A caller's cancellation is not a model failure: let it through as is.
    if (signal?.aborted) throw error;
    throw new ModelBehaviorError("model_request_failed", describeRequestFailure(error, apiKey));
  }
}

/** One line, no stack, never the API key: what reached us, not how. */
function describeRequestFailure(error: unknown, apiKey: string): string {
  const status = numberField(error, "status");
  const name = stringField(error, "name");
  const cause = causeCode(error);
  const parts = ["model request failed:"];
  if (status !== undefined) parts.push(`HTTP ${status}`);
  else if (name === "TimeoutError") parts.push("timed out");
  else parts.push(cause !== undefined ? `network error (${cause})` : "network error");
  const detail = stringField(error, "message");
  if (detail !== undefined && detail.trim() !== "")
    parts.push(`- ${truncate(redact(detail, apiKey), MAX_DETAIL_LENGTH)}`);
  return parts.join(" ");
}

/** The first `code` (e.g. `ECONNREFUSED`) along the `cause` chain of a fetch failure. */
function causeCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && isRecord(current); depth += 1) {
    const code = current["code"];
    if (typeof code === "string" && /^E[A-Z_]+$/.test(code)) return code;
    current = current["cause"];
  }
  return undefined;
}

function redact(text: string, apiKey: string): string {
  return apiKey.length >= 4 ? text.split(apiKey).join("[redacted]") : text;
}

/**
 * Token counts of one reply, as the endpoint reported them (LangChain copies
 * `prompt_tokens`/`completion_tokens`, and Anthropic's `input_tokens` plus its
 * cache reads and writes, into `usage_metadata`; the cache parts into
 * `input_token_details`). They feed the token and cost budgets, so they are
 * checked like any other model output: missing counts are 0 (many local
 * servers send none), but a count that is not a whole number from 0 to
 * {@link MAX_TOKENS_PER_REPLY} (negative, fractional, a string, absurdly
 * large), or cache parts larger than the input they are part of, would
 * silently switch a budget off or price a reply below its cost.
 *
 * @throws ModelBehaviorError `model_invalid_usage`.
 */
export function usageOf(reply: BaseMessage): PlanUsage {
  const usage = isRecord(reply) ? reply["usage_metadata"] : undefined;
  const counts: PlanUsage = {
    input_tokens: tokenCount(usage, "input_tokens", "prompt_tokens"),
    output_tokens: tokenCount(usage, "output_tokens", "completion_tokens"),
  };
  const details = isRecord(usage) ? usage["input_token_details"] : undefined;
  if (details === undefined || details === null) return counts;
  if (!isRecord(details))
    throw new ModelBehaviorError(
      "model_invalid_usage",
      "the model endpoint reported input token details that are not an object",
    );
  const cached = tokenCount(details, "cache_read", "cached input tokens");
  const written = tokenCount(details, "cache_creation", "cache write tokens");
  if (cached + written > counts.input_tokens) {
    throw new ModelBehaviorError(
      "model_invalid_usage",
      `the model endpoint reported ${cached + written} cached or cache-write tokens of ${counts.input_tokens} input tokens`,
    );
  }
  return {
    ...counts,
    ...(cached > 0 ? { cached_input_tokens: cached } : {}),
    ...(written > 0 ? { cache_write_tokens: written } : {}),
  };
}

function tokenCount(usage: unknown, key: string, wire: string): number {
  if (!isRecord(usage)) return 0;
  const value = usage[key];
  if (value === undefined || value === null) return 0;
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0 && value <= MAX_TOKENS_PER_REPLY)
    return value;
  const shown = typeof value === "number" ? String(value) : `a ${typeof value}`;
  throw new ModelBehaviorError(
    "model_invalid_usage",
    `the model endpoint reported ${wire} = ${truncate(shown, 40)}; expected a whole number from 0 to ${MAX_TOKENS_PER_REPLY}`,
  );
}
