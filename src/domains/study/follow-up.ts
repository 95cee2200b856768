/**
 * Follow-ups to a study request that lacked facts. When a run ends
 * `needs_human` asking for a start (date, time, zone) or a duration, the
 * provider records which facts are missing (`state.pending`, through the
 * control plane's follow-up seam); the thread's next message is then read
 * for those facts first. A message that supplies at least one of them is an
 * answer: the facts it states are put before the original request, so they
 * win over what it said, and the merged text is parsed again (a plan and its
 * review cards, or the question for what is still missing). A message that
 * supplies none, or is a study request of its own, is a new request. Pure.
 */
import { z } from "zod";
import type { ContextProvider } from "../../ports.js";
import type { PendingQuestion } from "../../state/domain-context.js";
import { takeDuration } from "./amounts.js";
import { parseStudyRequest, type StudyFact } from "./parse.js";
import { Scanner } from "./scanner.js";
import { readStart } from "./start.js";

/** The provider's name: the key its pending questions carry. */
export const STUDY_FOLLOW_UP = "study.follow_up";

/** Longer messages are not read as an answer (an answer states a fact or two). */
const MAX_ANSWER_CHARS = 400;

const Fact = z.enum(["start_date", "start_time", "time_zone", "duration"]);
/** A pending question as this domain recorded it; anything else in state is not ours to read. */
const Pending = z.object({ request: z.string().min(1).max(4000), missing: z.array(Fact).min(1) });

/** The facts a study request lacks, when its parse asked for some. */
export function missingFacts(request: string): StudyFact[] {
  const parse = parseStudyRequest(request);
  return parse.type === "needs_human" ? (parse.missing ?? []) : [];
}

/** The facts `message` states and the text that states them (the rest of the message is dropped). */
export function factsIn(message: string): { facts: Set<StudyFact>; text: string } {
  const scanner = new Scanner(message);
  const before = scanner.rest;
  const start = readStart(scanner);
  const duration = takeDuration(scanner);
  const facts = new Set<StudyFact>();
  if (start.date || start.invalid || start.relativeDay) facts.add("start_date");
  if (start.time) facts.add("start_time");
  if (start.zone) facts.add("time_zone");
  if (duration) facts.add("duration");
  // What the readers consumed, in order: the stated facts without the words around them.
  const after = scanner.rest;
  const kept = [...before].map((char, index) => (after[index] === char ? " " : char)).join("");
  return { facts, text: kept.replace(/\s+/g, " ").replace(/;/g, "").trim() };
}

/** The completed request when `message` answers the pending question, else undefined (a new request). */
export function readStudyAnswer(pending: PendingQuestion, message: string): string | undefined {
  const recorded = Pending.safeParse(pending);
  if (!recorded.success || message.length > MAX_ANSWER_CHARS) return undefined;
  const alone = parseStudyRequest(message);
  // A study request of its own (it says how long) starts afresh; so does a complete one.
  if (alone.type === "request") return undefined;
  const { facts, text } = factsIn(message);
  const missing = new Set<StudyFact>(recorded.data.missing);
  if (facts.has("duration") && !missing.has("duration")) return undefined;
  if (![...facts].some((fact) => missing.has(fact))) return undefined;
  const request = recorded.data.request.trim().replace(/[.!?\s]+$/, "");
  return `${text}. ${request}.`;
}

export const studyFollowUpProvider: ContextProvider = {
  name: STUDY_FOLLOW_UP,
  // Nothing to read at a run's start: this provider only keeps questions.
  load: async () => undefined,
  pendingQuestion: ({ request }) => {
    const missing = missingFacts(request);
    return missing.length > 0 ? { request, missing } : undefined;
  },
  readAnswer: readStudyAnswer,
};
