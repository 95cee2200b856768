/**
 * The rules planner: a deterministic decision tree in code, no model. For the
 * notes domain: search → read the best passages → answer with citations, or
 * abstain saying what it cannot find when there is no evidence (hits of
 * another course than the one asked about, or not on the asked topic, are
 * not evidence: notes/question.ts). A quiz request naming a course uses the course outline the plan
 * node fetched: outline → read the chosen notes → questions citing them, or
 * abstain when there is no outline. Study requests (plans, calendar
 * sessions, divisions between topics) go to the study domain; "read
 * welcome.txt" reads that file when a file server offers `read_text_file`
 * (domains/files). Anything else
 * (an action it has no branch for) ends `needs_human` saying a model planner
 * is needed, never with a sourced-looking answer. It is the default planner
 * when no model is configured and the driver of the control-plane tests.
 */
import { randomUUID } from "node:crypto";
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { Evidence } from "../state/evidence.js";
import type { PlanOutcome, Planner, PlannerInput } from "../planners/planner.js";
import type { Proposal } from "../policy/contracts.js";
import { courseContextOf, isQuizRequest, type CourseContext } from "./notes/course-context.js";
import { CASE_ID, decideCase } from "./caseops/rules.js";
import { decideFileRead, FILE_READER, fileToRead } from "./files/rules.js";
import { cannotFind, type NotesQuestion, notesQuestion, retrieveFor, searchQuery } from "./notes/question.js";
import { searchHits } from "./notes/relevance.js";
import { whatICanDo } from "./repertoire.js";
import { parseStudyRequest } from "./study/parse.js";
import { clockOf, profileOf } from "./study/profile.js";
import { decideStudy, type StudyObservation } from "./study/rules.js";

/** How many of the best search hits are read before answering. */
const READ_TOP = 3;
const SEARCH_LIMIT = 5;
type Observation = StudyObservation;

/** The text the plan node wrapped a tool result in (`<tool_result …>\n{body}\n</tool_result>`), unwrapped. */
function toolBody(content: unknown): string {
  const text = typeof content === "string" ? content : "";
  const match = /^<tool_result[^>]*>\n([\s\S]*)\n<\/tool_result>/.exec(text);
  return match?.[1] ?? text;
}

/** The `{error: {code, message}}` of a failed call, when its body is one. */
function errorOf(content: unknown): { code?: string; message?: string } {
  try {
    const parsed: unknown = JSON.parse(toolBody(content));
    const error = isRecord(parsed) && isRecord(parsed["error"]) ? parsed["error"] : undefined;
    if (!error) return {};
    return {
      ...(typeof error["code"] === "string" ? { code: error["code"] } : {}),
      ...(typeof error["message"] === "string" ? { message: error["message"] } : {}),
    };
  } catch {
    return {};
  }
}

/**
 * Tool results since the newest human message, oldest first, with the arguments each call was proposed with (the
 * fixed workflow reads them too).
 */
export function observationsSinceRequest(messages: readonly BaseMessage[]): Observation[] {
  let first = messages.length;
  while (first > 0 && messages[first - 1]?.getType() !== "human") first -= 1;
  const recent = messages.slice(first);
  const proposed = new Map<string, Record<string, unknown>>();
  for (const message of recent) {
    if (AIMessage.isInstance(message))
      for (const toolCall of message.tool_calls ?? []) if (toolCall.id) proposed.set(toolCall.id, toolCall.args);
  }
  return recent
    .filter((message): message is ToolMessage => ToolMessage.isInstance(message))
    .map((message) => {
      const ok = message.status !== "error";
      return {
        tool: message.name ?? "",
        ok,
        structured: message.artifact,
        ...(ok ? {} : errorOf(message.content)),
        args: proposed.get(message.tool_call_id),
      };
    });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function readIds(observations: readonly Observation[]): Set<string> {
  return new Set(
    observations.flatMap((observation) =>
      observation.tool === "read_note" &&
      isRecord(observation.structured) &&
      typeof observation.structured["note_id"] === "string"
        ? [observation.structured["note_id"]]
        : [],
    ),
  );
}

function call(name: string, args: Record<string, unknown>): Proposal {
  return { call_id: `call_${randomUUID().replace(/-/g, "").slice(0, 20)}`, name, raw_arguments: JSON.stringify(args) };
}

function firstSentences(text: string, count = 2): string {
  const sentences = text.match(/[^.!?]+[.!?]+/g) ?? [text];
  return sentences.slice(0, count).join(" ").trim();
}

function answerFrom(evidence: readonly Evidence[]): PlanOutcome {
  const lines = evidence.map(
    (item, index) => `- ${item.title ?? item.item_id}: ${firstSentences(item.excerpt)} [${index + 1}]`,
  );
  return {
    type: "final",
    answer: `From your notes:\n${lines.join("\n")}`,
    citations: evidence.map((item) => item.ref),
    abstained: false,
  };
}

const ABSTAIN: PlanOutcome = {
  type: "final",
  answer: "I could not find anything in the notes you can access that answers this, so I will not guess.",
  citations: [],
  abstained: true,
};

/** How many notes a quiz is built from (one question each). */
export const QUIZ_NOTES = 3;

/**
 * The notes a quiz reads, from the outline: those whose titles share a word
 * with the request (a topic such as "attention"), else notes spread evenly
 * over the course; at most {@link QUIZ_NOTES}, in outline order.
 */
export function quizNotes(outline: NonNullable<CourseContext["outline"]>, request: string, course: string): string[] {
  const words = new Set(
    searchQuery(request)
      .split(" ")
      .filter((word) => word.length > 2 && word !== course && !QUIZ_FILLER.has(word)),
  );
  const topical = outline.notes.filter((note) =>
    note.title
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .some((word) => words.has(word) || words.has(word.replace(/s$/, ""))),
  );
  if (topical.length > 0) return topical.slice(0, QUIZ_NOTES).map((note) => note.note_id);
  const count = Math.min(QUIZ_NOTES, outline.notes.length);
  return Array.from(
    { length: count },
    (_, index) => outline.notes[Math.floor((index * outline.notes.length) / count)]?.note_id ?? "",
  ).filter((id) => id !== "");
}
const QUIZ_FILLER = new Set([
  "quiz",
  "quizzes",
  "make",
  "create",
  "write",
  "give",
  "generate",
  "questions",
  "question",
  "course",
  "short",
  "some",
]);

/** The questions first, the answers after all of them, so reading a question does not show its answer. */
function quizFrom(evidence: readonly Evidence[], course: string): PlanOutcome {
  const questions = evidence.map(
    (item, index) => `${index + 1}. ${item.title ?? item.item_id}: what do your notes say about it? [${index + 1}]`,
  );
  const answers = evidence.map((item, index) => `${index + 1}. ${firstSentences(item.excerpt, 1)} [${index + 1}]`);
  return {
    type: "final",
    answer: `Quiz from your ${course} notes:\n${questions.join("\n")}\n\nAnswers (after you have tried):\n${answers.join("\n")}`,
    citations: evidence.map((item) => item.ref),
    abstained: false,
  };
}

/**
 * A quiz over a course: the outline chooses the notes, `read_note` reads
 * them (authorized and recorded like any call), and the questions cite what
 * was read. No outline (not enrolled, or the server refused) means no quiz.
 */
function decideQuiz(
  context: CourseContext,
  input: PlannerInput,
  observations: readonly Observation[],
  offered: ReadonlySet<string>,
): PlanOutcome {
  if (context.outline === null) return ABSTAIN;
  const chosen = quizNotes(context.outline, input.request, context.course);
  const attempted = observations.some((observation) => observation.tool === "read_note");
  if (!attempted && chosen.length > 0) {
    if (!offered.has("read_note"))
      return { type: "needs_human", reason: "no tool that can read the notes is available to you" };
    return { type: "tool_calls", calls: chosen.map((noteId) => call("read_note", { note_id: noteId })) };
  }
  const supporting = chosen.flatMap((id) => input.evidence.filter((item) => item.item_id === id));
  return supporting.length > 0 ? quizFrom(supporting, context.course) : ABSTAIN;
}

/** What a request needs when it asks for something the rules planner has no branch for. */
export const NEEDS_MODEL =
  "outside_repertoire: this request needs a model planner (set WARRANT_MODEL and an OpenAI-compatible endpoint)";

/** A request the rules planner would answer from the notes, when no notes search is offered (e.g. only other servers are configured). */
export const NO_NOTES_SEARCH =
  "outside_repertoire: the rules planner answers questions from the notes, reads a file you name (read " +
  "welcome.txt), plans study time and checks cases; no tool that can search the notes is available to you, " +
  "so this request needs a model planner (set WARRANT_MODEL and an OpenAI-compatible endpoint)";

/** Polite openings that do not change what is asked ("please", "can you", "I want you to"). */
const POLITE = new RegExp(
  [
    "^(?:",
    "(?:please|kindly|hey|hi|ok|okay)[\\s,]+",
    "|(?:can|could|would|will)\\s+you\\s+(?:please\\s+)?",
    "|i\\s+(?:want|need|would\\s+like|'d\\s+like)\\s+(?:you\\s+)?to\\s+",
    "|help\\s+me\\s+",
    ")+",
  ].join(""),
  "i",
);
/** Verbs asking for an effect or an artefact the rules planner cannot produce (ACTION's alternatives). */
const ACTION_VERBS = [
  "send",
  "e-?mail",
  "mail",
  "message",
  "text",
  "call",
  "delete",
  "remove",
  "erase",
  "cancel",
  "move",
  "rename",
  "reschedule",
  "save",
  "store",
  "write",
  "create",
  "generate",
  "draw",
  "update",
  "edit",
  "change",
  "modify",
  "upload",
  "download",
  "post",
  "publish",
  "share",
  "forward",
  "reply",
  "buy",
  "order",
  "pay",
  "book",
  "remind",
  "notify",
  "invite",
  "translate",
  "implement",
  "code",
  "program",
  "install",
  "run",
  "execute",
  "deploy",
  "open",
  "close",
  "print",
  "export",
  "import",
  "sign",
  "submit",
  "register",
  "enrol",
  "enroll",
  "grade",
  "mark",
];
const ACTION = new RegExp(`^(?:${ACTION_VERBS.join("|")})\\b`, "i");
/** Things the rules planner does not handle anywhere in a request: calendars (other than the study branch), mail, reminders, files. */
const OUT_OF_SCOPE =
  /\b(?:calendars?|e-?mails?|inbox|reminders?)\b|\b[\w-]+\.(?:txt|md|pdf|docx?|csv|json|ics|xlsx?|pptx?)\b/i;

/** A request for study time the parser could not read ("plan my revision"): a verb that schedules, and no question word. */
const STUDY_ASK =
  /^(?:plan|schedule|book|block|organi[sz]e|arrange|timetable|split|spread|divide)\b|\b(?:study|revision)\s+(?:plan|schedule|session)s?\b/i;

/** Verbs that make a quiz: "create a quiz" is a quiz request, "publish my quiz" is not. */
const QUIZ_MAKING = /^(?:make|create|write|give|generate)\b/i;

/** Whether a request asks for an action other than making something the rules planner makes. */
function asksAnotherAction(request: string): boolean {
  const asked = request.trim().replace(POLITE, "");
  return ACTION.test(asked) && !QUIZ_MAKING.test(asked);
}

/** Whether a request is outside what the rules planner does (notes questions, quizzes, study plans, cases). */
export function outsideRepertoire(request: string): boolean {
  const asked = request.trim().replace(POLITE, "");
  return ACTION.test(asked) || OUT_OF_SCOPE.test(request);
}

/** A request that says it is about the notes ("my notes", "the note on …"). */
const ABOUT_NOTES = /\bnotes?\b/i;

/**
 * The refusal when nothing in the notes supports a request. A request that
 * names neither the notes nor a course ("what's the weather tomorrow?",
 * "set a timer") was likely no notes question at all: the refusal then also
 * says what the planner can do, with examples for the user's courses.
 */
function notFound(
  question: NotesQuestion,
  request: string,
  canDo: string,
  closest?: readonly { note_id: string; title: string }[],
): PlanOutcome {
  const refusal = cannotFind(question, closest);
  if (question.course !== undefined || ABOUT_NOTES.test(request)) return refusal;
  return { ...refusal, answer: `${refusal.answer} ${canDo}` };
}

/** The fixed decision tree. Exported for tests; `createRulesPlanner` wraps it. */
export function decide(input: PlannerInput): PlanOutcome {
  const offered = new Set(input.tools.map((tool) => tool.name));
  const observations = observationsSinceRequest(input.messages);
  const caseId = CASE_ID.exec(input.request)?.[0];
  if (caseId && offered.has("get_case_snapshot")) return decideCase(caseId, observations, input.evidence, call);
  const profile = profileOf(input.context);
  const canDo = whatICanDo(profile?.courses ?? []);
  const study = parseStudyRequest(input.request, clockOf(profile));
  if (study.type === "needs_human") return { type: "needs_human", reason: study.reason };
  if (study.type === "request") return decideStudy(study.request, input.tools, input.evidence, observations, call);
  const course = courseContextOf(input.context);
  if (course) return decideQuiz(course, input, observations, offered);
  if (isQuizRequest(input.request) && !asksAnotherAction(input.request))
    return {
      type: "needs_human",
      reason: 'missing_course: which course should the quiz be from? e.g. "a quiz from my cs301 notes"',
    };
  const file = offered.has(FILE_READER) ? fileToRead(input.request) : undefined;
  if (file !== undefined) return decideFileRead(file, observations, call);
  if (outsideRepertoire(input.request)) return { type: "needs_human", reason: `${NEEDS_MODEL}. ${canDo}` };
  if (STUDY_ASK.test(input.request.trim().replace(POLITE, "")))
    return {
      type: "needs_human",
      reason: `unclear_request: I could not read how long or when to study from this. ${canDo}`,
    };
  const searches = observations.filter((observation) => observation.tool === "search_notes");
  const question = notesQuestion(input.request);
  if (searches.length === 0) {
    // Without a notes search the rules planner has nothing to answer from: say what would, not only what is missing.
    if (!offered.has("search_notes")) return { type: "needs_human", reason: NO_NOTES_SEARCH };
    return { type: "tool_calls", calls: [call("search_notes", { query: question.query, limit: SEARCH_LIMIT })] };
  }
  // Only hits of the named course whose calibrated score clears the threshold are evidence; none → say so, naming the closest.
  const retrieval = retrieveFor(
    question,
    searches.flatMap((search) => (search.ok ? searchHits(search.structured) : [])),
    READ_TOP,
    input.request,
  );
  if (retrieval.type === "abstain") return notFound(question, input.request, canDo, retrieval.closest);
  const best = retrieval.note_ids;
  const attempted = observations.filter((observation) => observation.tool === "read_note").length;
  const read = readIds(observations);
  const unread = best.filter((id) => !read.has(id));
  if (attempted === 0 && unread.length > 0 && offered.has("read_note")) {
    return { type: "tool_calls", calls: unread.map((noteId) => call("read_note", { note_id: noteId })) };
  }
  const supporting = best.flatMap((id) => input.evidence.filter((item) => item.item_id === id));
  return supporting.length > 0 ? answerFrom(supporting) : notFound(question, input.request, canDo);
}

export function createRulesPlanner(): Planner {
  return {
    kind: "rules",
    plan: async (input) => ({ outcome: decide(input), usage: { input_tokens: 0, output_tokens: 0 } }),
  };
}
