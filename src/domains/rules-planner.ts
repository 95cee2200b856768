/**
 * The rules planner: a deterministic decision tree in code, no model. For the
 * notes domain: search → read the best passages → answer with citations, or
 * abstain when there is no evidence. A quiz request naming a course uses the
 * course outline the plan node fetched: outline → read the chosen notes →
 * questions citing them, or abstain when there is no outline. It is the default planner when no model
 * is configured and the driver of the control-plane tests.
 */
import { randomUUID } from "node:crypto";
import { ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { Evidence } from "../runtime/evidence.js";
import type { PlanOutcome, Planner, PlannerInput, Proposal } from "../planners/planner.js";
import { courseContextOf, type CourseContext } from "./notes/course-context.js";
import { CASE_ID, decideCase } from "./caseops/rules.js";

/** How many of the best search hits are read before answering. */
const READ_TOP = 3;
const SEARCH_LIMIT = 5;
const FILLER = new Set(
  "a an and are about between compare comparing contrast difference differences do does explain for from how i in is it me my notes note of on or please summarize tell the to use using what when which why with".split(" "),
);

interface Observation {
  tool: string;
  ok: boolean;
  structured: unknown;
}

/** Tool results since the newest human message, oldest first. */
function observationsSinceRequest(messages: readonly BaseMessage[]): Observation[] {
  const result: Observation[] = [];
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (!message || message.getType() === "human") break;
    if (ToolMessage.isInstance(message)) {
      result.unshift({ tool: message.name ?? "", ok: message.status !== "error", structured: message.artifact });
    }
  }
  return result;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Note ids of search hits, best first. */
function hitIds(structured: unknown): string[] {
  if (!isRecord(structured) || !Array.isArray(structured["hits"])) return [];
  return structured["hits"].flatMap((hit) => (isRecord(hit) && typeof hit["note_id"] === "string" ? [hit["note_id"]] : []));
}

function readIds(observations: readonly Observation[]): Set<string> {
  return new Set(
    observations.flatMap((observation) =>
      observation.tool === "read_note" && isRecord(observation.structured) && typeof observation.structured["note_id"] === "string"
        ? [observation.structured["note_id"]]
        : [],
    ),
  );
}

/** The request without filler words, as a search query. */
export function searchQuery(request: string): string {
  const words = request
    .toLowerCase()
    .split(/[^a-z0-9-]+/)
    .filter((word) => word.length > 1 && !FILLER.has(word));
  return (words.length > 0 ? words.join(" ") : request.trim()).slice(0, 500);
}

function call(name: string, args: Record<string, unknown>): Proposal {
  return { call_id: `call_${randomUUID().replace(/-/g, "").slice(0, 20)}`, name, raw_arguments: JSON.stringify(args) };
}

function firstSentences(text: string, count = 2): string {
  const sentences = text.match(/[^.!?]+[.!?]+/g) ?? [text];
  return sentences.slice(0, count).join(" ").trim();
}

function answerFrom(evidence: readonly Evidence[]): PlanOutcome {
  const lines = evidence.map((item, index) => `- ${item.title ?? item.item_id}: ${firstSentences(item.excerpt)} [${index + 1}]`);
  return { type: "final", answer: `From your notes:\n${lines.join("\n")}`, citations: evidence.map((item) => item.ref), abstained: false };
}

const ABSTAIN: PlanOutcome = {
  type: "final",
  answer: "I could not find anything in the notes you can access that answers this, so I will not guess.",
  citations: [],
  abstained: true,
};

/** Minutes, days and a daily limit read from a scheduling request, if it is one. */
export function scheduleRequest(request: string): { total_minutes: number; days: number; daily_limit: number } | undefined {
  const total = /(\d{1,6})\s*(?:minutes|min)\b/i.exec(request);
  const days = /(\d{1,3})\s*days?\b/i.exec(request);
  if (!total?.[1] || !days?.[1]) return undefined;
  const limit = /(?:at most|max(?:imum)?|limit(?: of)?|up to)\s*(\d{1,4})/i.exec(request);
  const totalMinutes = Number(total[1]);
  return { total_minutes: totalMinutes, days: Number(days[1]), daily_limit: limit?.[1] ? Number(limit[1]) : Math.min(1440, totalMinutes) };
}

function decideSchedule(args: NonNullable<ReturnType<typeof scheduleRequest>>, observations: readonly Observation[]): PlanOutcome {
  const result = observations.filter((observation) => observation.tool === "calculate_schedule").at(-1);
  if (!result) return { type: "tool_calls", calls: [call("calculate_schedule", args)] };
  const allocation = isRecord(result.structured) && Array.isArray(result.structured["allocation"]) ? result.structured["allocation"] : undefined;
  if (!result.ok || !allocation) {
    return { type: "needs_human", reason: `${args.total_minutes} minutes do not fit in ${args.days} day(s) at ${args.daily_limit} a day; change the limit or the days` };
  }
  const plan = allocation.map((minutes, index) => `day ${index + 1}: ${String(minutes)} min`).join(", ");
  return { type: "final", answer: `Schedule: ${plan}.`, citations: [], abstained: false };
}

/** How many notes a quiz is built from (one question each). */
export const QUIZ_NOTES = 3;

/**
 * The notes a quiz reads, from the outline: those whose titles share a word
 * with the request (a topic such as "attention"), else notes spread evenly
 * over the course; at most {@link QUIZ_NOTES}, in outline order.
 */
export function quizNotes(outline: NonNullable<CourseContext["outline"]>, request: string, course: string): string[] {
  const words = new Set(searchQuery(request).split(" ").filter((word) => word.length > 2 && word !== course && !QUIZ_FILLER.has(word)));
  const topical = outline.notes.filter((note) => note.title.toLowerCase().split(/[^a-z0-9]+/).some((word) => words.has(word) || words.has(word.replace(/s$/, ""))));
  if (topical.length > 0) return topical.slice(0, QUIZ_NOTES).map((note) => note.note_id);
  const count = Math.min(QUIZ_NOTES, outline.notes.length);
  return Array.from({ length: count }, (_, index) => outline.notes[Math.floor((index * outline.notes.length) / count)]?.note_id ?? "").filter((id) => id !== "");
}
const QUIZ_FILLER = new Set(["quiz", "quizzes", "make", "create", "write", "give", "generate", "questions", "question", "course", "short", "some"]);

function quizFrom(evidence: readonly Evidence[], course: string): PlanOutcome {
  const lines = evidence.map(
    (item, index) => `${index + 1}. ${item.title ?? item.item_id}: what do your notes say about it? Answer: ${firstSentences(item.excerpt, 1)} [${index + 1}]`,
  );
  return { type: "final", answer: `Quiz from your ${course} notes:\n${lines.join("\n")}`, citations: evidence.map((item) => item.ref), abstained: false };
}

/**
 * A quiz over a course: the outline chooses the notes, `read_note` reads
 * them (authorized and recorded like any call), and the questions cite what
 * was read. No outline (not enrolled, or the server refused) means no quiz.
 */
function decideQuiz(context: CourseContext, input: PlannerInput, observations: readonly Observation[], offered: ReadonlySet<string>): PlanOutcome {
  if (context.outline === null) return ABSTAIN;
  const chosen = quizNotes(context.outline, input.request, context.course);
  const attempted = observations.some((observation) => observation.tool === "read_note");
  if (!attempted && chosen.length > 0) {
    if (!offered.has("read_note")) return { type: "needs_human", reason: "no tool that can read the notes is available to you" };
    return { type: "tool_calls", calls: chosen.map((noteId) => call("read_note", { note_id: noteId })) };
  }
  const supporting = chosen.flatMap((id) => input.evidence.filter((item) => item.item_id === id));
  return supporting.length > 0 ? quizFrom(supporting, context.course) : ABSTAIN;
}

/** The fixed decision tree. Exported for tests; `createRulesPlanner` wraps it. */
export function decide(input: PlannerInput): PlanOutcome {
  const offered = new Set(input.tools.map((tool) => tool.name));
  const observations = observationsSinceRequest(input.messages);
  const caseId = CASE_ID.exec(input.request)?.[0];
  if (caseId && offered.has("get_case_snapshot")) return decideCase(caseId, observations, input.evidence, call);
  const schedule = scheduleRequest(input.request);
  if (schedule && offered.has("calculate_schedule")) return decideSchedule(schedule, observations);
  const course = courseContextOf(input.context);
  if (course) return decideQuiz(course, input, observations, offered);
  const searches = observations.filter((observation) => observation.tool === "search_notes");
  if (searches.length === 0) {
    if (!offered.has("search_notes")) return { type: "needs_human", reason: "no tool that can search the notes is available to you" };
    return { type: "tool_calls", calls: [call("search_notes", { query: searchQuery(input.request), limit: SEARCH_LIMIT })] };
  }
  const hits = searches.flatMap((search) => (search.ok ? hitIds(search.structured) : []));
  if (hits.length === 0) return ABSTAIN;

  const best = hits.slice(0, READ_TOP);
  const attempted = observations.filter((observation) => observation.tool === "read_note").length;
  const read = readIds(observations);
  const unread = best.filter((id) => !read.has(id));
  if (attempted === 0 && unread.length > 0 && offered.has("read_note")) {
    return { type: "tool_calls", calls: unread.map((noteId) => call("read_note", { note_id: noteId })) };
  }
  const supporting = best.flatMap((id) => input.evidence.filter((item) => item.item_id === id));
  return supporting.length > 0 ? answerFrom(supporting) : ABSTAIN;
}

export function createRulesPlanner(): Planner {
  return {
    kind: "rules",
    plan: async (input) => ({ outcome: decide(input), usage: { input_tokens: 0, output_tokens: 0 } }),
  };
}
