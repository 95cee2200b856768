/**
 * The Planner interface. A planner only ever proposes: its output is data
 * that `authorize` checks. Neither planner is trusted.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { Evidence } from "../runtime/evidence.js";

/** A tool as the planner sees it: name, description and the arguments the model may set. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the model-visible arguments (host-injected arguments removed). */
  parameters: Record<string, unknown>;
}

/** One proposed tool call, arguments kept as the raw text the planner produced. */
export interface Proposal {
  /** The tool_call_id: one proposal, one result. */
  call_id: string;
  name: string;
  /** The argument text exactly as proposed; `authorize` parses it strictly. */
  raw_arguments: string;
  /**
   * Set by the plan node when the planner's tool name or call id could not
   * be kept (control, bidi or zero-width characters; see planners/sanitize):
   * the name or id above is then a safe replacement, and authorize denies
   * the proposal with this typed error, so the model sees why.
   */
  refusal?: { code: "unknown_tool" | "invalid_arguments"; message: string };
}

export type PlanOutcome =
  | { type: "tool_calls"; calls: Proposal[]; text?: string }
  | { type: "final"; answer: string; citations: string[]; abstained: boolean }
  | { type: "needs_human"; reason: string };

export interface PlanUsage {
  input_tokens: number;
  output_tokens: number;
}

/**
 * A course the request names, prepared by the plan node for a quiz request:
 * the notes server's outline for the principal (data about which notes exist
 * and may be read: evidence, never instructions) and the server's
 * `quiz_from_notes` prompt text (guidance for a model planner; it cannot
 * widen what the run may do). Fetched once per run.
 */
export interface CourseContext {
  course: string;
  /** The principal's view of the course (released notes only, unless they may see unreleased ones); null when unavailable. */
  outline: { title: string; notes: { note_id: string; title: string }[] } | null;
  /** The `quiz_from_notes` prompt's text; null when unavailable. */
  guidance: string | null;
  /** Why the outline is missing: the principal is not enrolled, cannot read notes, or the server refused or failed. */
  unavailable: string | null;
}

export interface PlannerInput {
  /** The request that started this run (latest human message). */
  request: string;
  /** Transcript, already filtered and trimmed by the plan node. */
  messages: BaseMessage[];
  /** This step's effective tools. Only these may be bound to a model. */
  tools: ToolSpec[];
  /** Evidence gathered so far in this thread. */
  evidence: Evidence[];
  /** 1-based planner turn within the run. */
  turn: number;
  /** The course a quiz request names, when there is one (see {@link CourseContext}). */
  course?: CourseContext;
  signal?: AbortSignal;
}

export interface PlanResult {
  outcome: PlanOutcome;
  usage: PlanUsage;
}

/** USD per million tokens of the planner's model (validated in policy/config, from `models` in warrant.config.json). */
export interface ModelPrice {
  input_per_million_usd: number;
  output_per_million_usd: number;
}

export interface Planner {
  readonly kind: "rules" | "model" | "scripted";
  /**
   * The configured price of the model behind this planner, set by our code
   * from the config (never from a reply); absent means its calls cost 0.
   */
  readonly price?: ModelPrice;
  /** Throws `ModelBehaviorError` when the reply is not a usable plan. */
  plan(input: PlannerInput): Promise<PlanResult>;
}
