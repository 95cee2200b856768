/**
 * The model planner: asks an OpenAI-compatible Chat Completions server for the
 * next step and maps its reply to a `PlanOutcome`. It only proposes; every
 * tool call it returns is checked by `authorize`, and its argument text is
 * passed through exactly as the model sent it. Its parts: the prompt
 * (`model-prompt.ts`), the request and usage accounting (`model-request.ts`),
 * the reply (`model-reply.ts`) and its tool calls (`model-tool-calls.ts`).
 */
import { ChatOpenAI } from "@langchain/openai";
import type { ModelPrice } from "../policy/pricing.js";
import { buildMessages } from "./model-prompt.js";
import { toOutcome } from "./model-reply.js";
import { finishReasonOf, FinishReasonRecorder, requestReply, usageOf, type ChatRunnable } from "./model-request.js";
import type { PlanResult, Planner, PlannerInput } from "./planner.js";
import { toolBlock } from "./tool-block.js";

export { buildMessages } from "./model-prompt.js";
export { MAX_TOKENS_PER_REPLY } from "./model-request.js";

/** Settings for {@link createModelPlanner}. */
export interface ModelPlannerOptions {
  /** Model name sent to the server. */
  model: string;
  /** Base URL of the OpenAI-compatible API, e.g. `http://127.0.0.1:11434/v1`. */
  baseUrl?: string;
  /** API key; local servers usually need none, so a placeholder is sent when unset. */
  apiKey?: string;
  /** Per-request timeout in milliseconds. */
  timeoutMs?: number;
  /** Retries of a failed request (5xx, network); 4xx is never retried. Default 1. */
  maxRetries?: number;
  /** The model's price from the config; without one its calls cost 0. */
  price?: ModelPrice;
  /**
   * Whether the endpoint takes `tool_choice` `allowed_tools` (the config's
   * `models.<name>.allowed_tools`). Without it a step's restriction is an
   * appended note. Default false: many OpenAI-compatible servers reject it.
   */
  allowedTools?: boolean;
  /** Transcript tokens at which old tool results are compacted (`plannerContext`). */
  contextBudgetTokens?: number;
}

/** Sent when no key is configured: the OpenAI client refuses to start without one. */
const PLACEHOLDER_API_KEY = "not-needed";
const DEFAULT_MAX_RETRIES = 1;

/**
 * Creates a planner backed by a Chat Completions model through `ChatOpenAI`.
 *
 * The client is built here, once, so importing this module opens nothing.
 * Streaming is left to LangChain: a plain `invoke` sends a non-streaming
 * request, while under a LangGraph `streamMode: "messages"` run LangChain
 * streams (`stream: true`) so tokens reach the stream; both replies map the
 * same way. `streaming: true` is never set: that path estimates token counts
 * with tiktoken, which downloads its ranks and hangs offline.
 *
 * @throws nothing at construction; `plan` throws `ModelBehaviorError` when the
 * request fails or the reply is not a usable plan, and rethrows the abort
 * error unchanged when `input.signal` aborted the request.
 */
export function createModelPlanner(options: ModelPlannerOptions): Planner {
  const apiKey = options.apiKey ?? PLACEHOLDER_API_KEY;
  const chat = new ChatOpenAI({
    model: options.model,
    apiKey,
    configuration: { baseURL: options.baseUrl },
    temperature: 0,
    maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
    timeout: options.timeoutMs,
  });

  return {
    kind: "model",
    ...(options.price ? { price: options.price } : {}),
    ...(options.contextBudgetTokens !== undefined ? { contextBudgetTokens: options.contextBudgetTokens } : {}),
    async plan(input: PlannerInput): Promise<PlanResult> {
      // The run's candidate set is the tools block; this step's offer is a mask over it.
      const block = toolBlock(input.candidates ?? input.tools, input.tools, options.allowedTools ?? false);
      const runnable: ChatRunnable =
        block.tools.length > 0
          ? chat.bindTools(block.tools, block.toolChoice !== undefined ? { tool_choice: block.toolChoice } : {})
          : chat;
      const recorder = new FinishReasonRecorder();
      const reply = await requestReply(runnable, buildMessages(input, block.note), recorder, input.signal, apiKey);
      return { outcome: toOutcome(reply, finishReasonOf(reply, recorder), input.turn), usage: usageOf(reply) };
    },
  };
}
