/**
 * The model planner: asks a chat model named by provider (OpenAI and
 * OpenAI-compatible Chat Completions here, Anthropic Messages in
 * `model-anthropic.ts`) for the next step and maps its reply to a `PlanOutcome`. It only proposes; every
 * tool call it returns is checked by `authorize`, and its argument text is
 * passed through exactly as the model sent it. Its parts: the prompt
 * (`model-prompt.ts`), the request and usage accounting (`model-request.ts`),
 * the reply (`model-reply.ts`) and its tool calls (`model-tool-calls.ts`).
 */
import { createHash } from "node:crypto";
import { ChatOpenAI } from "@langchain/openai";
import type { ModelPrice } from "../policy/pricing.js";
import { anthropicPath } from "./model-anthropic.js";
import { googlePath } from "./model-google.js";
import type { ModelProvider } from "../model-name.js";
import { buildMessages } from "./model-prompt.js";
import { toOutcome } from "./model-reply.js";
import { finishReasonOf, FinishReasonRecorder, requestReply, usageOf, type ChatRunnable } from "./model-request.js";
import type { PlanResult, Planner, PlannerInput } from "./planner.js";
import { toolBlock, type ToolBlock } from "./tool-block.js";
import { preloadTokenizer } from "./token-count.js";

/** Settings for {@link createModelPlanner}. */
export interface ModelPlannerOptions {
  /** Model name sent to the server (without the `provider:` prefix). */
  model: string;
  /** Which API the model speaks (default `openai-compatible`: Chat Completions at `baseUrl`). */
  provider?: ModelProvider;
  /**
   * How requests ask for prompt caching (the config's `caching`); default by provider:
   * `breakpoints` (Anthropic `cache_control`), `prompt_cache_key` (OpenAI, one key per thread), else `automatic`.
   */
  caching?: "breakpoints" | "prompt_cache_key" | "automatic";
  /** Base URL of the API, e.g. `http://127.0.0.1:11434/v1` (Anthropic: without `/v1`). */
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
  const provider = options.provider ?? "openai-compatible";
  const caching = options.caching ?? DEFAULT_CACHING[provider];
  const common = {
    kind: "model" as const,
    model: options.model,
    ...(options.price ? { price: options.price } : {}),
    ...(options.contextBudgetTokens !== undefined ? { contextBudgetTokens: options.contextBudgetTokens } : {}),
  };
  if (provider === "anthropic") {
    const plan = anthropicPath({
      model: options.model,
      apiKey,
      ...(options.baseUrl !== undefined ? { baseUrl: options.baseUrl } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
      breakpoints: caching === "breakpoints",
    });
    return { ...common, plan };
  }
  if (provider === "google-genai") {
    const plan = googlePath({
      model: options.model,
      apiKey,
      ...(options.baseUrl !== undefined ? { baseUrl: options.baseUrl } : {}),
      maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
    });
    return { ...common, plan };
  }
  preloadTokenizer(options.model);
  const chat = new ChatOpenAI({
    model: options.model,
    apiKey,
    configuration: { baseURL: options.baseUrl },
    temperature: 0,
    maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
    timeout: options.timeoutMs,
  });

  const bindings = boundModels(chat);

  return {
    ...common,
    async plan(input: PlannerInput): Promise<PlanResult> {
      // The run's candidate set is the tools block; this step's offer is a mask over it.
      const block = toolBlock(input.candidates ?? input.tools, input.tools, options.allowedTools ?? false);
      const runnable = bindings.bound(block);
      const recorder = new FinishReasonRecorder();
      const cacheKey: Record<string, string> =
        caching === "prompt_cache_key" && input.thread_id !== undefined
          ? { promptCacheKey: promptCacheKeyOf(input.thread_id) }
          : {};
      const messages = buildMessages(input, block.note);
      const reply = await requestReply(runnable, messages, recorder, input.signal, apiKey, cacheKey);
      return { outcome: toOutcome(reply, finishReasonOf(reply, recorder), input.turn), usage: usageOf(reply) };
    },
  };
}

const DEFAULT_CACHING: Readonly<Record<ModelProvider, NonNullable<ModelPlannerOptions["caching"]>>> = {
  anthropic: "breakpoints",
  openai: "prompt_cache_key",
  "google-genai": "automatic",
  "openai-compatible": "automatic",
};

/**
 * OpenAI's `prompt_cache_key` for a thread: one key per thread routes its
 * requests (which share the thread's growing prefix) to the same cache. A
 * hash, so the thread id itself is not sent to the provider.
 */
export function promptCacheKeyOf(threadId: string): string {
  return `warrant-${createHash("sha256").update(threadId).digest("hex").slice(0, 32)}`;
}

/** Bound models kept per planner: enough for the distinct blocks of concurrent runs, bounded. */
const MAX_BOUND_MODELS = 32;

/**
 * The model bound to a tools block, reused while the block is the same. Binding
 * builds a new `ChatOpenAI`, and its first request a new OpenAI client (together 3% of the CPU of a bench step), yet
 * within a run the block is the same wire objects at every step (`toolBlock`
 * caches them by schema), so the binding is reused only when every definition
 * is the identical object and the `tool_choice` is the same value: what is
 * sent is unchanged. A bound model keeps no state between calls.
 */
function boundModels(chat: ChatOpenAI): { bound(block: ToolBlock): ChatRunnable } {
  const cache = new Map<string, { tools: ToolBlock["tools"]; runnable: ChatRunnable }>();
  return {
    bound(block) {
      if (block.tools.length === 0) return chat;
      const key = `${JSON.stringify(block.toolChoice ?? null)}|${block.tools.map((tool) => tool.function.name).join(",")}`;
      const cached = cache.get(key);
      if (
        cached?.tools.length === block.tools.length &&
        cached.tools.every((tool, index) => tool === block.tools[index])
      )
        return cached.runnable;
      const runnable = chat.bindTools(
        block.tools,
        block.toolChoice !== undefined ? { tool_choice: block.toolChoice } : {},
      );
      cache.delete(key);
      cache.set(key, { tools: block.tools, runnable });
      if (cache.size > MAX_BOUND_MODELS) cache.delete(cache.keys().next().value as string);
      return runnable;
    },
  };
}
