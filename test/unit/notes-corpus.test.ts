/**
 * Unit tests of tools/notes/corpus.ts: corpus and principal validation, the
 * access rule, tokenization (stemming), MiniSearch ranking and snippets. No process is started;
 * the only I/O is reading the two shipped JSON files.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import {
  ACCESS_DENIED_TEXT,
  ReadNoteInputSchema,
  SNIPPET_MAX_LENGTH,
  SearchNotesInputSchema,
  buildSearchIndex,
  canRead,
  findPrincipal,
  loadCorpus,
  loadPrincipalDirectory,
  makeSnippet,
  parseCorpus,
  parsePrincipalDirectory,
  readNote,
  searchNotes,
  tokenize,
  type Corpus,
  type Note,
  type Principal,
  type PrincipalDirectory,
  type SearchIndex,
} from "../../tools/notes/corpus.js";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const CORPUS_PATH = path.join(REPO_ROOT, "tools", "notes", "data", "notes.json");
const PRINCIPALS_PATH = path.join(REPO_ROOT, "src", "domains", "dev-principals.json");

const ATTENTION_QUERY = "compare self-attention with cross-attention";

let corpus: Corpus;
let directory: PrincipalDirectory;
let index: SearchIndex;

beforeAll(async () => {
  corpus = await loadCorpus(CORPUS_PATH);
  directory = await loadPrincipalDirectory(PRINCIPALS_PATH);
  index = buildSearchIndex(corpus);
});

/** Looks up a principal that the dev directory is known to contain. */
function principal(userId: string): Principal {
  const found = findPrincipal(directory, userId);
  if (found === undefined) throw new Error(`dev principal ${userId} missing`);
  return found;
}

function note(overrides: Partial<Note> & Pick<Note, "note_id">): Note {
  return {
    source_id: "xx101/lecture-01",
    course: overrides.note_id.split(".")[0] ?? "",
    title: "Untitled",
    page: 1,
    released: true,
    text: "Placeholder text.",
    ...overrides,
  };
}

describe("shipped corpus", () => {
  it("validates and has the required size and shape", () => {
    expect(corpus.version).toBe(1);
    expect(corpus.notes.length).toBeGreaterThanOrEqual(45);
    expect(new Set(corpus.notes.map((entry) => entry.course))).toEqual(new Set(["cs301", "db201", "ph110"]));
    expect(corpus.notes.filter((entry) => !entry.released).length).toBeGreaterThanOrEqual(2);
  });

  it("has an unreleased cs301 note about attention and an unreleased db201 note", () => {
    const unreleased = corpus.notes.filter((entry) => !entry.released);
    expect(unreleased.some((entry) => entry.course === "cs301" && /attention/i.test(entry.text))).toBe(true);
    expect(unreleased.some((entry) => entry.course === "db201")).toBe(true);
  });

  it("covers attention and retrieval in cs301", () => {
    const ids = corpus.notes.map((entry) => entry.note_id);
    for (const id of [
      "cs301.self-attention",
      "cs301.cross-attention",
      "cs301.multi-head-attention",
      "cs301.scaled-dot-product-attention",
      "cs301.positional-encoding",
      "cs301.encoder-decoder-attention",
      "cs301.dense-retrieval",
      "cs301.bm25",
      "cs301.retrieval-augmented-generation",
      "cs301.reranking",
    ]) {
      expect(ids).toContain(id);
    }
  });

  it("never mentions attention in db201", () => {
    for (const entry of corpus.notes.filter((candidate) => candidate.course === "db201")) {
      expect(`${entry.title} ${entry.text}`.toLowerCase()).not.toMatch(/attention/);
    }
  });

  it("keeps each note substantive (2–5 sentences)", () => {
    for (const entry of corpus.notes) {
      const sentences = entry.text.split(/(?<=[.!?])\s+(?=[A-Z0-9])/).length;
      expect(sentences, entry.note_id).toBeGreaterThanOrEqual(2);
      expect(sentences, entry.note_id).toBeLessThanOrEqual(5);
    }
  });
});

describe("parseCorpus", () => {
  const valid = { version: 1, notes: [note({ note_id: "xx101.one" })] };

  it("accepts a minimal corpus", () => {
    expect(parseCorpus(valid).notes).toHaveLength(1);
  });

  it("rejects duplicate note ids", () => {
    expect(() =>
      parseCorpus({ version: 1, notes: [note({ note_id: "xx101.one" }), note({ note_id: "xx101.one" })] }),
    ).toThrow(/duplicate/);
  });

  it("rejects a course that disagrees with the note id", () => {
    expect(() => parseCorpus({ version: 1, notes: [note({ note_id: "xx101.one", course: "yy202" })] })).toThrow(
      /course/,
    );
  });

  it("rejects bad pages, bad ids and unknown keys", () => {
    expect(() => parseCorpus({ version: 1, notes: [note({ note_id: "xx101.one", page: 0 })] })).toThrow();
    expect(() => parseCorpus({ version: 1, notes: [note({ note_id: "XX101.One" })] })).toThrow();
    expect(() => parseCorpus({ version: 1, notes: [{ ...note({ note_id: "xx101.one" }), extra: true }] })).toThrow();
  });
});

describe("parsePrincipalDirectory", () => {
  it("drops unknown keys but keeps required ones", () => {
    const alice = principal("alice");
    expect(alice).toEqual({
      user_id: "alice",
      tenant: "uni",
      role: "student",
      scopes: ["notes:read", "calendar:read", "calendar:write"],
      courses: ["cs301"],
    });
  });

  it("rejects principals missing required fields", () => {
    expect(() => parsePrincipalDirectory({ principals: [{ user_id: "x", tenant: "uni", role: "student" }] })).toThrow();
  });

  it("rejects duplicate user ids", () => {
    const entry = { user_id: "x", tenant: "uni", role: "student", scopes: [], courses: [] };
    expect(() => parsePrincipalDirectory({ principals: [entry, entry] })).toThrow(/duplicate/);
  });
});

describe("access rule", () => {
  const released = note({ note_id: "cs301.a", released: true });
  const unreleased = note({ note_id: "cs301.b", released: false });

  it("requires a known principal enrolled in the course", () => {
    expect(canRead(undefined, released)).toBe(false);
    expect(canRead(principal("bob"), released)).toBe(false);
    expect(canRead(principal("alice"), released)).toBe(true);
  });

  it("hides unreleased notes unless the caller holds notes:read_unreleased", () => {
    expect(canRead(principal("alice"), unreleased)).toBe(false);
    expect(canRead(principal("rita"), unreleased)).toBe(false);
    expect(canRead(principal("sam"), unreleased)).toBe(true);
  });
});

describe("tokenize", () => {
  it("lowercases, drops stop words, stems, and keeps hyphenated words joined and split into parts", () => {
    expect(tokenize("Compare Self-Attention with the keys")).toEqual(["compar", "selfattent", "self", "attent", "kei"]);
  });

  it("stems derived forms to one term and keeps words with digits or underscores whole", () => {
    expect(tokenize("normalization normalized normal")).toEqual(["normal", "normal", "normal"]);
    expect(tokenize("queries query classes 3NF d_k")).toEqual(["queri", "queri", "class", "3nf", "d_k"]);
    expect(tokenize("mini-batch minibatches")).toEqual(["minibatch", "mini", "batch", "minibatch"]);
  });

  it("returns nothing for stop words only", () => {
    expect(tokenize("the and of with")).toEqual([]);
  });
});

describe("searchNotes", () => {
  it("returns only cs301 notes to alice, attention notes first", () => {
    const result = searchNotes(index, principal("alice"), { query: ATTENTION_QUERY, limit: 10 });
    expect(result.hits.length).toBeGreaterThanOrEqual(3);
    expect(result.hits.every((hit) => hit.course === "cs301")).toBe(true);
    for (const hit of result.hits.slice(0, 3)) expect(hit.note_id).toMatch(/attention/);
    expect(
      result.hits
        .map((hit) => hit.note_id)
        .slice(0, 3)
        .sort(),
    ).toEqual(["cs301.cross-attention", "cs301.encoder-decoder-attention", "cs301.self-attention"]);
  });

  it("returns nothing to bob (db201 only)", () => {
    expect(searchNotes(index, principal("bob"), { query: ATTENTION_QUERY, limit: 20 })).toEqual({ hits: [], total: 0 });
  });

  it("returns nothing to an unknown user", () => {
    expect(searchNotes(index, findPrincipal(directory, "mallory"), { query: ATTENTION_QUERY, limit: 20 })).toEqual({
      hits: [],
      total: 0,
    });
  });

  it("orders hits by score and reports total before the limit", () => {
    const full = searchNotes(index, principal("alice"), { query: ATTENTION_QUERY, limit: 20 });
    const limited = searchNotes(index, principal("alice"), { query: ATTENTION_QUERY, limit: 2 });
    expect(limited.hits).toEqual(full.hits.slice(0, 2));
    expect(limited.total).toBe(full.total);
    expect(full.total).toBeGreaterThan(2);
    for (const hit of full.hits) expect(hit.score).toBeGreaterThan(0);
    for (let position = 1; position < full.hits.length; position += 1) {
      const previous = full.hits[position - 1];
      const current = full.hits[position];
      if (previous === undefined || current === undefined) throw new Error("unreachable");
      expect(previous.score).toBeGreaterThanOrEqual(current.score);
    }
  });

  it("keeps snippets within the length limit", () => {
    const result = searchNotes(index, principal("sam"), { query: "energy momentum attention index lock", limit: 20 });
    expect(result.hits.length).toBeGreaterThan(0);
    for (const hit of result.hits) {
      expect(hit.snippet.length).toBeLessThanOrEqual(SNIPPET_MAX_LENGTH);
      expect(hit.snippet.length).toBeGreaterThan(0);
    }
  });

  it("filters by course, and an invisible course looks exactly like an empty one", () => {
    const alice = principal("alice");
    const onlyCs = searchNotes(index, alice, { query: ATTENTION_QUERY, limit: 20, course: "cs301" });
    expect(onlyCs).toEqual(searchNotes(index, alice, { query: ATTENTION_QUERY, limit: 20 }));
    const invisible = searchNotes(index, alice, { query: "two-phase locking", limit: 20, course: "db201" });
    const nonexistent = searchNotes(index, alice, { query: "two-phase locking", limit: 20, course: "zz999" });
    expect(invisible).toEqual({ hits: [], total: 0 });
    expect(nonexistent).toEqual(invisible);
  });

  it("never returns unreleased notes to students, whatever the query", () => {
    const unreleased = new Set(corpus.notes.filter((entry) => !entry.released).map((entry) => entry.note_id));
    const students = directory.principals.filter((candidate) => candidate.role === "student");
    expect(students.length).toBeGreaterThan(0);
    for (const student of students) {
      for (const entry of corpus.notes) {
        const result = searchNotes(index, student, { query: `${entry.title} ${entry.text}`.slice(0, 500), limit: 20 });
        for (const hit of result.hits) expect(unreleased.has(hit.note_id)).toBe(false);
      }
    }
  });

  it("lets staff with notes:read_unreleased find unreleased notes", () => {
    const result = searchNotes(index, principal("sam"), { query: ATTENTION_QUERY, limit: 20, course: "cs301" });
    expect(result.hits.map((hit) => hit.note_id)).toContain("cs301.exam-2-solutions");
  });

  it("computes scores from visible notes only, so hidden notes do not shift them", () => {
    const releasedOnly = buildSearchIndex({
      version: corpus.version,
      notes: corpus.notes.filter((entry) => entry.released),
    });
    const query = { query: ATTENTION_QUERY, limit: 20 };
    expect(searchNotes(index, principal("alice"), query)).toEqual(searchNotes(releasedOnly, principal("alice"), query));
  });

  it("breaks score ties by note id, independent of corpus order", () => {
    const text = "Gradient descent steps against the gradient of the loss. It is the workhorse of training.";
    const ids = ["cs301.tie-c", "cs301.tie-a", "cs301.tie-b"];
    const build = (order: readonly string[]): SearchIndex =>
      buildSearchIndex(
        parseCorpus({ version: 1, notes: order.map((id) => note({ note_id: id, title: "Same", text })) }),
      );
    const reader: Principal = { user_id: "tester", tenant: "uni", role: "student", scopes: [], courses: ["cs301"] };
    const forward = searchNotes(build(ids), reader, { query: "gradient descent", limit: 5 });
    const backward = searchNotes(build([...ids].reverse()), reader, { query: "gradient descent", limit: 5 });
    expect(forward.hits.map((hit) => hit.note_id)).toEqual(["cs301.tie-a", "cs301.tie-b", "cs301.tie-c"]);
    expect(new Set(forward.hits.map((hit) => hit.score)).size).toBe(1);
    expect(backward).toEqual(forward);
  });
});

describe("makeSnippet", () => {
  it("returns short text unchanged", () => {
    expect(makeSnippet("Short note.", new Set(["note"]))).toBe("Short note.");
  });

  it("windows long text around the first match within the limit", () => {
    const filler = "Lorem ipsum dolor sit amet consectetur. ".repeat(12);
    const text = `${filler}The keyword appears here. ${filler}`;
    const snippet = makeSnippet(text, new Set(["keyword"]));
    expect(snippet.length).toBeLessThanOrEqual(SNIPPET_MAX_LENGTH);
    expect(snippet).toContain("keyword");
    expect(snippet.startsWith("…")).toBe(true);
    expect(snippet.endsWith("…")).toBe(true);
  });
});

describe("readNote", () => {
  it("returns the note with the corpus version to an enrolled caller", () => {
    const view = readNote(index, principal("alice"), "cs301.self-attention");
    expect(view?.note_id).toBe("cs301.self-attention");
    expect(view?.version).toBe(corpus.version);
    expect(view?.text.length).toBeGreaterThan(0);
  });

  it("treats missing and forbidden notes identically", () => {
    expect(readNote(index, principal("bob"), "cs301.self-attention")).toBeUndefined();
    expect(readNote(index, principal("bob"), "cs301.no-such-note")).toBeUndefined();
    expect(readNote(index, principal("alice"), "cs301.exam-2-solutions")).toBeUndefined();
    expect(readNote(index, principal("sam"), "cs301.exam-2-solutions")?.note_id).toBe("cs301.exam-2-solutions");
  });

  it("has a fixed access-denied payload", () => {
    expect(ACCESS_DENIED_TEXT).toBe('{"code":"access_denied","message":"note not found or not accessible"}');
  });
});

describe("tool input schemas", () => {
  it("default the search limit to 5", () => {
    expect(SearchNotesInputSchema.parse({ user_id: "alice", query: "attention" }).limit).toBe(5);
  });

  it("reject unknown keys, non-integer limits and over-long queries", () => {
    expect(SearchNotesInputSchema.safeParse({ user_id: "alice", query: "x", extra: 1 }).success).toBe(false);
    expect(SearchNotesInputSchema.safeParse({ user_id: "alice", query: "x", limit: true }).success).toBe(false);
    expect(SearchNotesInputSchema.safeParse({ user_id: "alice", query: "x", limit: 2.5 }).success).toBe(false);
    expect(SearchNotesInputSchema.safeParse({ user_id: "alice", query: "x", limit: 21 }).success).toBe(false);
    expect(SearchNotesInputSchema.safeParse({ user_id: "alice", query: "x".repeat(501) }).success).toBe(false);
    expect(SearchNotesInputSchema.safeParse({ user_id: "alice", query: "x", course: "CS301" }).success).toBe(false);
    expect(SearchNotesInputSchema.safeParse({ user_id: "Alice!", query: "x" }).success).toBe(false);
  });

  it("validate note ids for read_note", () => {
    expect(ReadNoteInputSchema.safeParse({ user_id: "bob", note_id: "cs301.self-attention" }).success).toBe(true);
    expect(ReadNoteInputSchema.safeParse({ user_id: "bob", note_id: "../etc/passwd" }).success).toBe(false);
    expect(ReadNoteInputSchema.safeParse({ user_id: "bob", note_id: "cs301.x", extra: "y" }).success).toBe(false);
  });
});
