/**
 * The planner's view of the transcript. Every message stays: the run's
 * request (and every earlier one) is always in the model's context, and
 * every tool result is quoted inside its fence (`fence.ts`) with the
 * evidence ids it holds, so text inside a result reaches the model as quoted
 * data in a tool message, never as system or user text.
 *
 * When the view passes a token budget, older tool results are compacted: at
 * that point the oldest tool results (never the newest
 * {@link KEEP_RECENT_MESSAGES} messages) are replaced by their fence with
 * their evidence refs and a short excerpt of the body, until the view is
 * down to half the budget. The boundary is a pure
 * function of the messages and the budget, computed by replaying the thread
 * message by message, so it moves only when the view crosses the budget
 * again: between two compactions every request starts with the previous one
 * (one stable prefix for a provider's cache), never the window that slides
 * at every step. Only the view is compacted: state, checkpoints, ledger and
 * evidence keep every result whole, and the refs a compacted result names
 * are the ones its full result named, so what can be cited is unchanged.
 */
import { ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { extractEvidence } from "../state/extract-evidence.js";
import { fenceToolResult } from "./fence.js";
import { countTokens } from "./token-count.js";

/** Transcript tokens past which a model planner without its own setting compacts: half a 128k window. */
export const DEFAULT_CONTEXT_BUDGET_TOKENS = 64_000;
/** Messages after the boundary kept whole at a compaction (the newest two tool steps). */
export const KEEP_RECENT_MESSAGES = 4;
/** Characters of a compacted result's body kept as its excerpt. */
export const COMPACT_EXCERPT_CHARS = 160;

/** Options of {@link plannerView}. */
export interface ContextOptions {
  /** Estimated tokens of the view past which old tool results are compacted. */
  budgetTokens?: number;
  /** The model the view is for, as its provider names it: its tokenizer counts the tokens where one is known. */
  model?: string;
}

/** The view and what compaction did to it (the plan node records it for the trace). */
export interface PlannerView {
  messages: BaseMessage[];
  /** Estimated tokens of the view as sent. */
  tokens: number;
  /** Leading messages whose tool results are compacted (0: none). */
  compactedThrough: number;
  /** Tool results shown compacted. */
  compactedResults: number;
  /** How many times the boundary moved over this thread's history. */
  compactions: number;
}

/** The planner's view, without the compaction figures. */
export function plannerContext(messages: readonly BaseMessage[], options: ContextOptions = {}): BaseMessage[] {
  return plannerView(messages, options).messages;
}

/**
 * The view of `messages` for a budget. A transcript never starts on a tool
 * result: leading results without their call are left out.
 */
export function plannerView(messages: readonly BaseMessage[], options: ContextOptions = {}): PlannerView {
  const budget = options.budgetTokens ?? DEFAULT_CONTEXT_BUDGET_TOKENS;
  let start = 0;
  while (start < messages.length && ToolMessage.isInstance(messages[start])) start += 1;
  const kept = messages.slice(start);
  const views = kept.map((message) => viewOf(message, options.model));
  // Replay: add message by message; when the estimate passes the threshold, move the boundary once, far enough
  // to bring the view down to half the budget (or as far as it may go), and wait for another half budget of
  // growth before the next compaction: so compactions are rare and each request between two of them extends
  // the one before.
  let boundary = 0;
  let compactions = 0;
  let tokens = 0;
  let threshold = budget;
  for (let index = 0; index < views.length; index += 1) {
    tokens += views[index]?.fullTokens ?? 0;
    if (tokens <= threshold) continue;
    const limit = index + 1 - KEEP_RECENT_MESSAGES;
    let next = boundary;
    for (; next < limit && tokens > budget / 2; next += 1) {
      const view = views[next];
      if (view) tokens -= view.fullTokens - view.compactTokens;
    }
    if (next > boundary) compactions += 1;
    boundary = Math.max(boundary, next);
    threshold = Math.max(budget, tokens + budget / 2);
  }
  let compactedResults = 0;
  const shown = kept.map((message, index) => {
    const view = views[index];
    if (!view) return message;
    if (index < boundary && view.compact !== view.full) {
      compactedResults += 1;
      return view.compact;
    }
    return view.full;
  });
  return { messages: shown, tokens, compactedThrough: boundary, compactedResults, compactions };
}

/** A message as the planner may show it, whole and compacted, with estimated tokens. */
interface MessageView {
  full: BaseMessage;
  compact: BaseMessage;
  fullTokens: number;
  compactTokens: number;
}

/**
 * Tokens of a message as the model counts them where its tokenizer is known
 * (`token-count.ts`), else characters ÷ 4; either way deterministic, so the
 * boundary is the same at every replay. Plus 4 for the message's framing.
 */
function estimateTokens(message: BaseMessage, model: string | undefined): number {
  const content = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
  const calls = "tool_calls" in message && Array.isArray(message.tool_calls) ? JSON.stringify(message.tool_calls) : "";
  return countTokens(content + calls, model) + 4;
}

/**
 * Views by the message they were made from. The planner is shown every
 * message at every turn, so without this each result is fenced again at
 * each turn (quadratic over a thread). Reused only while the fields a view
 * is made from are the same values; messages read back from a checkpoint are
 * new objects and are fenced anew.
 */
const views = new WeakMap<BaseMessage, { source: readonly unknown[]; view: MessageView }>();

function sourceOf(message: BaseMessage, model: string | undefined): readonly unknown[] {
  return ToolMessage.isInstance(message)
    ? [model, message.content, message.name, message.status, message.tool_call_id, message.artifact]
    : [model, message.content];
}

function viewOf(message: BaseMessage, model: string | undefined): MessageView {
  const source = sourceOf(message, model);
  const cached = views.get(message);
  if (cached?.source.every((value, index) => value === source[index])) return cached.view;
  let view: MessageView;
  if (ToolMessage.isInstance(message)) {
    const full = fenceOf(message, false);
    const fullTokens = estimateTokens(full, model);
    // A result already shorter than an excerpt stays as it is.
    if (Array.from(bodyOf(message)).length <= COMPACT_EXCERPT_CHARS)
      view = { full, compact: full, fullTokens, compactTokens: fullTokens };
    else view = lazilyCompacted(message, full, fullTokens, model);
  } else {
    const tokens = estimateTokens(message, model);
    view = { full: message, compact: message, fullTokens: tokens, compactTokens: tokens };
  }
  views.set(message, { source, view });
  return view;
}

/**
 * A view whose compacted form is made the first time it is read: only a view
 * past the budget reads it, so most results are never compacted, and fencing
 * each new result twice at every step was a third of the view's CPU time.
 * The compacted form is the same whenever it is made (a pure function of the
 * message's fields, which the cache checks).
 */
function lazilyCompacted(
  message: ToolMessage,
  full: ToolMessage,
  fullTokens: number,
  model: string | undefined,
): MessageView {
  let compact: { message: ToolMessage; tokens: number } | undefined;
  const compacted = () => {
    if (!compact) {
      const made = fenceOf(message, true);
      compact = { message: made, tokens: estimateTokens(made, model) };
    }
    return compact;
  };
  return {
    full,
    fullTokens,
    get compact() {
      return compacted().message;
    },
    get compactTokens() {
      return compacted().tokens;
    },
  };
}

function bodyOf(message: ToolMessage): string {
  return typeof message.content === "string" ? message.content : JSON.stringify(message.content);
}

function fenceOf(message: ToolMessage, compacted: boolean): ToolMessage {
  const body = bodyOf(message);
  const tool = message.name ?? "tool";
  const evidence = message.status === "error" ? [] : extractEvidence(message.artifact, tool, message.tool_call_id);
  const refs = [...new Set(evidence.map((item) => item.ref))];
  const status = message.status === "error" ? "error" : "ok";
  return new ToolMessage({
    tool_call_id: message.tool_call_id,
    name: message.name,
    artifact: message.artifact,
    status: message.status,
    content: compacted
      ? fenceToolResult({ tool, status, refs, body: JSON.stringify(excerpt(body)), compacted: true })
      : fenceToolResult({ tool, status, refs, body }),
  });
}

/** The body's start, whole characters only, marked as cut. */
function excerpt(body: string): string {
  return `${Array.from(body).slice(0, COMPACT_EXCERPT_CHARS).join("")}… (compacted; the full result was read earlier)`;
}

/** The text of the newest human message: the request of the current run. */
export function latestRequest(messages: readonly BaseMessage[]): string {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (message && message.getType() === "human") {
      return typeof message.content === "string" ? message.content : message.text;
    }
  }
  return "";
}
