/**
 * The notes search: a MiniSearch index (BM25+, title boosted over text) over
 * the notes a caller may read, and a calibrated relevance for each hit.
 *
 * Relevance is what the planners threshold (src/domains/notes/question.ts):
 * the question is split into concepts (expansion.ts), each scored by BM25 on
 * its own; a note's relevance is the IDF-weighted share of the concepts it
 * covers, each concept counting min(1, its BM25 score ÷ that of one mention in
 * a text of average length). A concept no visible note has weighs 3/4 of
 * the IDF it would have ({@link UNKNOWN_WEIGHT}: a missing topic, or a
 * student's own wording), and still the most, so "convolutional neural networks" is not covered by a note
 * that mentions neural networks; the words of the course's own title
 * ("database" in Database Systems) are in every note of the course and weigh
 * almost nothing. A title that names the question's concepts adds to the
 * score ({@link TITLE_SHARE}); a two-concept question is about both
 * ({@link SHORT_QUESTION}).
 *
 * Statistics come from the caller's visible notes only (one index per visible
 * set, cached), so scores reveal nothing about notes they cannot read. Pure.
 */
import MiniSearch, { type Query } from "minisearch";
import { normalizeText, tokenize, VARIABLE, wordsOf } from "./analysis.js";
import {
  conceptsOf,
  expansionsFor,
  NO_SYNONYMS,
  type Concept,
  type Expansions,
  type SynonymTable,
} from "./expansion.js";
import { noteCompounds, partsFree, type NoteCompounds } from "./compounds.js";
import { phraseMentions, termStream, type NoteStreams } from "./phrases.js";

/** A note as the index needs it (corpus.ts `Note`). */
export interface SearchableNote {
  readonly note_id: string;
  readonly source_id: string;
  readonly course: string;
  readonly title: string;
  readonly page: number;
  readonly text: string;
}

/** BM25+ parameters, given explicitly because the relevance's unit (one plain mention) is computed from them. */
export const BM25 = { k: 1.2, b: 0.7, d: 0.5 } as const;
/** A title match counts this many times a text match when ranking. */
export const TITLE_BOOST = 2;
/** Relevances are rounded so float noise cannot reorder notes that are really tied. */
const RELEVANCE_DECIMALS = 1e4;
/** How many visible-set indexes are kept (one per distinct set of readable notes). */
const MAX_CACHED_INDEXES = 64;

/** One visible set's index. */
export interface VisibleIndex {
  readonly notes: readonly SearchableNote[];
  readonly search: MiniSearch<SearchableNote & { id: string; course_title: string }>;
  readonly expansions: Expansions;
  /** Per note id: its terms in any field (presence, for concept document frequencies). */
  readonly termsById: ReadonlyMap<string, ReadonlySet<string>>;
  /** Per term: how many notes have it in their text (for the plain-mention unit). */
  readonly textFrequency: ReadonlyMap<string, number>;
  /** Per note id: the terms of its title (a note is about what its title names). */
  readonly titleTermsById: ReadonlyMap<string, ReadonlySet<string>>;
  /** Per note id: the words of its title and text as written (lower-cased, hyphenated ones also by their parts). */
  readonly wordsById: ReadonlyMap<string, ReadonlySet<string>>;
  /** Per note id: its title and text as term streams (phrases.ts), for multi-word concepts. */
  readonly streamsById: ReadonlyMap<string, NoteStreams>;
  /** Per note id: its free terms and hyphenated compounds (compounds.ts), for matching a compound by its parts. */
  readonly compoundsById: ReadonlyMap<string, NoteCompounds>;
}

/** Builds the index of one visible set. */
export function buildVisibleIndex(
  notes: readonly SearchableNote[],
  courseTitles: ReadonlyMap<string, string>,
  synonyms: SynonymTable = NO_SYNONYMS,
): VisibleIndex {
  const search = new MiniSearch<SearchableNote & { id: string; course_title: string }>({
    fields: ["title", "text", "course_title"],
    storeFields: [],
    tokenize,
    processTerm: (term) => term,
    searchOptions: {
      boost: { title: TITLE_BOOST, text: 1, course_title: 0.1 },
      bm25: BM25,
      tokenize: (text) => text.split(" ").filter((term) => term !== ""),
      processTerm: (term) => term,
    },
  });
  // The course's code and title describe every note of it: "cs301" or "database" in a question narrows nothing.
  const documents = notes.map((note) => ({
    ...note,
    id: note.note_id,
    course_title: `${note.course} ${courseTitles.get(note.course) ?? ""}`,
  }));
  search.addAll(documents);
  const termsById = new Map(
    documents.map((note) => [note.note_id, new Set(tokenize(`${note.title} ${note.text} ${note.course_title}`))]),
  );
  const textFrequency = new Map<string, number>();
  for (const note of notes)
    for (const term of new Set(tokenize(note.text))) textFrequency.set(term, (textFrequency.get(term) ?? 0) + 1);
  const titleTermsById = new Map(notes.map((note) => [note.note_id, new Set(tokenize(note.title))]));
  const streamsById = new Map(
    notes.map((note) => [note.note_id, { title: termStream(note.title), text: termStream(note.text) }]),
  );
  const wordsById = new Map(
    notes.map((note) => [
      note.note_id,
      new Set(wordsOf(`${note.title} ${note.text}`).flatMap(({ word }) => [word, ...word.split("-")])),
    ]),
  );
  const compoundsById = new Map(notes.map((note) => [note.note_id, noteCompounds(`${note.title} ${note.text}`)]));
  const expansions = expansionsFor(notes, synonyms);
  return { notes, search, expansions, termsById, textFrequency, titleTermsById, wordsById, streamsById, compoundsById };
}

const inverseDocumentFrequency = (count: number, frequency: number) =>
  Math.log(1 + (count - frequency + 0.5) / (frequency + 0.5));

/**
 * How many plain mentions make full coverage of a concept: a title match
 * reaches it, a single mention in passing does not (chosen on the labelled
 * set with the planner's cut-offs: eval/retrieval/).
 */
export const FULL_COVERAGE_MENTIONS = 1.25;

/** BM25+ of one mention in a text of average length. */
function plainMention(index: VisibleIndex, term: string): number {
  const idf = inverseDocumentFrequency(index.notes.length, index.textFrequency.get(term) ?? 0);
  return idf * (BM25.d + (BM25.k + 1) / (1 + BM25.k));
}

/** Per note id, how well one alternative (terms that must all match) is covered: 0 to 1. */
function alternativeCoverage(index: VisibleIndex, terms: readonly string[]): Map<string, number> {
  const query: Query = terms.length === 1 ? (terms[0] ?? "") : { combineWith: "AND", queries: [...terms] };
  const unit = FULL_COVERAGE_MENTIONS * terms.length * terms.reduce((sum, term) => sum + plainMention(index, term), 0);
  const coverage = new Map<string, number>();
  for (const result of index.search.search(query)) coverage.set(String(result.id), Math.min(1, result.score / unit));
  return coverage;
}

/** What a note matching only part of a hyphenated word ("attention" of "cross-attention") gets of the concept. */
const PARTIAL_CREDIT = 0.5;

/**
 * A concept no visible note has weighs this share of its IDF: it may be a
 * missing topic ("convolutional") or a student's wording ("heavier") alike,
 * so it counts less than a full IDF (chosen on the labelled set,
 * eval/retrieval/: 0.5 did better there, but then "the exam 2 worked
 * solutions" scored 0.48 on a study-tips note sharing "exam" and "worked",
 * and the unreleased solutions must be refused).
 */
export const UNKNOWN_WEIGHT = 0.75;

interface ConceptScore {
  weight: number;
  coverage: Map<string, number>;
  /** The notes whose title has one of the concept's alternatives whole. */
  inTitle: Set<string>;
  /** Whether every visible note has it. */
  everywhere: boolean;
  /** Notes that have a part it shares with another concept (expansion.ts `shared`): not missing it. */
  touched?: Set<string>;
}

/**
 * Per note id, the best coverage of any of these alternatives, times `credit`.
 * With `own` (a concept's terms), an alternative of several terms matched
 * apart counts only in notes that have each free or in a compound of the
 * concept's own (compounds.ts).
 */
function bestCoverage(
  index: VisibleIndex,
  alternatives: readonly (readonly string[])[],
  credit: number,
  own?: ReadonlySet<string>,
) {
  const coverage = new Map<string, number>();
  for (const alternative of alternatives) {
    for (const [id, value] of alternativeCoverage(index, alternative)) {
      const compounds = index.compoundsById.get(id);
      const apart = own !== undefined && alternative.length > 1 && compounds !== undefined;
      if (apart && !partsFree(compounds, alternative, own)) continue;
      coverage.set(id, Math.max(coverage.get(id) ?? 0, credit * value));
    }
  }
  return coverage;
}

/** Every term of a concept's ways of matching. */
const ownTerms = (concept: Concept) => new Set([...(concept.partial ?? []), ...concept.alternatives].flat());

const weightOf = (index: VisibleIndex, having: number) =>
  inverseDocumentFrequency(index.notes.length, having) * (having === 0 ? UNKNOWN_WEIGHT : 1);

/**
 * A concept written in several words ("candidate key", a synonym such as
 * "minimal superkey", "two-phase commit") is mentioned where its words stand
 * together (phrases.ts): its coverage counts those places, any of its ways of
 * writing it, a title's counting {@link TITLE_BOOST} times, full at
 * {@link FULL_COVERAGE_MENTIONS}. A note that has the words apart gets
 * {@link PARTIAL_CREDIT} of their coverage; the notes that have it, for its
 * weight, and the titles that name it are those with the phrase.
 */
function phraseConceptScores(index: VisibleIndex, concept: Concept): ConceptScore {
  const partial = [...(concept.partial ?? []), ...concept.alternatives];
  const coverage = bestCoverage(index, partial, PARTIAL_CREDIT, ownTerms(concept));
  const inTitle = new Set<string>();
  let having = 0;
  for (const [id, streams] of index.streamsById) {
    const found = phraseMentions(streams, concept.alternatives, TITLE_BOOST);
    if (found.mentions === 0) continue;
    having += 1;
    if (found.inTitle) inTitle.add(id);
    coverage.set(id, Math.max(coverage.get(id) ?? 0, Math.min(1, found.mentions / FULL_COVERAGE_MENTIONS)));
  }
  return { weight: weightOf(index, having), coverage, inTitle, everywhere: having === index.notes.length };
}

/**
 * A note that has a question's word only through its stem ("atomic" for
 * "atomicity") covers it a little less than one that uses the word itself:
 * a tie-break between notes sharing a stem, too small to move a note across
 * the planner's threshold but for a note within 1% of it.
 */
export const STEM_ONLY = 0.99;

/** A note's relevance to each concept (best alternative), and the concept's weight (IDF of the notes having it). */
function conceptScores(index: VisibleIndex, concept: Concept): ConceptScore {
  if (concept.alternatives.some((alternative) => alternative.length > 1)) return phraseConceptScores(index, concept);
  const coverage = bestCoverage(index, concept.partial ?? [], PARTIAL_CREDIT, ownTerms(concept));
  const plainWord = /^[a-z0-9_]+$/.test(concept.words) && concept.alternatives.length === 1;
  for (const [id, value] of bestCoverage(index, concept.alternatives, 1)) {
    const ownWord = !plainWord || (index.wordsById.get(id)?.has(concept.words) ?? false);
    coverage.set(id, Math.max(coverage.get(id) ?? 0, ownWord ? value : STEM_ONLY * value));
  }
  const having = [...index.termsById.values()].filter((terms) =>
    concept.alternatives.some((alternative) => alternative.every((term) => terms.has(term))),
  ).length;
  const inTitle = new Set(
    [...index.titleTermsById]
      .filter(([, terms]) => concept.alternatives.some((alternative) => alternative.every((term) => terms.has(term))))
      .map(([id]) => id),
  );
  // A formula's variable no readable note uses ("t" of "QK^T") is notation, not a missing topic.
  const weight = VARIABLE.test(concept.words) && having === 0 ? 0 : weightOf(index, having);
  return { weight, coverage, inTitle, everywhere: having === index.notes.length };
}

/**
 * The share of a note's relevance that comes from its title naming the
 * question's concepts: of two notes that both cover "weight decay", the one
 * titled "L2 regularization" (its synonym) is about it, the one that mentions
 * L2 in passing is not (calibrated with the planner's cut-offs: eval/retrieval/).
 */
export const TITLE_SHARE = 0.2;

/**
 * A note's relevance: the IDF-weighted share of the question's concepts it
 * covers, {@link TITLE_SHARE} of it the share its title names; halved for a
 * short question it misses a concept of ({@link SHORT_QUESTION}).
 */
function noteRelevance(scored: readonly ConceptScore[], noteId: string): number {
  const total = scored.reduce((sum, concept) => sum + concept.weight, 0);
  if (total <= 0) return 0;
  const covered = scored.reduce((sum, concept) => sum + concept.weight * (concept.coverage.get(noteId) ?? 0), 0);
  const titled = scored.reduce((sum, concept) => sum + (concept.inTitle.has(noteId) ? concept.weight : 0), 0);
  const score = ((1 - TITLE_SHARE) * covered + TITLE_SHARE * Math.min(titled, covered)) / total;
  // A word every readable note has (its course's title: "database" for db201) is missed by none.
  const missesOne = scored.some(
    (concept) =>
      !concept.everywhere && (concept.coverage.get(noteId) ?? 0) === 0 && !(concept.touched?.has(noteId) ?? false),
  );
  return scored.length <= SHORT_QUESTION && missesOne ? score * MISSING_PENALTY : score;
}

/**
 * A question of at most this many concepts ("batch normalization") is about
 * all of them: a note that lacks one entirely (the SGD note has "batch" but
 * no normalization) gets {@link MISSING_PENALTY} of its score. Longer
 * questions carry words of phrasing a note may lack. Chosen on the labelled
 * set: eval/retrieval/.
 */
export const SHORT_QUESTION = 2;
/** See {@link SHORT_QUESTION}. */
export const MISSING_PENALTY = 0.5;

/** One ranked note: its calibrated relevance (0–1), the library's BM25 score and the terms it matched. */
export interface RankedNote {
  readonly note: SearchableNote;
  readonly relevance: number;
  readonly bm25: number;
  readonly matched: ReadonlySet<string>;
}

/**
 * Ranks the visible notes against a query: relevance first, then BM25 (title
 * boosted), then note id. Only notes with a positive relevance are returned.
 */
export function rank(index: VisibleIndex, query: string): RankedNote[] {
  const concepts = conceptsOf(query, index.expansions);
  if (concepts.length === 0 || index.notes.length === 0) return [];
  const scored = concepts.map((concept) => withTouched(index, concept, conceptScores(index, concept)));
  const allTerms = [...new Set(concepts.flatMap((concept) => concept.alternatives.flat()))];
  const bm25 = new Map(
    index.search.search({ combineWith: "OR", queries: allTerms }).map((result) => [String(result.id), result]),
  );
  const ranked: RankedNote[] = [];
  for (const note of index.notes) {
    const relevance = Math.round(noteRelevance(scored, note.note_id) * RELEVANCE_DECIMALS) / RELEVANCE_DECIMALS;
    if (relevance <= 0) continue;
    const result = bm25.get(note.note_id);
    ranked.push({ note, relevance, bm25: result?.score ?? 0, matched: new Set(result?.terms ?? []) });
  }
  return ranked.sort(
    (left, right) =>
      right.relevance - left.relevance ||
      right.bm25 - left.bm25 ||
      (left.note.note_id < right.note.note_id ? -1 : left.note.note_id > right.note.note_id ? 1 : 0),
  );
}

/** A concept's scores with the notes that touch it through a shared part. */
function withTouched(index: VisibleIndex, concept: Concept, score: ConceptScore): ConceptScore {
  const shared = concept.shared ?? [];
  if (shared.length === 0) return score;
  const touched = new Set(
    [...index.termsById].filter(([, terms]) => shared.some((term) => terms.has(term))).map(([id]) => id),
  );
  return { ...score, touched };
}

/** Visible-set indexes by the ids they hold, built on first use; the oldest is dropped past the bound. */
export class IndexCache {
  readonly #built = new Map<string, VisibleIndex>();
  constructor(
    private readonly courseTitles: ReadonlyMap<string, string>,
    private readonly synonyms: SynonymTable,
  ) {}

  /** The index over exactly these notes. */
  for(notes: readonly SearchableNote[]): VisibleIndex {
    const key = notes
      .map((note) => note.note_id)
      .sort()
      .join(" ");
    const cached = this.#built.get(key);
    if (cached) return cached;
    const built = buildVisibleIndex(notes, this.courseTitles, this.synonyms);
    if (this.#built.size >= MAX_CACHED_INDEXES) {
      const oldest = this.#built.keys().next().value;
      if (oldest !== undefined) this.#built.delete(oldest);
    }
    this.#built.set(key, built);
    return built;
  }
}

/** Whether a word of the text yields one of the terms (for placing a snippet). */
export function firstOffsetOf(text: string, terms: ReadonlySet<string>): number | undefined {
  if (normalizeText(text).length !== text.length) return undefined;
  return wordsOf(text).find(({ word }) => tokenize(word).some((term) => terms.has(term)))?.index;
}

/** A query's concepts with their weights and each note's coverage (for eval/retrieval/explain.ts). */
export function explainRank(
  index: VisibleIndex,
  query: string,
): ({ words: string; alternatives: readonly (readonly string[])[] } & ConceptScore)[] {
  return conceptsOf(query, index.expansions).map((concept) => ({
    words: concept.words,
    alternatives: concept.alternatives,
    ...conceptScores(index, concept),
  }));
}
