/**
 * Text analysis shared by the notes index and its queries: lowercasing and
 * accent folding, words (hyphenated ones kept whole and split into parts),
 * stop words and the vocabulary of asking, and Porter stemming (the
 * `stemmer` package) so "normalization", "normalized" and "normal" meet.
 * Pure.
 */
import { stemmer } from "stemmer";

// Function words carry no topical signal; dropping them keeps "with" or "the" from matching every note.
const STOP_WORDS_TEXT =
  "a about above after again against all also am an and any are as at be because been before being between both but by " +
  "can could did do does doing down during each either else few for from further had has have having he her here hers " +
  "him his how i if in into is it its itself just may me might more most must my no nor not now of off on once one only " +
  "or other our out over own same she should so some such than that the their them then there these they this those " +
  "through to too under until up us very was we were what when where which while who whom why will with would you your " +
  // The stems of negative contractions ("don't" is read as "don" and "t"): function words, never a topic.
  "aren couldn didn doesn don hadn hasn haven isn mustn shouldn wasn weren won wouldn";

/**
 * Words that say how a question is asked, not what about ("explain", "happens",
 * "difference"). They are no concept a note must cover: a question would be
 * refused for containing "happens" otherwise.
 */
const QUESTION_WORDS_TEXT =
  "ask asked answer bad go best better briefly compare comparing compared contrast define definition describe difference " +
  "differences different example examples explain explained exactly get gets give good happen happens happening help " +
  "find finding goes going check checking whether something anything problem point cause causes caused " +
  "idea important intuition intuitively know lecture lectures main make makes mean meaning means need notes note please purpose " +
  "really say says said show simple simply stand stands summarize summarise summary tell term terms thing things understand use used " +
  "uses using way ways work works working";

/** Stop words: never indexed, never searched. */
export const STOP_WORDS: ReadonlySet<string> = new Set(STOP_WORDS_TEXT.split(" "));

/** Asking vocabulary: indexed like any word, but never a concept of a question. */
export const QUESTION_WORDS: ReadonlySet<string> = new Set(QUESTION_WORDS_TEXT.split(" "));

// Runs of letters/digits joined by single hyphens or underscores ("self-attention", "d_k"); a possessive 's or a
// contraction's ending ("doesn't", "I'm") is dropped, so it is no one-letter word.
// An arrow ("X -> Y", a functional dependency or an implication) is a word of its own, read as ARROW.
const WORD_PATTERN = /->|[a-z0-9]+(?:[-_][a-z0-9]+)*(?:'[a-z]+)?/g;

/** The word an arrow ("->") of a formula is read as, in the notes and in questions alike. */
export const ARROW = "arrow";

/** Lowercases and strips accents so "Café" and "cafe" analyse alike; curly apostrophes become straight. */
export function normalizeText(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .replace(/[\u2018\u2019]/g, "'")
    .toLowerCase();
}

/** The words of a text in order, possessives dropped ("Newton's" → "newton"), with their offsets. */
export function wordsOf(text: string): { word: string; index: number }[] {
  return [...normalizeText(text).matchAll(WORD_PATTERN)].map((match) => ({
    word: match[0] === "->" ? ARROW : match[0].replace(/'[a-z]+$/, ""),
    index: match.index,
  }));
}

/** The stem of one plain word (no hyphen): Porter's, but words with digits or underscores ("3nf", "d_k") are kept. */
export function stem(word: string): string {
  return /[0-9_]/.test(word) ? word : stemmer(word);
}

/**
 * A one-letter word that is a formula's variable ("m" and "v" of "one half m
 * v squared", "X -> Y"): any letter but "a" and "i", which are words.
 */
export const VARIABLE = /^[b-hj-z]$/;

/** Whether a word can be a search term at all: two characters or more, not a stop word. */
function indexable(word: string): boolean {
  return word.length > 1 && !STOP_WORDS.has(word);
}

/**
 * The search terms of one word: its stem and, for a hyphenated word, the stem
 * of the joined form ("mini-batch" → "minibatch") and of each part.
 */
export function termsOfWord(word: string): string[] {
  if (!word.includes("-")) return indexable(word) || VARIABLE.test(word) ? [stem(word)] : [];
  const parts = word.split("-").filter(indexable).map(stem);
  return [stem(word.replaceAll("-", "")), ...parts];
}

/** A note id written in a text (`db201.midterm-solutions`): a reference to a note, not words about a topic. */
const NOTE_REFERENCE = /\b[a-z]{2,8}[0-9]{3}\.[a-z0-9]+(?:-[a-z0-9]+)*\b/gi;

/**
 * Splits text into search terms: lowercase, accents and stop words removed,
 * one-letter variables kept, words stemmed, hyphenated words kept joined plus split into parts. Note ids
 * in the text are skipped: a note that names another note's id is not about
 * that note's topic.
 */
export function tokenize(text: string): string[] {
  return wordsOf(text.replace(NOTE_REFERENCE, " ")).flatMap(({ word }) => termsOfWord(word));
}
