/**
 * Hyphenated compounds in the notes: which terms a note has as words of
 * their own, and which only inside a compound. A question's compound
 * ("cross-encoder") matched by its parts must find each part free in the
 * note, or inside that same compound: the encoder-decoder attention note has
 * "cross" only in "cross-attention" and "encoder" in "encoder-decoder", a
 * different thing from a cross-encoder. Pure.
 */
import { stem, termsOfWord, wordsOf } from "./analysis.js";

/** A note's terms as words of their own (a compound joined counts), and its compounds as part-term lists. */
export interface NoteCompounds {
  readonly free: ReadonlySet<string>;
  readonly compounds: readonly (readonly string[])[];
}

/** The free terms and compounds of a text. */
export function noteCompounds(text: string): NoteCompounds {
  const free = new Set<string>();
  const compounds: string[][] = [];
  for (const { word } of wordsOf(text)) {
    if (!word.includes("-")) {
      for (const term of termsOfWord(word)) free.add(term);
      continue;
    }
    free.add(stem(word.replaceAll("-", "")));
    compounds.push(word.split("-").flatMap((part) => termsOfWord(part)));
  }
  return { free, compounds };
}

/**
 * Whether a note has each of the terms free, or inside a compound made only
 * of the concept's own terms (`own`: "cross" of "cross-encoder" counts in a
 * note that writes "cross-encoder", not in one that writes "cross-attention").
 */
export function partsFree(note: NoteCompounds, terms: readonly string[], own: ReadonlySet<string>): boolean {
  return terms.every(
    (term) =>
      note.free.has(term) ||
      note.compounds.some((parts) => parts.includes(term) && parts.every((part) => own.has(part))),
  );
}
