/**
 * Scores the labelled study phrasings (labels.ts): each study phrasing is
 * read by the study parser against the set's clock in the asker's zone and
 * compared with its label (the plan, the session, or the one question); each
 * out-of-scope phrasing goes through the rules planner's whole decision, turn
 * after turn (a notes search it proposes answered by the caller's search), and
 * must be refused with what it can do and at least one example request
 * written for the asker's own courses. A plan or session with another topic,
 * start or minutes than labelled is a wrong plan, counted apart from a miss
 * (no plan, or another question). Pure; `npm run eval -- --phrasings` is not
 * needed: test/unit/study-phrasings.test.ts prints and checks the figures.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { decide } from "../../src/domains/rules-planner.js";
import { CAN_DO } from "../../src/domains/repertoire.js";
import { parseStudyRequest, type StudyParse } from "../../src/domains/study/parse.js";
import { STUDY_PROFILE } from "../../src/domains/study/profile.js";
import type { StartTime } from "../../src/domains/study/start.js";
import { formatDate } from "../../src/domains/study/time.js";
import type { ToolSpec } from "../../src/policy/contracts.js";
import { type Expected, PHRASING_NOW, type Phrasing } from "./labels.js";

export type Verdict = "right" | "wrong_plan" | "miss" | "refused" | "not_refused";

export interface PhrasingResult {
  id: string;
  verdict: Verdict;
  /** What the planner made of it, in one line. */
  got: string;
}

export interface SetScore {
  study: number;
  right: number;
  wrong_plans: number;
  misses: number;
  out_of_scope: number;
  /** Out-of-scope phrasings refused with what the planner can do. */
  refused: number;
  results: PhrasingResult[];
}

const spec = (name: string, properties: Record<string, unknown> = {}): ToolSpec => ({
  name,
  description: name,
  parameters: { type: "object", properties },
});
/** The tools a student has: notes, the schedule calculator and the calendar. */
const STUDENT_TOOLS = [
  spec("search_notes", { query: { type: "string" }, limit: { type: "integer" } }),
  spec("read_note", { note_id: { type: "string" } }),
  spec("calculate_schedule", {
    total_minutes: { type: "integer" },
    days: { type: "integer" },
    daily_limit: { type: "integer" },
  }),
  spec("create_study_event", {
    title: { type: "string" },
    start: { type: "string" },
    end: { type: "string" },
    timezone: { type: "string" },
    calendar: { type: "string" },
  }),
];

const pad = (value: number) => String(value).padStart(2, "0");
function startLabel(start: StartTime | null): string | null {
  return start ? `${formatDate(start.date)} ${pad(start.hour)}:${pad(start.minute)} ${start.zone}` : null;
}

function describe(parse: StudyParse): string {
  if (parse.type === "none") return "none";
  if (parse.type === "needs_human")
    return `question ${parse.reason.split(":")[0]} [${(parse.missing ?? []).join(",")}]`;
  const request = parse.request;
  if (request.kind === "plan") {
    const where = request.calendar === null ? "schedule" : startLabel(request.start);
    return `plan ${request.total_minutes}/${request.days}d/${request.daily_limit} "${request.topic}" ${where}`;
  }
  if (request.kind === "session") return `session ${request.minutes} "${request.topic}" ${startLabel(request.start)}`;
  return `divide ${request.total_minutes} ${request.topics.join("|")}`;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item) => b.includes(item));
}

/** Right, a wrong plan (topic, start or minutes differ), or a miss. */
function judge(parse: StudyParse, expected: Exclude<Expected, { type: "refuse" }>): Verdict {
  if (parse.type === "request") {
    const request = parse.request;
    if (expected.type === "plan" && request.kind === "plan") {
      const start = expected.start === null ? request.calendar === null : startLabel(request.start) === expected.start;
      const right =
        request.total_minutes === expected.total &&
        request.days === expected.days &&
        request.daily_limit === expected.daily_limit &&
        request.topic === expected.topic &&
        start;
      return right ? "right" : "wrong_plan";
    }
    if (expected.type === "session" && request.kind === "session") {
      const right =
        request.minutes === expected.minutes &&
        request.topic === expected.topic &&
        startLabel(request.start) === expected.start;
      return right ? "right" : "wrong_plan";
    }
    // A plan where a question, or another kind of plan, was due: it would act on facts nobody gave.
    return "wrong_plan";
  }
  if (expected.type !== "question" || parse.type !== "needs_human") return "miss";
  const right = parse.reason.startsWith(`${expected.code}:`) && sameSet(parse.missing ?? [], expected.missing);
  return right ? "right" : "miss";
}

/** The example requests (quoted, after "For example:") a refusal gives that name one of the asker's courses. */
export function examplesFor(text: string, courses: readonly string[]): number {
  const after = text.slice(text.indexOf(CAN_DO)).split("For example:")[1] ?? "";
  const quoted = after.match(/"[^"]+"/g) ?? [];
  return quoted.filter((example) => courses.some((course) => example.includes(course))).length;
}

/** The notes search a refusal's run would make, as the asker with these courses (the shipped corpus, in the test). */
export type NotesSearch = (query: string, limit: number, courses: readonly string[]) => unknown;

/** Turns of a refusal's run: a search, then the answer (a third for a second search). */
const MAX_TURNS = 3;

/**
 * An out-of-scope phrasing through the rules planner's whole decision, turn
 * after turn: a notes search it proposes is answered by `search` (nothing
 * found when there is none); reading a note means it answers from the notes,
 * which is no refusal.
 */
function refusal(phrasing: Phrasing, search: NotesSearch | undefined): PhrasingResult {
  const courses = phrasing.courses ?? ["cs301"];
  const messages: BaseMessage[] = [new HumanMessage(phrasing.text)];
  for (let turn = 1; turn <= MAX_TURNS; turn += 1) {
    const outcome = decide({
      request: phrasing.text,
      messages,
      tools: STUDENT_TOOLS,
      evidence: [],
      turn,
      context: {
        [STUDY_PROFILE]: { data: { now: PHRASING_NOW, time_zone: phrasing.zone, courses }, model_note: null },
      },
    });
    if (outcome.type === "tool_calls") {
      const searches = outcome.calls.filter((proposal) => proposal.name === "search_notes");
      if (searches.length < outcome.calls.length || turn === MAX_TURNS)
        return {
          id: phrasing.id,
          verdict: "not_refused",
          got: `tool_calls: ${outcome.calls.map((proposal) => proposal.name).join(",")}`,
        };
      messages.push(
        new AIMessage({
          content: "",
          tool_calls: searches.map((proposal) => ({
            id: proposal.call_id,
            name: proposal.name,
            args: JSON.parse(proposal.raw_arguments) as Record<string, unknown>,
            type: "tool_call" as const,
          })),
        }),
      );
      for (const proposal of searches) {
        const args = JSON.parse(proposal.raw_arguments) as { query?: string; limit?: number };
        const result = search?.(String(args.query ?? ""), args.limit ?? 5, courses) ?? { hits: [], total: 0 };
        messages.push(
          new ToolMessage({
            tool_call_id: proposal.call_id,
            name: proposal.name,
            content: JSON.stringify(result),
            artifact: result,
          }),
        );
      }
      continue;
    }
    const text = outcome.type === "needs_human" ? outcome.reason : outcome.answer;
    const refused = text.includes(CAN_DO) && examplesFor(text, courses) > 0;
    return {
      id: phrasing.id,
      verdict: refused ? "refused" : "not_refused",
      got: `${outcome.type}: ${text.slice(0, 160)}`,
    };
  }
  return { id: phrasing.id, verdict: "not_refused", got: "no outcome" };
}

/** Every phrasing of a split, judged. */
export function scoreSet(phrasings: readonly Phrasing[], search?: NotesSearch): SetScore {
  const results = phrasings.map((phrasing): PhrasingResult => {
    const expected = phrasing.expect;
    if (expected.type === "refuse") return refusal(phrasing, search);
    const parse = parseStudyRequest(phrasing.text, { now: PHRASING_NOW, zone: phrasing.zone });
    return { id: phrasing.id, verdict: judge(parse, expected), got: describe(parse) };
  });
  const count = (verdict: Verdict) => results.filter((result) => result.verdict === verdict).length;
  const outOfScope = phrasings.filter((phrasing) => phrasing.expect.type === "refuse").length;
  return {
    study: phrasings.length - outOfScope,
    right: count("right"),
    wrong_plans: count("wrong_plan"),
    misses: count("miss"),
    out_of_scope: outOfScope,
    refused: count("refused"),
    results,
  };
}
