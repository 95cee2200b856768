/**
 * A model's reply as a `PlanOutcome`: its finish reason checked, its tool
 * calls read from the raw text (`model-tool-calls.ts`), otherwise its text
 * parsed as the finishing JSON object the prompt asks for.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { z } from "zod";
import { ModelBehaviorError } from "../errors.js";
import { toProposals } from "./model-tool-calls.js";
import type { PlanOutcome } from "./planner.js";
import { isRecord, truncate } from "./reply-fields.js";

/** Finish reasons a usable reply can have; anything else (e.g. `content_filter`) is refused. */
const KNOWN_FINISH_REASONS: ReadonlySet<string> = new Set(["stop", "tool_calls", "length", "function_call"]);

/**
 * @throws ModelBehaviorError `model_unknown_finish_reason`, `model_empty_reply`,
 * or `model_invalid_arguments` (from the tool calls).
 */
export function toOutcome(reply: BaseMessage, finishReason: string | undefined, turn: number): PlanOutcome {
  if (finishReason !== undefined && !KNOWN_FINISH_REASONS.has(finishReason)) {
    throw new ModelBehaviorError(
      "model_unknown_finish_reason",
      `model stopped with finish reason ${JSON.stringify(truncate(finishReason, 40))}`,
    );
  }
  const calls = toProposals(reply, turn);
  const text = textOf(reply.content).trim();
  if (calls.length > 0) return text === "" ? { type: "tool_calls", calls } : { type: "tool_calls", calls, text };
  if (text === "") throw new ModelBehaviorError("model_empty_reply", "model replied with no text and no tool calls");
  return parseFinalText(text);
}

/** Text blocks only: reasoning or image blocks are not part of the answer. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block: unknown) =>
      isRecord(block) && block["type"] === "text" && typeof block["text"] === "string" ? block["text"] : "",
    )
    .join("");
}

const FinalAnswerSchema = z.object({
  answer: z.string(),
  citations: z.array(z.string()).default([]),
  abstained: z.boolean().default(false),
});
const NeedsHumanSchema = z.object({ needs_human: z.string().min(1) });

/**
 * The finishing reply: the JSON object the prompt asks for (a surrounding
 * Markdown code fence is tolerated, small models add one), else the text
 * itself as an uncited answer.
 */
function parseFinalText(text: string): PlanOutcome {
  const json = parseJson(stripCodeFence(text));
  const needsHuman = NeedsHumanSchema.safeParse(json);
  if (needsHuman.success) return { type: "needs_human", reason: needsHuman.data.needs_human };
  const final = FinalAnswerSchema.safeParse(json);
  if (final.success) return { type: "final", ...final.data };
  return { type: "final", answer: text, citations: [], abstained: false };
}

function stripCodeFence(text: string): string {
  const fenced = /^```[a-zA-Z]*\s*\n([\s\S]*?)\n?```$/.exec(text);
  return fenced?.[1] ?? text;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
