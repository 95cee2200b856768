/**
 * The model planner: asks an OpenAI-compatible Chat Completions server for the
 * next step and maps its reply to a `PlanOutcome`. It only proposes; every
 * tool call it returns is checked by `authorize`, and its argument text is
 * passed through exactly as the model sent it. Its parts: the prompt
 * (`model-prompt.ts`), the request and usage accounting (`model-request.ts`),
 * the reply (`model-reply.ts`) and its tool calls (`model-tool-calls.ts`).
 */
import { ChatOpenAI } from "@langchain/openai";
import { modelFacingTool } from "../policy/model-facing.js";
import type { ModelPrice } from "../policy/pricing.js";
import { buildMessages } from "./model-prompt.js";
import { toOutcome } from "./model-reply.js";
import {
  finishReasonOf,
  FinishReasonRecorder,
  requestReply,
  toOpenAITool,
  usageOf,
  type ChatRunnable,
} from "./model-request.js";
import type { PlanResult, Planner, PlannerInput } from "./planner.js";

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
    async plan(input: PlannerInput): Promise<PlanResult> {
      const runnable: ChatRunnable =
        input.tools.length > 0 ? chat.bindTools(input.tools.map((tool) => toOpenAITool(modelFacingTool(tool)))) : chat;
      const recorder = new FinishReasonRecorder();
      const reply = await requestReply(runnable, buildMessages(input), recorder, input.signal, apiKey);
      return { outcome: toOutcome(reply, finishReasonOf(reply, recorder), input.turn), usage: usageOf(reply) };
    },
  };
}
