/**
 * The Planner interface. A planner only ever proposes: its output is data
 * that `authorize` checks. Neither planner is trusted.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { DomainContext } from "../state/domain-context.js";
import type { Evidence } from "../state/evidence.js";

import type { Proposal, ToolSpec } from "../policy/contracts.js";
import type { ModelPrice } from "../policy/pricing.js";

export type PlanOutcome =
  | { type: "tool_calls"; calls: Proposal[]; text?: string }
  | { type: "final"; answer: string; citations: string[]; abstained: boolean }
  | { type: "needs_human"; reason: string };

/** One reply's token counts; `input_tokens` includes the cached and cache-write parts the provider reported. */
export interface PlanUsage {
  input_tokens: number;
  output_tokens: number;
  /** Part of `input_tokens` read from the provider's prompt cache (absent: none reported). */
  cached_input_tokens?: number;
  /** Part of `input_tokens` written to the prompt cache (Anthropic; absent: none reported). */
  cache_write_tokens?: number;
}

export interface PlannerInput {
  /** The request that started this run (latest human message). */
  request: string;
  /** Transcript, already filtered and trimmed by the plan node. */
  messages: BaseMessage[];
  /** This step's effective tools: the only ones `authorize` lets run this step. */
  tools: ToolSpec[];
  /**
   * The run's candidate set, fixed when the run started (a superset of
   * `tools`): what a model planner binds as its `tools` block, so the block
   * stays byte-identical for the run while `tools` masks it per step. Absent:
   * bind `tools`.
   */
  candidates?: ToolSpec[];
  /** The thread the run belongs to: the OpenAI `prompt_cache_key` is derived from it. */
  thread_id?: string;
  /** Evidence gathered so far in this thread. */
  evidence: Evidence[];
  /** 1-based planner turn within the run. */
  turn: number;
  /** Domain context read at the run's start, by provider name (see ports.ts). */
  context?: Record<string, DomainContext>;
  signal?: AbortSignal;
}

export interface PlanResult {
  outcome: PlanOutcome;
  usage: PlanUsage;
}

export interface Planner {
  readonly kind: "rules" | "model" | "scripted";
  /**
   * The configured price of the model behind this planner, set by our code
   * from the config (never from a reply); absent means its calls cost 0.
   */
  readonly price?: ModelPrice;
  /** Transcript tokens past which the plan node compacts old tool results (`plannerContext`); absent: the default. */
  readonly contextBudgetTokens?: number;
  /** The model behind this planner as its provider names it; its tokenizer counts the transcript where known. */
  readonly model?: string;
  /** Throws `ModelBehaviorError` when the reply is not a usable plan. */
  plan(input: PlannerInput): Promise<PlanResult>;
}
