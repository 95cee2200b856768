/**
 * Rerank: the retrieved passages ordered by how many of the question's
 * content words (the relevance floor's vocabulary) their title and text
 * contain, notes the question names first, ties in retrieval order; passages
 * sharing no content word with the question are not usable evidence and are
 * dropped (unless named). The best few go to generate. Pure.
 */
import { contentTerms, isRelevant } from "../domains/notes/relevance.js";
import type { Evidence } from "../runtime/evidence.js";

/** Passages the generate step is given. */
export const RERANK_TOP = 3;

function score(item: Evidence, terms: ReadonlySet<string>): number {
  return [...terms].filter((term) => isRelevant({ note_id: item.item_id, title: item.title ?? "", snippet: item.excerpt }, new Set([term]))).length;
}

export function rerank(passages: readonly Evidence[], query: string, named: readonly string[], top = RERANK_TOP): Evidence[] {
  const terms = contentTerms(query);
  const scored = passages.map((item, index) => ({ item, index, named: named.includes(item.item_id), score: score(item, terms) }));
  return scored
    .filter((entry) => entry.named || entry.score > 0)
    .sort((a, b) => Number(b.named) - Number(a.named) || b.score - a.score || a.index - b.index)
    .slice(0, top)
    .map((entry) => entry.item);
}
