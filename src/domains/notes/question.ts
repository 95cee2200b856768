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

const FILLER = new Set(
  "a an and are about between compare comparing contrast difference differences do does explain for from how i in is it me my notes note of on or please say says said show summarize tell the to use using what when which why with".split(
    " ",
  ),
);
/** Longest topic echoed back in a refusal. */
const MAX_TOPIC_CHARS = 120;

/** The request without filler words, as a search query. */
export function searchQuery(request: string): string {
  const words = request
    .toLowerCase()
    .split(/[^a-z0-9-]+/)
    .filter((word) => word.length > 1 && !FILLER.has(word));
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

/** Whether a note (a hit, or a passage read) is evidence for the question: of the named course, and on the asked topic. */
export function supports(question: NotesQuestion, hit: Hit): boolean {
  if (question.course !== undefined && !hit.note_id.startsWith(`${question.course}.`)) return false;
  return isOnTopic(hit, contentTerms(question.topic));
}

/** The refusal when nothing supports the question: it names what cannot be found, cites nothing and abstains. */
export function cannotFind(question: NotesQuestion): Extract<PlanOutcome, { type: "final" }> {
  const topic = question.topic.slice(0, MAX_TOPIC_CHARS);
  const where = question.course === undefined ? "" : ` in ${question.course}`;
  return {
    type: "final",
    answer: `I can't find notes on "${topic}"${where} that you can read, so I won't answer from unrelated notes.`,
    citations: [],
    abstained: true,
  };
}
