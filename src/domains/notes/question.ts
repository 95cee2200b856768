/**
 * A notes question as both the rules planner and the fixed workflow read it:
 * the search query (the request without filler words), the course it names
 * ("my db201 notes"), if any, and which search hits are evidence for it. A
 * question about a course is answered only from that course's notes, and
 * only from hits on the asked topic (relevance.ts); when none is left the
 * honest answer says what cannot be found, with no citations, rather than
 * answering from unrelated notes. Pure.
 */
import type { PlanOutcome } from "../../planners/planner.js";
import { namedCourses } from "./course-context.js";
import { contentTerms, isOnTopic, type Hit } from "./relevance.js";
import { clearsThreshold, cutoffsFor, retrieve, type Retrieval } from "./retrieval.js";

const FILLER = new Set(
  (
    "a an and are about between compare comparing contrast difference differences do does explain for from " +
    "how i in is it me my notes note of on or please say says said show summarize tell the to use using what " +
    "when which why with"
  ).split(" "),
);
/** A note named in a refusal: its title (cut) and id. */
const notePhrase = (note: { title: string; note_id: string }): string =>
  `"${note.title.slice(0, MAX_TOPIC_CHARS)}" (${note.note_id})`;

/** Longest topic echoed back in a refusal. */
const MAX_TOPIC_CHARS = 120;

/**
 * Words of a request, formulas kept: "mu_s", "x+" and the arrow of "X -> Y"
 * survive (the notes server reads them as terms), other symbols separate words.
 */
const QUERY_WORD = /->|[a-z0-9]+(?:[-_][a-z0-9]+)*\+?/g;

/** A one-letter word that is a formula's variable ("m v squared"): any letter but the words "a" and "i". */
const VARIABLE = /^[b-hj-z]$/;
/** A contraction's or possessive's ending ("what's", "doesn't"): no word of its own. */
const CONTRACTION = /['\u2019][a-z]+\b/g;

/** The request without filler words, as a search query; a formula's one-letter variables are kept. */
export function searchQuery(request: string): string {
  const words = (request.toLowerCase().replace(CONTRACTION, "").match(QUERY_WORD) ?? []).filter(
    (word) => (word.length > 1 || VARIABLE.test(word)) && !FILLER.has(word),
  );
  return (words.length > 0 ? words.join(" ") : request.trim()).slice(0, 500);
}

export interface NotesQuestion {
  /** What is sent to `search_notes`. */
  query: string;
  /** The course the request names, lower-cased; its notes are the only evidence then. */
  course: string | undefined;
  /** The asked topic: the query without the course code; hits must be on it. */
  topic: string;
}

export function notesQuestion(request: string): NotesQuestion {
  const query = searchQuery(request);
  const [course] = namedCourses(request);
  const topic =
    course === undefined
      ? query
      : query
          .split(" ")
          .filter((word) => word !== course)
          .join(" ");
  return { query, course, topic };
}

/** Whether a note is of the course the question names (any course when it names none). */
export function inCourse(question: NotesQuestion, hit: Hit): boolean {
  return question.course === undefined || hit.note_id.startsWith(`${question.course}.`);
}

/**
 * Whether a note (a hit, or a passage read) is evidence for the question: of
 * the named course, and on the asked topic. A hit the notes server scored is
 * on topic when its calibrated score reaches the threshold (retrieval.ts);
 * one without a score (another server, a passage) falls back to the word
 * floor of relevance.ts.
 */
export function supports(question: NotesQuestion, hit: Hit): boolean {
  if (!inCourse(question, hit)) return false;
  if (hit.score !== undefined) return clearsThreshold(hit.score);
  return isOnTopic(hit, contentTerms(question.topic));
}

/**
 * The notes to read for a question, from its search hits, or the closest ones
 * when none is on topic. `request` (the words as asked) tells a comparison,
 * whose sides are each read.
 */
export function retrieveFor(question: NotesQuestion, hits: readonly Hit[], limit: number, request = ""): Retrieval {
  return retrieve(
    hits,
    (hit) => inCourse(question, hit),
    (hit) => isOnTopic(hit, contentTerms(question.topic)),
    limit,
    cutoffsFor(request),
  );
}

/**
 * The refusal when nothing supports the question: it names what cannot be
 * found, and the closest notes the student can read when some fell just
 * short (so they can rephrase); it cites nothing and abstains.
 */
export function cannotFind(
  question: NotesQuestion,
  closest: readonly { note_id: string; title: string }[] = [],
): Extract<PlanOutcome, { type: "final" }> {
  const topic = question.topic.slice(0, MAX_TOPIC_CHARS);
  const where = question.course === undefined ? "" : ` in ${question.course}`;
  const near =
    closest.length === 0
      ? ""
      : ` The closest notes I can read are ${closest.map(notePhrase).join(", ")}; ask about one of them if that is what you meant.`;
  return {
    type: "final",
    answer: `I can't find notes on "${topic}"${where} that you can read, so I won't answer from unrelated notes.${near}`,
    citations: [],
    abstained: true,
  };
}
