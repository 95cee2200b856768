/**
 * What a question's words may also be written as, in the notes: acronyms
 * derived from the notes' own titles, ids and text (acronyms.ts: "Retrieval-augmented
 * generation" ↔ RAG, `stochastic-gradient-descent` ↔ SGD) and each course's
 * synonym table, kept as data beside the notes (`data/synonyms.json`). A
 * question becomes a list of concepts, each a set of alternatives (term
 * lists that must all match); the index scores each concept on its own.
 * Pure, except {@link loadSynonyms}, which reads a file when called.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { acronymsOf, textAcronymsOf } from "./acronyms.js";
import { QUESTION_WORDS, STOP_WORDS, stem, termsOfWord, tokenize, VARIABLE, wordsOf } from "./analysis.js";

const SynonymGroups = z.array(z.array(z.string().min(1).max(80)).min(2));

/**
 * Per course: groups of phrases that mean the same thing in that course
 * ("switch off" ~ "zero" for neurons); `common`: plain-English words that
 * students and notes use for the same thing in any course ("reduce" ~
 * "lower"), applied to every course in view.
 */
export const SynonymTableSchema = z
  .object({
    version: z.number().int().min(1),
    common: SynonymGroups.optional(),
    courses: z.record(z.string().regex(/^[a-z]{2,8}[0-9]{3}$/), SynonymGroups),
  })
  .strict();

export type SynonymTable = z.infer<typeof SynonymTableSchema>;

/** No synonyms at all (a corpus served without a table). */
export const NO_SYNONYMS: SynonymTable = { version: 1, courses: {} };

/** Reads and validates a synonym table. */
export async function loadSynonyms(filePath: string): Promise<SynonymTable> {
  const text = await readFile(filePath, "utf8");
  const parsed = SynonymTableSchema.safeParse(JSON.parse(text) as unknown);
  if (!parsed.success) throw new Error(`invalid synonym table ${filePath}:\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** What a concept of the question may match: each alternative is a list of terms that must all be in a note. */
export interface Concept {
  /** The question's words this concept stands for, as written (lower-cased). */
  readonly words: string;
  readonly alternatives: readonly (readonly string[])[];
  /** Weaker ways to match it, for half credit: one part of a hyphenated word ("attention" of "cross-attention"). */
  readonly partial?: readonly (readonly string[])[];
  /** Parts it shares with another concept of the question: no partial match, but a note with one touches it. */
  readonly shared?: readonly string[];
}

/** A titled note, as far as expansion needs it. */
export interface TitledNote {
  readonly note_id: string;
  readonly course: string;
  readonly title: string;
}

/** The words of a phrase for matching: stems, hyphenated words split into their parts, stop words kept. */
function matchForm(phrase: string): string[] {
  return wordsOf(phrase).flatMap(({ word }) => word.split("-").map(stem));
}

/** The terms a phrase must all have to be present: its content words, hyphenated ones by their parts. */
function presenceTerms(phrase: string): string[] {
  return [...new Set(wordsOf(phrase).flatMap(({ word }) => word.split("-").flatMap((part) => termsOfWord(part))))];
}

export { acronymsOf, textAcronymsOf } from "./acronyms.js";

/** The expansions that apply to a set of notes: their acronyms and their courses' synonym groups. */
export interface Expansions {
  /** acronym → the phrase it stands for. */
  readonly acronyms: ReadonlyMap<string, string>;
  /** Synonym groups of the courses in view. */
  readonly groups: readonly (readonly string[])[];
  /** Stems of the words in the notes' titles: asking words that name a note ("work") stay concepts. */
  readonly titleStems: ReadonlySet<string>;
  /** Runs of two or more content words of a title ("second law", "normal form"): one concept when a question has them. */
  readonly titlePhrases: readonly string[];
  /** Each title's words in order, hyphenated ones split, with their stems ("" for a stop word: it breaks a compound). */
  readonly titleWords: readonly (readonly { stem: string; word: string }[])[];
}

/** The contiguous runs of two or more content words of a title, as phrases. */
function titleRuns(title: string): string[] {
  const words = wordsOf(title.replace(/\([^)]*\)/g, " "))
    .flatMap(({ word }) => word.split("-"))
    .filter((word) => word.length > 1 && !STOP_WORDS.has(word));
  const runs: string[] = [];
  for (let start = 0; start < words.length; start += 1)
    for (let end = start + 2; end <= words.length; end += 1) runs.push(words.slice(start, end).join(" "));
  return runs;
}

/** The expansions for the notes in view (acronyms of their titles, synonyms of their courses). */
export function expansionsFor(notes: readonly (TitledNote & { text: string })[], table: SynonymTable): Expansions {
  const ordinary = new Set(notes.flatMap((note) => wordsOf(`${note.title} ${note.text}`).map(({ word }) => word)));
  const acronyms = new Map<string, string>();
  for (const note of notes) {
    for (const [acronym, phrase] of acronymsOf(note, ordinary))
      if (!acronyms.has(acronym)) acronyms.set(acronym, phrase);
  }
  for (const note of notes) {
    for (const [acronym, phrase] of textAcronymsOf(note.text, ordinary))
      if (!acronyms.has(acronym)) acronyms.set(acronym, phrase);
  }
  const courses = [...new Set(notes.map((note) => note.course))].sort();
  const groups = [
    ...(table.common ?? []),
    ...courses.flatMap((course) => (Object.hasOwn(table.courses, course) ? (table.courses[course] ?? []) : [])),
  ];
  const titleStems = new Set(notes.flatMap((note) => tokenize(note.title)));
  const titlePhrases = [...new Set(notes.flatMap((note) => titleRuns(note.title)))];
  const titleWords = notes.map((note) =>
    wordsOf(note.title.replace(/\([^)]*\)/g, " "))
      .flatMap(({ word }) => word.split("-"))
      .map((word) => ({ stem: word.length > 1 && !STOP_WORDS.has(word) ? stem(word) : "", word })),
  );
  return { acronyms, groups, titleStems, titlePhrases, titleWords };
}

interface PhraseEntry {
  readonly form: readonly string[];
  readonly alternatives: readonly string[];
  /** Matched against the question's content words only (stop words skipped), as title runs are. */
  readonly content?: boolean;
}

/** A phrase's content-word stems (hyphenated words by their parts, stop words dropped). */
function contentForm(phrase: string): string[] {
  return wordsOf(phrase)
    .flatMap(({ word }) => word.split("-"))
    .filter((word) => word.length > 1 && !STOP_WORDS.has(word))
    .map(stem);
}

function phraseEntries(expansions: Expansions): PhraseEntry[] {
  const entries: PhraseEntry[] = [];
  for (const group of expansions.groups) {
    for (const member of group) entries.push({ form: matchForm(member), alternatives: group });
  }
  for (const [acronym, phrase] of expansions.acronyms) {
    entries.push({ form: matchForm(acronym), alternatives: [acronym, phrase] });
    entries.push({ form: matchForm(`${acronym}s`), alternatives: [acronym, phrase] });
  }
  for (const phrase of expansions.titlePhrases)
    entries.push({ form: contentForm(phrase), alternatives: [phrase], content: true });
  // Longest phrases first, so "switch off neurons" wins over "switch off".
  return entries.sort((left, right) => right.form.length - left.form.length);
}

function startsWithAt(words: readonly string[], at: number, form: readonly string[]): boolean {
  return form.length > 0 && form.every((word, offset) => words[at + offset] === word);
}

function dedupe(alternatives: readonly (readonly string[])[]): string[][] {
  const seen = new Set<string>();
  const result: string[][] = [];
  for (const alternative of alternatives) {
    const key = [...alternative].sort().join(" ");
    if (alternative.length === 0 || seen.has(key)) continue;
    seen.add(key);
    result.push([...alternative]);
  }
  return result;
}

/**
 * The words that follow a title run in the titles that have it ("lock" after
 * "two phase" in "Two-phase locking"), or undefined when some title ends the
 * run or follows it by a stop word (then the run names a thing of its own).
 */
function continuations(expansions: Expansions, form: readonly string[]): Set<string> | undefined {
  const next = new Set<string>();
  for (const title of expansions.titleWords) {
    const stems = title.map((item) => item.stem);
    for (let at = 0; at + form.length <= stems.length; at += 1) {
      if (!startsWithAt(stems, at, form)) continue;
      const following = stems[at + form.length];
      if (following === undefined || following === "") return undefined;
      next.add(following);
      // A hyphenated continuation may be written joined: "trade-off" is "tradeoff".
      const after = title.slice(at + form.length).map((item) => item.word);
      for (let length = 2; length <= Math.min(3, after.length); length += 1)
        next.add(stem(after.slice(0, length).join("")));
    }
  }
  return next;
}

/**
 * Whether a title run the question has, followed at once by another content
 * word, names a different compound than the titles do: every title that has
 * the run continues it with a word the question lacks ("two-phase commit"
 * against "Two-phase locking"). The question's compound is then one concept,
 * mentioned only where its words stand together.
 */
function divergesFrom(expansions: Expansions, form: readonly string[], nextStem: string, stems: ReadonlySet<string>) {
  const next = continuations(expansions, form);
  return next !== undefined && next.size > 0 && !next.has(nextStem) && ![...next].some((word) => stems.has(word));
}

/**
 * The concepts of a question: each synonym phrase or acronym it contains is
 * one concept whose alternatives are every way of writing it; every other
 * content word is a concept of its own (a hyphenated word may match joined
 * or by its parts). Stop words and asking words ("explain", "happens") are
 * no concept, unless a note's title uses the word ("work").
 */
export function conceptsOf(query: string, expansions: Expansions): Concept[] {
  const written = wordsOf(query).map(({ word }) => word);
  const stems = written.map((word) => stem(word.replaceAll("-", "")));
  const split = written.flatMap((word) => word.split("-").map(stem));
  const entries = phraseEntries(expansions);
  const concepts: Concept[] = [];
  // Phrase matching runs over the split form, so "switch-off" and "switch off" both match.
  const owner = written.flatMap((word, position) => word.split("-").map(() => position));
  const used = new Set<number>();
  for (let at = 0; at < split.length; at += 1) {
    const entry = entries.find((candidate) => !candidate.content && startsWithAt(split, at, candidate.form));
    if (!entry) continue;
    const positions = new Set(owner.slice(at, at + entry.form.length));
    if ([...positions].some((position) => used.has(position))) continue;
    for (const position of positions) used.add(position);
    const alternatives = dedupe(entry.alternatives.map(presenceTerms));
    if (alternatives.length > 0)
      concepts.push({ words: [...positions].map((position) => written[position]).join(" "), alternatives });
    at += entry.form.length - 1;
  }
  // Title runs match over the content words left ("Newton's second law" → "newton second law").
  const content = written.flatMap((word, position) =>
    used.has(position)
      ? []
      : word
          .split("-")
          .filter((part) => part.length > 1 && !STOP_WORDS.has(part))
          .map((part) => ({ stem: stem(part), position })),
  );
  const titleEntries = entries.filter((entry) => entry.content && entry.form.length >= 2);
  for (let at = 0; at < content.length; at += 1) {
    const stemsHere = content.map((item) => item.stem);
    const entry = titleEntries.find((candidate) => startsWithAt(stemsHere, at, candidate.form));
    if (!entry) continue;
    const positions = new Set(content.slice(at, at + entry.form.length).map((item) => item.position));
    if ([...positions].some((position) => used.has(position))) continue;
    const last = Math.max(...positions);
    const following = content[at + entry.form.length];
    const compound =
      following !== undefined &&
      following.position === last + 1 &&
      !used.has(following.position) &&
      !QUESTION_WORDS.has(written[following.position] ?? "") &&
      divergesFrom(expansions, entry.form, following.stem, new Set(content.map((item) => item.stem)));
    if (compound) {
      const runTerms = presenceTerms(entry.alternatives[0] ?? "");
      for (const position of [...positions, following.position]) used.add(position);
      concepts.push({
        words: [...positions, following.position].map((position) => written[position]).join(" "),
        alternatives: [[...runTerms, ...termsOfWord(written[following.position] ?? "")]],
        partial: [runTerms],
      });
      at += entry.form.length;
      continue;
    }
    for (const position of positions) used.add(position);
    const terms = presenceTerms(entry.alternatives[0] ?? "");
    concepts.push({
      words: [...positions].map((position) => written[position]).join(" "),
      alternatives: dedupe(entry.alternatives.map(presenceTerms)),
      ...(terms.length > 1 ? { partial: terms.map((term) => [term]) } : {}),
    });
    at += entry.form.length - 1;
  }
  written.forEach((word, position) => {
    if (used.has(position)) return;
    const plain = word.replaceAll("-", "");
    if ((plain.length < 2 && !VARIABLE.test(plain)) || STOP_WORDS.has(word) || /^[0-9]+$/.test(plain)) return;
    if (QUESTION_WORDS.has(word) && !expansions.titleStems.has(stems[position] ?? "")) return;
    if (!word.includes("-")) {
      concepts.push({ words: word, alternatives: [[stem(word)]] });
      return;
    }
    const parts = word.split("-").flatMap((part) => termsOfWord(part));
    concepts.push({
      words: word,
      alternatives: dedupe([[stem(plain)], parts]),
      ...(parts.length > 1 ? { partial: parts.map((part) => [part]) } : {}),
    });
  });
  return withoutSharedParts(withoutRepeats(concepts));
}

/** A concept the question repeats ("push on a wall … the wall push back") counts once. */
function withoutRepeats(concepts: readonly Concept[]): Concept[] {
  const seen = new Set<string>();
  return concepts.filter((concept) => {
    const key = JSON.stringify(concept.alternatives);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * A single part that two concepts of the question share ("encoder" of
 * "bi-encoder" and "cross-encoder") tells neither apart: it is no partial
 * match of either, so a note that has only that part (the encoder-decoder
 * note) is not read for a comparison of the two. A note with the shared part
 * still touches the concept (`shared`): it is not penalised as missing it
 * (search.ts SHORT_QUESTION), so the self-attention note stays a side of
 * "compare self-attention and cross-attention".
 */
function withoutSharedParts(concepts: readonly Concept[]): Concept[] {
  const termsOf = (concept: Concept) => new Set([...concept.alternatives, ...(concept.partial ?? [])].flat());
  const sets = concepts.map(termsOf);
  return concepts.map((concept, at) => {
    if (concept.partial === undefined) return concept;
    const shared = (term: string) => sets.some((terms, other) => other !== at && terms.has(term));
    const partial = concept.partial.filter((alternative) => alternative.length > 1 || !shared(alternative[0] ?? ""));
    const dropped = concept.partial.filter((alternative) => !partial.includes(alternative));
    const { partial: _all, ...rest } = concept;
    return {
      ...rest,
      ...(partial.length > 0 ? { partial } : {}),
      ...(dropped.length > 0 ? { shared: dropped.flat() } : {}),
    };
  });
}
