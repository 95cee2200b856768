/**
 * Rerank: the retrieved passages ordered by how many of the question's
 * content words (the relevance floor's vocabulary) their title and text
 * contain, notes the question names first, ties in retrieval order; passages
 * that do not support the question (another course than the one it names,
 * or not on its topic: notes/question.ts) are not usable evidence and are
 * dropped (unless named). The best few go to generate. Pure.
 */
import { supports, type NotesQuestion } from "../domains/notes/question.js";
import { contentTerms, isRelevant } from "../domains/notes/relevance.js";
import type { Evidence } from "../state/evidence.js";

/** Passages the generate step is given. */
export const RERANK_TOP = 3;

/** What rerank needs of the request: the question and the notes it names. */
export type RerankQuestion = NotesQuestion & { named: readonly string[] };

const asHit = (item: Evidence) => ({ note_id: item.item_id, title: item.title ?? "", snippet: item.excerpt });

function score(item: Evidence, terms: ReadonlySet<string>): number {
  return [...terms].filter((term) => isRelevant(asHit(item), new Set([term]))).length;
}

export function rerank(passages: readonly Evidence[], question: RerankQuestion, top = RERANK_TOP): Evidence[] {
  const terms = contentTerms(question.topic);
  const scored = passages.map((item, index) => ({
    item,
    index,
    named: question.named.includes(item.item_id),
    score: score(item, terms),
  }));
  return scored
    .filter((entry) => entry.named || supports(question, asHit(entry.item)))
    .sort((a, b) => Number(b.named) - Number(a.named) || b.score - a.score || a.index - b.index)
    .slice(0, top)
    .map((entry) => entry.item);
}
