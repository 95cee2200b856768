/**
 * Acronyms the notes yield, each with the phrase it stands for: from a
 * note's title and id ("Retrieval-augmented generation" ↔ RAG), and from its
 * text ("log sequence number" ↔ LSN). Pure.
 */
import { STOP_WORDS, wordsOf } from "./analysis.js";
import type { TitledNote } from "./expansion.js";

const initials = (words: readonly string[]) => words.map((word) => word[0] ?? "").join("");

/** Title segments: the whole title, and its parts around "and", commas and parentheses. */
function segments(title: string): string[] {
  const bare = title.replace(/\([^)]*\)/g, " ");
  return [bare, ...bare.split(/,|\band\b/)].map((part) => part.trim()).filter((part) => part.length > 0);
}

/**
 * Acronyms a note's title and id yield, each with the phrase it stands for:
 * an acronym in parentheses ("Two-phase locking (2PL)"), and the initials of
 * the title, of each title segment and of the id's slug (all words, and
 * without stop words; also without the last word, "ANN" from "approximate
 * nearest-neighbour search"). Initials shorter than three letters, stop words
 * and words the notes use as words are not acronyms.
 */
export function acronymsOf(note: TitledNote, ordinaryWords: ReadonlySet<string>): Map<string, string> {
  const found = new Map<string, string>();
  const add = (acronym: string, phrase: string) => {
    if (acronym.length < 3 || STOP_WORDS.has(acronym) || ordinaryWords.has(acronym) || found.has(acronym)) return;
    found.set(acronym, phrase);
  };
  const bareTitle = note.title.replace(/\([^)]*\)/g, " ").trim();
  for (const match of note.title.matchAll(/\(([A-Za-z0-9+]{2,8})\)/g)) add((match[1] ?? "").toLowerCase(), bareTitle);
  const slug = note.note_id.slice(note.note_id.indexOf(".") + 1).replaceAll("-", " ");
  for (const phrase of [...segments(note.title), slug]) {
    const all = wordsOf(phrase).flatMap(({ word }) => word.split("-"));
    const content = all.filter((word) => !STOP_WORDS.has(word));
    for (const words of [all, content]) {
      add(initials(words), phrase);
      if (words.length >= 4) add(initials(words.slice(0, -1)), phrase);
    }
  }
  return found;
}

/** Shortest and longest run of a text's words whose initials are read as an acronym ("log sequence number" ↔ LSN). */
const TEXT_ACRONYM_WORDS = { min: 3, max: 4 } as const;

/**
 * Acronyms a note's text yields, weaker than its title's (they are added
 * after them): one the text defines ("write-ahead logging (WAL)"), and the
 * initials of each run of three or four content words standing together
 * ("the log sequence number of" ↔ LSN). As for titles, initials that are
 * stop words or words the notes use are not acronyms.
 */
export function textAcronymsOf(text: string, ordinaryWords: ReadonlySet<string>): Map<string, string> {
  const found = new Map<string, string>();
  const add = (acronym: string, phrase: string) => {
    if (acronym.length < 3 || STOP_WORDS.has(acronym) || ordinaryWords.has(acronym) || found.has(acronym)) return;
    found.set(acronym, phrase);
  };
  for (const match of text.matchAll(/((?:[A-Za-z][A-Za-z-]*\s+){1,6})\(([A-Za-z0-9+]{2,8})\)/g)) {
    const acronym = (match[2] ?? "").toLowerCase();
    const words = wordsOf(match[1] ?? "").flatMap(({ word }) => word.split("-"));
    for (let start = 0; start < words.length; start += 1)
      if (initials(words.slice(start)) === acronym) add(acronym, words.slice(start).join(" "));
  }
  // Runs break at stop words and at punctuation: "number of its" is no run.
  for (const clause of text.split(/[.,;:()!?]/)) {
    const words = wordsOf(clause).map(({ word }) => word);
    for (let start = 0; start < words.length; start += 1) {
      for (let length = TEXT_ACRONYM_WORDS.min; length <= TEXT_ACRONYM_WORDS.max; length += 1) {
        const run = words.slice(start, start + length);
        if (run.length < length || run.some((word) => STOP_WORDS.has(word) || word.length < 2 || word.includes("-")))
          break;
        add(initials(run), run.join(" "));
      }
    }
  }
  return found;
}
