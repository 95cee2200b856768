/**
 * Pure logic behind the `notes` MCP server: corpus and principal validation,
 * access checks, search (MiniSearch: search.ts) and the tool input/output schemas.
 *
 * Nothing here touches the file system or the network when imported; the two
 * `load*` helpers read a file only when called, so unit tests can exercise
 * everything without starting a process.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { NO_SYNONYMS, type SynonymTable } from "./expansion.js";
import { firstOffsetOf, IndexCache, rank } from "./search.js";

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
// Search (MiniSearch over the caller's visible notes: search.ts)
// ---------------------------------------------------------------------------

export { stem, tokenize } from "./analysis.js";
export { loadSynonyms, NO_SYNONYMS, type SynonymTable } from "./expansion.js";

/** A corpus prepared for search; build once, query many times. */
export interface SearchIndex {
  readonly version: number;
  readonly notes: readonly Note[];
  readonly byId: ReadonlyMap<string, Note>;
  /** One MiniSearch index per distinct set of visible notes, so statistics never include hidden notes. */
  readonly cache: IndexCache;
}

/** Prepares a corpus for search, with each course's synonym table (none by default). */
export function buildSearchIndex(corpus: Corpus, synonyms: SynonymTable = NO_SYNONYMS): SearchIndex {
  const courseTitles = new Map((corpus.courses ?? []).map((course) => [course.course, course.title]));
  return {
    version: corpus.version,
    notes: corpus.notes,
    byId: new Map(corpus.notes.map((note) => [note.note_id, note])),
    cache: new IndexCache(courseTitles, synonyms),
  };
}

/** The notes a principal may search, optionally narrowed to one course. */
function candidateNotes(index: SearchIndex, principal: Principal | undefined, course: string | undefined): Note[] {
  return index.notes.filter((note) => canRead(principal, note) && (course === undefined || note.course === course));
}

/** What {@link searchNotes} needs from the tool arguments. */
export interface SearchRequest {
  readonly query: string;
  readonly limit: number;
  readonly course?: string | undefined;
}

/**
 * Ranks the notes the principal may see against the query. Each hit's
 * `score` is its calibrated relevance (0–1: the IDF-weighted share of the
 * question's concepts it covers, search.ts), which the planners threshold.
 * Only notes with a positive score are returned, best first, ties broken by
 * note id. An invisible or empty course yields an empty result, not an
 * error, so the response does not reveal whether the course exists.
 */
export function searchNotes(
  index: SearchIndex,
  principal: Principal | undefined,
  request: SearchRequest,
): SearchResult {
  const candidates = candidateNotes(index, principal, request.course);
  if (candidates.length === 0) return { hits: [], total: 0 };
  const ranked = rank(index.cache.for(candidates), request.query);
  return {
    hits: ranked.slice(0, request.limit).map((entry) => toHit(entry.note as Note, entry.relevance, entry.matched)),
    total: ranked.length,
  };
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
  // Accent stripping can change the length; firstOffsetOf trusts match offsets only when it did not.
  const anchor = firstOffsetOf(text, queryTerms) ?? 0;
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
