/**
 * The relevance floor for search hits: a hit is evidence only when its title
 * or excerpt shares a content word with the query. BM25 also scores words
 * such as "add" or "minute", which say how to ask, not what about; a hit that
 * matched only on those is not evidence ("Add a study session to my calendar"
 * must not be answered from a note on L2 regularization because it "adds"
 * a penalty). Pure.
 */

/** A search hit as the notes server returns it (only what the floor needs). */
export interface Hit {
  note_id: string;
  title: string;
  snippet: string;
  /** The server's calibrated relevance (0–1, tools/notes/search.ts), when it sent one. */
  score?: number;
}

/**
 * Words that never make a hit relevant: function words (the notes server's
 * own list, roughly) and the vocabulary of asking, planning and scheduling.
 */
const NOT_CONTENT = new Set(
  (
    "a about above add after again against all also am an and any are as ask at be because been before " +
    "being below between both but by can could " +
    "compare comparing contrast did difference differences do does doing down during each either else " +
    "explain few find for from further had has have having " +
    "he her here hers him his how i if in into is it its itself just look may me might more most must my " +
    "no nor not note notes now of off on once one only " +
    "or other our out over own please put said same say says search she should show so some such summarize " +
    "summarise tell than that the their them then there these they " +
    "this those through to too under until up us use using very was we were what when where which while " +
    "who whom why will with would you your " +
    "calendar calendars day days daily hour hours minute minutes min mins session sessions schedule plan " +
    "study studying time week weeks start starting " +
    "block book create make give write quiz questions question course"
  ).split(" "),
);

const WORD = /[a-z0-9]+(?:-[a-z0-9]+)*/g;

/** Folds simple plurals the way the notes server does, so "keys" meets "key". */
export function fold(word: string): string {
  if (word.length <= 3) return word;
  if (word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.endsWith("sses")) return word.slice(0, -2);
  if (word.endsWith("s") && !/(?:ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

function terms(text: string): string[] {
  const result: string[] = [];
  for (const match of text
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .matchAll(WORD)) {
    const word = match[0];
    for (const part of word.includes("-") ? [word, ...word.split("-")] : [word]) result.push(fold(part));
  }
  return result;
}

/** The content terms of a query: words (and parts of hyphenated words), plurals folded, asking vocabulary removed. */
export function contentTerms(query: string): Set<string> {
  return new Set(terms(query).filter((term) => term.length > 1 && !NOT_CONTENT.has(term) && !/^\d+$/.test(term)));
}

/** Whether a hit's title or excerpt shares a content term with the query. */
export function isRelevant(hit: Hit, queryTerms: ReadonlySet<string>): boolean {
  return terms(`${hit.title} ${hit.snippet}`).some((term) => queryTerms.has(term));
}

/**
 * The query's words as sets of terms that must all be present: a plain word
 * is itself; a hyphenated one ("cross-attention") is its content parts, so
 * "Cross-entropy loss" does not name it and "cross attention" does.
 */
function queryWords(queryTerms: ReadonlySet<string>): string[][] {
  const compounds = [...queryTerms].filter((term) => term.includes("-"));
  const parts = new Set(compounds.flatMap((term) => term.split("-")));
  const plain = [...queryTerms].filter((term) => !term.includes("-") && !parts.has(term)).map((term) => [term]);
  const hyphenated = compounds.map((term) => {
    const content = term.split("-").filter((part) => queryTerms.has(part));
    return content.length > 0 ? content : [term];
  });
  return [...plain, ...hyphenated];
}

/**
 * Whether a hit is on the asked topic, not just touching it: its title names
 * one of the question's words (a note is about what its title says), or its
 * text contains every one of them. A note that shares one word of a longer
 * question in passing ("worked examples" for "exam 2 worked solutions") is
 * not evidence for it.
 */
export function isOnTopic(hit: Hit, queryTerms: ReadonlySet<string>): boolean {
  const words = queryWords(queryTerms);
  if (words.length === 0) return false;
  const inTitle = new Set(terms(hit.title));
  if (words.some((word) => word.every((term) => inTitle.has(term)))) return true;
  const inText = new Set(terms(`${hit.title} ${hit.snippet}`));
  return words.every((word) => word.every((term) => inText.has(term)));
}

/** The words of a phrase as a space-joined, plural-folded sequence ("Self-Attention" → "self attention"). */
function phraseForm(text: string): string {
  return ` ${(
    text
      .normalize("NFKD")
      .replace(/\p{M}+/gu, "")
      .toLowerCase()
      .match(/[a-z0-9]+/g) ?? []
  )
    .map(fold)
    .join(" ")} `;
}

/** Whether the text contains the whole phrase, hyphens and plurals aside ("cross-attention" in "Cross attention layers"). */
export function mentions(text: string, phrase: string): boolean {
  const wanted = phraseForm(phrase);
  return wanted.trim().length > 0 && phraseForm(text).includes(wanted);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The hits of a `search_notes` result, best first; malformed entries are skipped. */
export function searchHits(structured: unknown): Hit[] {
  if (!isRecord(structured) || !Array.isArray(structured["hits"])) return [];
  return structured["hits"].flatMap((hit) =>
    isRecord(hit) && typeof hit["note_id"] === "string"
      ? [
          {
            note_id: hit["note_id"],
            title: typeof hit["title"] === "string" ? hit["title"] : "",
            snippet: typeof hit["snippet"] === "string" ? hit["snippet"] : "",
            ...(typeof hit["score"] === "number" && Number.isFinite(hit["score"]) ? { score: hit["score"] } : {}),
          },
        ]
      : [],
  );
}
