/**
 * Phrases in the notes: a note's title and text as sequences of search terms
 * (stems, hyphenated words split into their parts, stop words dropped, the
 * same terms a question's phrase becomes), and how often a phrase occurs in
 * them as adjacent terms. A multi-word concept ("candidate key", "two-phase
 * commit") is mentioned where its words stand together, not wherever each
 * word appears: the 2NF note says "key" three times, but "candidate key"
 * once, and the two-phase locking note has "two-phase" and "commit" but never
 * "two-phase commit". Pure.
 */
import { termsOfWord, wordsOf } from "./analysis.js";

/** A text as the sequence of its search terms, for phrase matching. */
export function termStream(text: string): string[] {
  return wordsOf(text).flatMap(({ word }) => word.split("-").flatMap((part) => termsOfWord(part)));
}

/** A note's title and text as term streams. */
export interface NoteStreams {
  readonly title: readonly string[];
  readonly text: readonly string[];
}

/** Where a phrase (a term list) starts in a stream, as [start, end) spans. */
function spans(stream: readonly string[], phrase: readonly string[]): [number, number][] {
  const found: [number, number][] = [];
  if (phrase.length === 0) return found;
  for (let at = 0; at + phrase.length <= stream.length; at += 1)
    if (phrase.every((term, offset) => stream[at + offset] === term)) found.push([at, at + phrase.length]);
  return found;
}

/** How many non-overlapping places of a stream one of the phrases occupies. */
function mentionsIn(stream: readonly string[], phrases: readonly (readonly string[])[]): number {
  const all = phrases.flatMap((phrase) => spans(stream, phrase)).sort((left, right) => left[0] - right[0]);
  let count = 0;
  let end = -1;
  for (const [start, stop] of all) {
    if (start < end) continue;
    count += 1;
    end = stop;
  }
  return count;
}

/** A concept's mentions in a note: each place its title names one of the phrases counts `titleWeight`, each in its text one. */
export function phraseMentions(
  streams: NoteStreams,
  phrases: readonly (readonly string[])[],
  titleWeight: number,
): { mentions: number; inTitle: boolean } {
  const inTitle = mentionsIn(streams.title, phrases);
  return { mentions: titleWeight * inTitle + mentionsIn(streams.text, phrases), inTitle: inTitle > 0 };
}
