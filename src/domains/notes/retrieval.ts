/**
 * Which search hits answer a notes question, decided from the notes server's
 * calibrated scores (tools/notes/search.ts: a hit's `score` is the
 * IDF-weighted share of the question's concepts the note covers, 0–1). One
 * function for the rules planner and the fixed workflow, so both read the
 * same notes. A hit is evidence when it is of the course the question names
 * and its score reaches {@link ON_TOPIC}; of those, only hits close to the
 * best one are read ({@link NEAR_BEST}), so a note that shares one word with
 * the question does not ride along. When none is left, the hits just short of
 * the threshold ({@link CLOSEST}) are named so the student can rephrase.
 * Below the threshold, a note that is a clear winner over the next one is
 * evidence too ({@link CLEAR_FLOOR}, {@link CLEAR_MARGIN}).
 * The thresholds were calibrated on the calibration set in eval/retrieval/
 * (calibration.ts: the labelled, fresh and first held-out questions). Pure.
 */
import type { Hit } from "./relevance.js";

/** The score a note needs to be evidence for a question (calibrated: eval/retrieval/, `npm run eval`). */
export const ON_TOPIC = 0.45;
/** Evidence is read only when its score is at least this share of the best hit's. */
export const NEAR_BEST = 1;
/** For a comparison ("compare A with B", "A vs B") each side's note covers part of the question: this share of the best is kept… */
export const COMPARISON_NEAR_BEST = 0.3;
/** …and this share of {@link ON_TOPIC} is enough. */
export const COMPARISON_SHARE = 0.7;
/** Words that make a question a comparison of two topics. */
const COMPARISON = /\b(?:compare|compared|comparing|comparison|contrast|versus|vs\.?|differences?\s+between|differ)\b/i;

/** Whether a request compares topics (then the notes of each side are read, not only the best one's). */
export function isComparison(request: string): boolean {
  return COMPARISON.test(request);
}

/** A hit below {@link ON_TOPIC} but at least this is named in the refusal as one of the closest notes. */
export const CLOSEST = 0.3;
/**
 * A hit below {@link ON_TOPIC} is still evidence when it is a clear winner:
 * its score at least {@link CLEAR_FLOOR} and {@link CLEAR_MARGIN} times the
 * next permitted note's. A paraphrase ("Why do airbags reduce the force in a
 * crash?") has words no note uses, which lower every note's score alike; the
 * one note that covers what the notes do name stands out from the rest. A
 * topic no note covers ("support vector machines") leaves several notes
 * sharing a word or two, none far ahead.
 */
export const CLEAR_FLOOR = 0.35;
/** See {@link CLEAR_FLOOR}. */
export const CLEAR_MARGIN = 2.5;
/** How many of the closest notes a refusal names. */
const MAX_CLOSEST = 3;

/** What the search hits say about a question: the notes to read, best first, or the closest ones that fell short. */
export type Retrieval =
  | { type: "answer"; note_ids: string[] }
  | { type: "abstain"; closest: { note_id: string; title: string }[] };

/** Whether a scored hit clears the absolute threshold (a clear winner below it is decided by {@link retrieve}). */
export function clearsThreshold(score: number): boolean {
  return score >= ON_TOPIC;
}

/** The cut-offs {@link retrieve} applies (the shipped ones by default; the eval sweeps them to calibrate). */
export interface Cutoffs {
  onTopic: number;
  nearBest: number;
  closest: number;
  /** A clear winner needs at least this score… */
  clearFloor: number;
  /** …and this many times the next permitted note's (Infinity: no clear-winner rule). */
  clearMargin: number;
}

/** Cut-offs other than the shipped ones, for the calibration sweep. */
export type CutoffChoice = Partial<Pick<Cutoffs, "onTopic" | "nearBest" | "clearFloor" | "clearMargin">>;

/**
 * The shipped cut-offs for a request (or others, to calibrate): a comparison
 * keeps each side's note, which covers only its side of the question.
 */
export function cutoffsFor(request: string, choice: CutoffChoice = {}): Cutoffs {
  const onTopic = choice.onTopic ?? ON_TOPIC;
  const nearBest = choice.nearBest ?? NEAR_BEST;
  const clearFloor = choice.clearFloor ?? CLEAR_FLOOR;
  const clearMargin = choice.clearMargin ?? CLEAR_MARGIN;
  // A comparison's sides are each covered by a different note: no single note is a clear winner of it.
  return isComparison(request)
    ? {
        onTopic: onTopic * COMPARISON_SHARE,
        nearBest: Math.min(nearBest, COMPARISON_NEAR_BEST),
        closest: CLOSEST,
        clearFloor,
        clearMargin: Number.POSITIVE_INFINITY,
      }
    : { onTopic, nearBest, closest: CLOSEST, clearFloor, clearMargin };
}

/**
 * The notes that answer the question, best first, at most `limit`: hits of
 * the asked course whose score reaches `cutoffs.onTopic` (a hit without a
 * score is judged by `unscored`), and close enough to the best. Hits of all
 * searches are pooled, a note counting once at its best score.
 */
export function retrieve(
  hits: readonly Hit[],
  inCourse: (hit: Hit) => boolean,
  unscored: (hit: Hit) => boolean,
  limit: number,
  cutoffs: Cutoffs,
): Retrieval {
  const supported = (hit: Hit) =>
    inCourse(hit) && (hit.score === undefined ? unscored(hit) : hit.score >= cutoffs.onTopic);
  const best = new Map<string, Hit>();
  for (const hit of hits) {
    const seen = best.get(hit.note_id);
    if (!seen || (hit.score ?? 0) > (seen.score ?? 0)) best.set(hit.note_id, hit);
  }
  const pooled = [...best.values()].sort((left, right) => (right.score ?? 0) - (left.score ?? 0));
  const permitted = pooled.filter(inCourse);
  const [first, second] = permitted;
  // A note stands out only from others: a sole hit (the one note sharing any word) is judged by the threshold alone.
  const clearWinner =
    first?.score !== undefined &&
    second?.score !== undefined &&
    first.score >= cutoffs.clearFloor &&
    first.score >= cutoffs.clearMargin * second.score;
  const evidence = clearWinner && first !== undefined && !supported(first) ? [first] : pooled.filter(supported);
  if (evidence.length > 0) {
    const top = Math.max(...evidence.map((hit) => hit.score ?? 0));
    const near = evidence.filter((hit) => hit.score === undefined || hit.score >= cutoffs.nearBest * top);
    return { type: "answer", note_ids: near.slice(0, limit).map((hit) => hit.note_id) };
  }
  const closest = pooled
    .filter((hit) => inCourse(hit) && hit.score !== undefined && hit.score >= cutoffs.closest)
    .slice(0, MAX_CLOSEST)
    .map((hit) => ({ note_id: hit.note_id, title: hit.title }));
  return { type: "abstain", closest };
}
