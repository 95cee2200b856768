/**
 * Phrases in the notes: a note's title and text as sequences of search terms
 * (stems, hyphenated words split into their parts, stop words dropped, the
 * same terms a question's phrase becomes), and how often a phrase occurs in
 * them as adjacent terms. A multi-word concept ("candidate key", "two-phase
 * commit") is mentioned where its words stand together, not wherever each
 * word appears: the 2NF note says "key" three times, but "candidate key"
 * once, and the two-phase locking note has "two-phase" and "commit" but never
 * "two-phase commit". One other term may stand inside a phrase ("net
 * external force" mentions "net force"). Pure.
 */
import { termsOfWord, wordsOf } from "./analysis.js";

/** Where a stream has a stop word: skipped by a phrase, but no phrase's gap may span one. */
export const STOP = "";

/** A text as the sequence of its search terms, for phrase matching ({@link STOP} for each stop word). */
export function termStream(text: string): string[] {
  return wordsOf(text).flatMap(({ word }) => {
    const terms = word.split("-").flatMap((part) => termsOfWord(part));
    return terms.length > 0 || word.includes("-") ? terms : [STOP];
  });
}

/** A note's title and text as term streams. */
export interface NoteStreams {
  readonly title: readonly string[];
  readonly text: readonly string[];
}

/**
 * How many other terms may stand inside a phrase: "net force" is mentioned in
 * "net external force". A gap never spans a stop word: "a candidate row with
 * a key" does not mention a candidate key.
 */
export const PHRASE_GAP = 1;

/** The end of a phrase starting at `at`: its terms in order, stop words skipped, at most {@link PHRASE_GAP} others among them. */
function phraseEnd(stream: readonly string[], phrase: readonly string[], at: number): number | undefined {
  if (stream[at] !== phrase[0]) return undefined;
  let position = at + 1;
  let gaps = 0;
  let stops = 0;
  for (const term of phrase.slice(1)) {
    for (; position < stream.length && stream[position] !== term; position += 1) {
      if (stream[position] === STOP) stops += 1;
      else gaps += 1;
      if (gaps > PHRASE_GAP || (gaps > 0 && stops > 0)) return undefined;
    }
    if (stream[position] !== term) return undefined;
    position += 1;
  }
  return position;
}

/** Where a phrase (a term list) stands in a stream, as [start, end) spans. */
function spans(stream: readonly string[], written: readonly string[]): [number, number][] {
  const phrase = written.filter((term) => term !== STOP);
  const found: [number, number][] = [];
  if (phrase.length === 0) return found;
  for (let at = 0; at < stream.length; at += 1) {
    const end = phraseEnd(stream, phrase, at);
    if (end !== undefined) found.push([at, end]);
  }
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
