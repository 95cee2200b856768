/**
 * Pure logic behind the `notes` MCP server: corpus and principal validation,
 * access checks, lexical search (BM25) and the tool input/output schemas.
 *
 * Nothing here touches the file system or the network when imported; the two
 * `load*` helpers read a file only when called, so unit tests can exercise
 * everything without starting a process.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";

// ---------------------------------------------------------------------------
// Identifiers and constants
// ---------------------------------------------------------------------------

/** A course code such as `cs301`: 2–8 lowercase letters then three digits. */
export const COURSE_PATTERN = /^[a-z]{2,8}[0-9]{3}$/;

/** A note id is `<course>.<slug>`; the course is the part before the first dot. */
export const NOTE_ID_PATTERN = /^[a-z0-9]+\.[a-z0-9-]+$/;

/** Host-injected caller ids are short lowercase handles. */
export const USER_ID_PATTERN = /^[a-z0-9_-]+$/;

/** The scope that lets a principal see notes whose `released` flag is false. */
export const UNRELEASED_SCOPE = "notes:read_unreleased";

/** Upper bound on the length of a search snippet, in UTF-16 code units. */
export const SNIPPET_MAX_LENGTH = 240;

/**
 * The single error payload for "missing" and "forbidden" alike. Keeping the two
 * cases byte-identical means a caller cannot probe which note ids exist.
 */
export const ACCESS_DENIED = { code: "access_denied", message: "note not found or not accessible" } as const;

/** {@link ACCESS_DENIED} serialized exactly as the server sends it. */
export const ACCESS_DENIED_TEXT: string = JSON.stringify(ACCESS_DENIED);

// ---------------------------------------------------------------------------
// Corpus schema
// ---------------------------------------------------------------------------

/** One course note as stored in `data/notes.json`. */
export const NoteSchema = z
  .object({
    note_id: z.string().min(1).max(100).regex(NOTE_ID_PATTERN),
    source_id: z.string().min(1).max(200),
    course: z.string().regex(COURSE_PATTERN),
    title: z.string().min(1).max(200),
    page: z.number().int().min(1),
    released: z.boolean(),
    text: z.string().min(1),
  })
  .strict();

/** A course's display title (used by the outline resource and the quiz prompt). */
export const CourseSchema = z
  .object({
    course: z.string().regex(COURSE_PATTERN),
    title: z.string().min(1).max(200),
  })
  .strict();

/** The whole shipped corpus. Ids must be unique and agree with their course. */
export const CorpusSchema = z
  .object({
    version: z.number().int().min(1),
    /** Course titles; a course without one is shown by its code. */
    courses: z.array(CourseSchema).optional(),
    notes: z.array(NoteSchema),
  })
  .strict()
  .superRefine((corpus, context) => {
    const seen = new Set<string>();
    corpus.notes.forEach((note, position) => {
      if (seen.has(note.note_id)) {
        context.addIssue({
          code: "custom",
          path: ["notes", position, "note_id"],
          message: `duplicate note_id ${note.note_id}`,
        });
      }
      seen.add(note.note_id);
      // Access checks derive the course from the id in some places and from the field in others; they must agree.
      if (courseOfNoteId(note.note_id) !== note.course) {
        context.addIssue({
          code: "custom",
          path: ["notes", position, "course"],
          message: `course does not match note_id ${note.note_id}`,
        });
      }
    });
  });

/** A validated course note. */
export type Note = z.infer<typeof NoteSchema>;

/** A validated corpus. */
export type Corpus = z.infer<typeof CorpusSchema>;

// ---------------------------------------------------------------------------
// Principal directory schema
// ---------------------------------------------------------------------------

/** One principal; unknown extra keys (such as `display_name`) are dropped, required ones enforced. */
export const PrincipalSchema = z
  .object({
    user_id: z.string().min(1).max(64).regex(USER_ID_PATTERN),
    tenant: z.string().min(1),
    role: z.string().min(1),
    scopes: z.array(z.string()),
    /** Warrant's principal directory keeps enrolments as the `courses` grant. */
    grants: z
      .object({ courses: z.array(z.string()).default([]) })
      .passthrough()
      .default({ courses: [] }),
  })
  .transform(({ grants, ...principal }) => ({ ...principal, courses: grants.courses }));

/** The principal directory file. Duplicate user ids are rejected because they would make lookups ambiguous. */
export const PrincipalDirectorySchema = z
  .object({ principals: z.array(PrincipalSchema) })
  .superRefine((directory, context) => {
    const seen = new Set<string>();
    directory.principals.forEach((principal, position) => {
      if (seen.has(principal.user_id)) {
        context.addIssue({
          code: "custom",
          path: ["principals", position, "user_id"],
          message: `duplicate user_id ${principal.user_id}`,
        });
      }
      seen.add(principal.user_id);
    });
  });

/** A validated principal. */
export type Principal = z.infer<typeof PrincipalSchema>;

/** A validated principal directory. */
export type PrincipalDirectory = z.infer<typeof PrincipalDirectorySchema>;

// ---------------------------------------------------------------------------
// Tool schemas (shared by the server and the tests)
// ---------------------------------------------------------------------------

const userIdField = z
  .string()
  .min(1)
  .max(64)
  .regex(USER_ID_PATTERN)
  .describe("Caller identity, injected by the host from the authenticated principal; not chosen by the model.");

/** Input of `search_notes`; strict, so unknown keys are rejected. */
export const SearchNotesInputSchema = z
  .object({
    user_id: userIdField,
    query: z.string().min(1).max(500).describe("Free-text search query."),
    limit: z.number().int().min(1).max(20).default(5).describe("Maximum number of hits to return (1–20, default 5)."),
    course: z.string().regex(COURSE_PATTERN).optional().describe("Restrict the search to one course code, e.g. cs301."),
  })
  .strict();

/** Input of `read_note`; strict, so unknown keys are rejected. */
export const ReadNoteInputSchema = z
  .object({
    user_id: userIdField,
    note_id: z
      .string()
      .min(1)
      .max(100)
      .regex(NOTE_ID_PATTERN)
      .describe("Note id as returned by search_notes, e.g. cs301.self-attention."),
  })
  .strict();

/** One search hit. */
export const SearchHitSchema = z.object({
  note_id: z.string(),
  source_id: z.string(),
  course: z.string(),
  title: z.string(),
  page: z.number().int().min(1),
  score: z.number(),
  snippet: z.string().max(SNIPPET_MAX_LENGTH),
});

/** Structured result of `search_notes`. `total` counts every match before `limit` is applied. */
export const SearchNotesOutputSchema = z.object({
  hits: z.array(SearchHitSchema),
  total: z.number().int().min(0),
});

/** Structured result of `read_note`. */
export const ReadNoteOutputSchema = z.object({
  note_id: z.string(),
  source_id: z.string(),
  course: z.string(),
  title: z.string(),
  page: z.number().int().min(1),
  text: z.string(),
  version: z.number().int().min(1),
});

/** Parsed `search_notes` arguments. */
export type SearchNotesInput = z.infer<typeof SearchNotesInputSchema>;

/** One search hit. */
export type SearchHit = z.infer<typeof SearchHitSchema>;

/** A search result: hits (best first) and the number of matches before the limit. */
export type SearchResult = z.infer<typeof SearchNotesOutputSchema>;

/** A note as returned by `read_note`. */
export type NoteView = z.infer<typeof ReadNoteOutputSchema>;

// ---------------------------------------------------------------------------
// Parsing and loading
// ---------------------------------------------------------------------------

/**
 * Validates raw JSON as a corpus.
 * @throws Error with a readable list of problems when the data is invalid.
 */
export function parseCorpus(raw: unknown): Corpus {
  const result = CorpusSchema.safeParse(raw);
  if (!result.success) {
    throw new Error(`invalid notes corpus:\n${z.prettifyError(result.error)}`);
  }
  return result.data;
}

/**
 * Validates raw JSON as a principal directory.
 * @throws Error with a readable list of problems when the data is invalid.
 */
export function parsePrincipalDirectory(raw: unknown): PrincipalDirectory {
  const result = PrincipalDirectorySchema.safeParse(raw);
  if (!result.success) {
    throw new Error(`invalid principal directory:\n${z.prettifyError(result.error)}`);
  }
  return result.data;
}

/** Reads and validates a corpus file. */
export async function loadCorpus(filePath: string): Promise<Corpus> {
  return parseCorpus(await readJson(filePath));
}

/** Reads and validates a principal directory file. */
export async function loadPrincipalDirectory(filePath: string): Promise<PrincipalDirectory> {
  return parsePrincipalDirectory(await readJson(filePath));
}

async function readJson(filePath: string): Promise<unknown> {
  const text = await readFile(filePath, "utf8");
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`${filePath} is not valid JSON: ${reason}`);
  }
}

// ---------------------------------------------------------------------------
// Access
// ---------------------------------------------------------------------------

/** The course part of a note id (everything before the first dot). */
export function courseOfNoteId(noteId: string): string {
  const dot = noteId.indexOf(".");
  return dot < 0 ? noteId : noteId.slice(0, dot);
}

/** Looks a caller up by id; `undefined` for unknown users. */
export function findPrincipal(directory: PrincipalDirectory, userId: string): Principal | undefined {
  return directory.principals.find((principal) => principal.user_id === userId);
}

/**
 * The access rule: a known principal enrolled in the note's course may read it
 * if it is released, or if they hold {@link UNRELEASED_SCOPE}.
 */
export function canRead(principal: Principal | undefined, note: Note): boolean {
  if (principal === undefined) return false;
  if (!principal.courses.includes(note.course)) return false;
  return note.released || principal.scopes.includes(UNRELEASED_SCOPE);
}

// ---------------------------------------------------------------------------
// Tokenization
// ---------------------------------------------------------------------------

// Function words carry no topical signal; dropping them keeps "with" or "the" from matching every note.
const STOP_WORDS: ReadonlySet<string> = new Set([
  "a",
  "about",
  "above",
  "after",
  "again",
  "against",
  "all",
  "also",
  "am",
  "an",
  "and",
  "any",
  "are",
  "as",
  "at",
  "be",
  "because",
  "been",
  "before",
  "being",
  "between",
  "both",
  "but",
  "by",
  "can",
  "could",
  "did",
  "do",
  "does",
  "doing",
  "down",
  "during",
  "each",
  "either",
  "else",
  "few",
  "for",
  "from",
  "further",
  "had",
  "has",
  "have",
  "having",
  "he",
  "her",
  "here",
  "hers",
  "him",
  "his",
  "how",
  "i",
  "if",
  "in",
  "into",
  "is",
  "it",
  "its",
  "itself",
  "just",
  "may",
  "me",
  "might",
  "more",
  "most",
  "must",
  "my",
  "no",
  "nor",
  "not",
  "now",
  "of",
  "off",
  "on",
  "once",
  "one",
  "only",
  "or",
  "other",
  "our",
  "out",
  "over",
  "own",
  "same",
  "she",
  "should",
  "so",
  "some",
  "such",
  "than",
  "that",
  "the",
  "their",
  "them",
  "then",
  "there",
  "these",
  "they",
  "this",
  "those",
  "through",
  "to",
  "too",
  "under",
  "until",
  "up",
  "us",
  "very",
  "was",
  "we",
  "were",
  "what",
  "when",
  "where",
  "which",
  "while",
  "who",
  "whom",
  "why",
  "will",
  "with",
  "would",
  "you",
  "your",
]);

// Runs of letters/digits, optionally joined by single hyphens ("self-attention", "k-fold").
const WORD_PATTERN = /[a-z0-9]+(?:-[a-z0-9]+)*/g;

/**
 * Folds simple English plurals so "keys" matches "key" and "queries" matches
 * "query". Deliberately crude: it is applied to queries and documents alike, so
 * an odd stem ("bias" → "bia") still matches itself.
 */
export function foldPlural(word: string): string {
  if (word.length <= 3) return word;
  if (word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.endsWith("sses")) return word.slice(0, -2);
  if (word.endsWith("s") && !/(?:ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

/** Lowercases and strips accents so "Café" and "cafe" tokenize alike. */
function normalizeText(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase();
}

/** Search terms for one matched word: the word itself and, for hyphenated words, each part. */
function termsOfWord(word: string): string[] {
  const candidates = word.includes("-") ? [word, ...word.split("-")] : [word];
  return candidates.map(foldPlural).filter((term) => term.length > 1 && !STOP_WORDS.has(term));
}

/**
 * Splits text into search terms: lowercase, stop words and single characters
 * removed, plurals folded, and hyphenated words kept whole plus split into parts.
 */
export function tokenize(text: string): string[] {
  const terms: string[] = [];
  for (const match of normalizeText(text).matchAll(WORD_PATTERN)) {
    terms.push(...termsOfWord(match[0]));
  }
  return terms;
}

// ---------------------------------------------------------------------------
// Search index and BM25 scoring
// ---------------------------------------------------------------------------

/** A note with its precomputed term counts. */
export interface IndexedNote {
  readonly note: Note;
  readonly termCounts: ReadonlyMap<string, number>;
  readonly length: number;
}

/** A corpus prepared for search; build once, query many times. */
export interface SearchIndex {
  readonly version: number;
  readonly entries: readonly IndexedNote[];
  readonly byId: ReadonlyMap<string, Note>;
}

/** Standard BM25 constants: term-frequency saturation and length normalization. */
const BM25_K1 = 1.2;
const BM25_B = 0.75;

// Scores are rounded so that float noise cannot reorder notes that are really tied.
const SCORE_DECIMALS = 1e6;

function indexNote(note: Note): IndexedNote {
  const terms = tokenize(`${note.title} ${note.text}`);
  const termCounts = new Map<string, number>();
  for (const term of terms) termCounts.set(term, (termCounts.get(term) ?? 0) + 1);
  return { note, termCounts, length: terms.length };
}

/** Tokenizes every note of a corpus once. */
export function buildSearchIndex(corpus: Corpus): SearchIndex {
  return {
    version: corpus.version,
    entries: corpus.notes.map(indexNote),
    byId: new Map(corpus.notes.map((note) => [note.note_id, note])),
  };
}

/**
 * Document frequencies over the given entries only. Statistics come from the
 * caller's visible set, so scores never reveal anything about hidden notes.
 */
function documentFrequencies(entries: readonly IndexedNote[], terms: readonly string[]): Map<string, number> {
  const frequencies = new Map<string, number>();
  for (const term of terms) {
    frequencies.set(term, entries.filter((entry) => entry.termCounts.has(term)).length);
  }
  return frequencies;
}

function inverseDocumentFrequency(documentCount: number, documentFrequency: number): number {
  // The "+1" inside the log keeps the weight positive even for terms in most documents.
  return Math.log(1 + (documentCount - documentFrequency + 0.5) / (documentFrequency + 0.5));
}

function bm25Score(
  entry: IndexedNote,
  terms: readonly string[],
  frequencies: ReadonlyMap<string, number>,
  documentCount: number,
  averageLength: number,
): number {
  let score = 0;
  for (const term of terms) {
    const termFrequency = entry.termCounts.get(term) ?? 0;
    if (termFrequency === 0) continue;
    const lengthRatio = averageLength > 0 ? entry.length / averageLength : 1;
    const saturation =
      (termFrequency * (BM25_K1 + 1)) / (termFrequency + BM25_K1 * (1 - BM25_B + BM25_B * lengthRatio));
    score += inverseDocumentFrequency(documentCount, frequencies.get(term) ?? 0) * saturation;
  }
  return Math.round(score * SCORE_DECIMALS) / SCORE_DECIMALS;
}

/** Orders by score descending, then note id ascending (code-unit order, independent of locale). */
function compareHits(left: SearchHit, right: SearchHit): number {
  if (left.score !== right.score) return right.score - left.score;
  if (left.note_id === right.note_id) return 0;
  return left.note_id < right.note_id ? -1 : 1;
}

/** The notes a principal may search, optionally narrowed to one course. */
function candidateEntries(
  index: SearchIndex,
  principal: Principal | undefined,
  course: string | undefined,
): IndexedNote[] {
  return index.entries.filter(
    (entry) => canRead(principal, entry.note) && (course === undefined || entry.note.course === course),
  );
}

/** What {@link searchNotes} needs from the tool arguments. */
export interface SearchRequest {
  readonly query: string;
  readonly limit: number;
  readonly course?: string | undefined;
}

/**
 * Ranks the notes the principal may see against the query with BM25.
 * Only notes with a positive score are returned, best first, ties broken by
 * note id. An invisible or empty course yields an empty result, not an error,
 * so the response does not reveal whether the course exists.
 */
export function searchNotes(
  index: SearchIndex,
  principal: Principal | undefined,
  request: SearchRequest,
): SearchResult {
  const terms = [...new Set(tokenize(request.query))];
  const candidates = candidateEntries(index, principal, request.course);
  if (terms.length === 0 || candidates.length === 0) return { hits: [], total: 0 };

  const frequencies = documentFrequencies(candidates, terms);
  const averageLength = candidates.reduce((sum, entry) => sum + entry.length, 0) / candidates.length;
  const queryTerms = new Set(terms);
  const matches = candidates
    .map((entry) => ({ entry, score: bm25Score(entry, terms, frequencies, candidates.length, averageLength) }))
    .filter((scored) => scored.score > 0)
    .map(({ entry, score }) => toHit(entry.note, score, queryTerms))
    .sort(compareHits);
  return { hits: matches.slice(0, request.limit), total: matches.length };
}

function toHit(note: Note, score: number, queryTerms: ReadonlySet<string>): SearchHit {
  return {
    note_id: note.note_id,
    source_id: note.source_id,
    course: note.course,
    title: note.title,
    page: note.page,
    score,
    snippet: makeSnippet(note.text, queryTerms),
  };
}

// ---------------------------------------------------------------------------
// Snippets
// ---------------------------------------------------------------------------

const ELLIPSIS = "…";

/** How far before the first matching word a snippet may start when it begins at a sentence. */
const SENTENCE_LOOKBACK = 120;

/** How much context to keep before the first matching word when no sentence start is near. */
const WORD_LOOKBACK = 60;

/** Offset of the first word in `text` that yields one of the query terms, if any. */
function firstMatchOffset(text: string, queryTerms: ReadonlySet<string>): number | undefined {
  for (const match of normalizeText(text).matchAll(WORD_PATTERN)) {
    if (termsOfWord(match[0]).some((term) => queryTerms.has(term))) return match.index;
  }
  return undefined;
}

/** Where a snippet anchored at `anchor` should start: a nearby sentence start, else a word boundary. */
function snippetStart(text: string, anchor: number): number {
  const sentenceEnd = text.lastIndexOf(". ", anchor);
  const sentenceStart = sentenceEnd < 0 ? 0 : sentenceEnd + 2;
  if (anchor - sentenceStart <= SENTENCE_LOOKBACK) return sentenceStart;
  const space = text.indexOf(" ", anchor - WORD_LOOKBACK);
  return space >= 0 && space < anchor ? space + 1 : anchor;
}

/**
 * A window of at most {@link SNIPPET_MAX_LENGTH} characters around the first
 * query match (or the start of the text), cut at word boundaries with "…"
 * marking elided text.
 */
export function makeSnippet(text: string, queryTerms: ReadonlySet<string>): string {
  const normalizedLength = normalizeText(text).length;
  // Accent stripping can change the length; only trust match offsets when it did not.
  const anchor = normalizedLength === text.length ? (firstMatchOffset(text, queryTerms) ?? 0) : 0;
  const start = snippetStart(text, anchor);
  const prefix = start > 0 ? ELLIPSIS : "";
  const rest = text.slice(start);
  const room = SNIPPET_MAX_LENGTH - prefix.length;
  if (rest.length <= room) return prefix + rest;
  const cut = rest.lastIndexOf(" ", room - ELLIPSIS.length);
  const body = rest.slice(0, cut > 0 ? cut : room - ELLIPSIS.length).trimEnd();
  return prefix + body + ELLIPSIS;
}

// ---------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------

/**
 * The note if it exists and the principal may read it, else `undefined`.
 * Both failure cases return the same value on purpose; callers must not
 * distinguish them in what they send back.
 */
export function readNote(index: SearchIndex, principal: Principal | undefined, noteId: string): NoteView | undefined {
  const note = index.byId.get(noteId);
  if (note === undefined || !canRead(principal, note)) return undefined;
  return {
    note_id: note.note_id,
    source_id: note.source_id,
    course: note.course,
    title: note.title,
    page: note.page,
    text: note.text,
    version: index.version,
  };
}
