/**
 * The generate step without a model: an extractive answer, each passage
 * quoted verbatim (its first sentences) with its note id and a citation
 * marker. Nothing is paraphrased, so nothing can be invented. Pure.
 */
import type { Evidence } from "../state/evidence.js";
import type { PlanVerdict } from "../state.js";

/** Longest quote taken from one passage. */
const QUOTE_CHARS = 320;

/** The passage's first sentences, whole, up to {@link QUOTE_CHARS}. */
export function quoteOf(text: string): string {
  const sentences = text
    .replace(/\s+/g, " ")
    .trim()
    .match(/[^.!?]+[.!?]+/g) ?? [text.trim()];
  let quote = "";
  for (const sentence of sentences) {
    const next = `${quote}${sentence}`;
    if (quote !== "" && next.trim().length > QUOTE_CHARS) break;
    quote = next;
  }
  const trimmed = quote.trim();
  return trimmed.length > QUOTE_CHARS ? `${trimmed.slice(0, QUOTE_CHARS)}…` : trimmed;
}

export function extractiveAnswer(passages: readonly Evidence[]): Extract<PlanVerdict, { type: "final" }> {
  const lines = passages.map(
    (item, index) => `- ${item.title ?? item.item_id} (${item.item_id}): "${quoteOf(item.excerpt)}" [${index + 1}]`,
  );
  return {
    type: "final",
    answer: `From your notes:\n${lines.join("\n")}`,
    citations: passages.map((item) => item.ref),
    abstained: false,
  };
}
