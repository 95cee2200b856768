/**
 * Rerank: the retrieved passages ordered by how many of the question's
 * content words (the relevance floor's vocabulary) their title and text
 * contain, notes the question names first, ties in retrieval order; passages
 * that do not support the question (another course than the one it names,
 * or not on its topic: notes/question.ts) are not usable evidence and are
 * dropped (unless named). A passage the search scored is judged by that
 * calibrated score (notes/retrieval.ts) and ordered by it, so the workflow
 * keeps what the rules planner would. The best few go to generate. Pure.
 */
import { supports, type NotesQuestion } from "../domains/notes/question.js";
import type { BaseMessage } from "@langchain/core/messages";
import { contentTerms, isRelevant, searchHits } from "../domains/notes/relevance.js";
import { observationsSinceRequest } from "../domains/rules-planner.js";
import type { Evidence } from "../runtime/evidence.js";

/** The search scores of this request's hits by note id (the best one when a note was hit twice). */
export function searchScores(messages: readonly BaseMessage[]): Map<string, number> {
  const scores = new Map<string, number>();
  for (const search of observationsSinceRequest(messages).filter((observation) => observation.tool === "search_notes"))
    for (const hit of searchHits(search.structured))
      if (hit.score !== undefined) scores.set(hit.note_id, Math.max(scores.get(hit.note_id) ?? 0, hit.score));
  return scores;
}

/** Passages the generate step is given. */
export const RERANK_TOP = 3;

/** What rerank needs of the request: the question and the notes it names. */
export type RerankQuestion = NotesQuestion & { named: readonly string[] };

/** Search scores by note id (what the notes server said of each hit), when the passages came from a search. */
export type SearchScores = ReadonlyMap<string, number>;

const asHit = (item: Evidence, scores?: SearchScores) => {
  const score = scores?.get(item.item_id);
  return {
    note_id: item.item_id,
    title: item.title ?? "",
    snippet: item.excerpt,
    ...(score === undefined ? {} : { score }),
  };
};

function score(item: Evidence, terms: ReadonlySet<string>): number {
  return [...terms].filter((term) => isRelevant(asHit(item), new Set([term]))).length;
}

export function rerank(
  passages: readonly Evidence[],
  question: RerankQuestion,
  top = RERANK_TOP,
  scores?: SearchScores,
): Evidence[] {
  const terms = contentTerms(question.topic);
  const scored = passages.map((item, index) => ({
    item,
    index,
    named: question.named.includes(item.item_id),
    relevance: scores?.get(item.item_id) ?? 0,
    score: score(item, terms),
  }));
  return scored
    .filter((entry) => entry.named || supports(question, asHit(entry.item, scores)))
    .sort(
      (a, b) =>
        Number(b.named) - Number(a.named) || b.relevance - a.relevance || b.score - a.score || a.index - b.index,
    )
    .slice(0, top)
    .map((entry) => entry.item);
}
