/**
 * The rules planner's study branch. A plan: search the permitted notes on the
 * topic and calculate the schedule (one turn, both reads) → read the best
 * relevant hits → propose one `create_study_event` per day, all in one turn
 * so they form one review → after the review, answer with the events the
 * calendar created (from its results), the ones rejected and why, and the
 * notes read as citations. A division: search each topic → read the note
 * that names it → integer shares among the supported topics only. Missing or
 * invalid facts were already turned into `needs_human` by the parser; here
 * only what the tools answer can stop the plan. Deterministic and pure.
 */
import type { Evidence } from "../../state/evidence.js";
import type { PlanOutcome } from "../../planners/planner.js";
import type { Proposal, ToolSpec } from "../../policy/contracts.js";
import { contentTerms, isRelevant, mentions, searchHits, type Hit } from "../notes/relevance.js";
import type { StudyRequest } from "./parse.js";
import {
  canFill,
  divideEvenly,
  eventArguments,
  sessionsOf,
  sessionTitle,
  type CitedNote,
  type Session,
} from "./sessions.js";

/** A tool result since the request, as the rules planner reads it. */
export interface StudyObservation {
  tool: string;
  ok: boolean;
  structured: unknown;
  /** The error code of a failed call (`approval_rejected`, `capacity_exceeded`, …). */
  code?: string | undefined;
  message?: string | undefined;
  /** The arguments the call was proposed with. */
  args?: Record<string, unknown> | undefined;
}

type Call = (name: string, args: Record<string, unknown>) => Proposal;

/** How many relevant notes a plan reads and cites. */
const READ_TOP = 3;
const SEARCH_LIMIT = 5;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const needs = (reason: string): PlanOutcome => ({ type: "needs_human", reason });

function of(observations: readonly StudyObservation[], tool: string): StudyObservation[] {
  return observations.filter((observation) => observation.tool === tool);
}

function readNotes(
  observations: readonly StudyObservation[],
  evidence: readonly Evidence[],
  noteIds: readonly string[],
): CitedNote[] {
  const read = new Set(
    of(observations, "read_note").flatMap((observation) =>
      observation.ok && isRecord(observation.structured) && typeof observation.structured["note_id"] === "string"
        ? [observation.structured["note_id"]]
        : [],
    ),
  );
  return noteIds.flatMap((noteId) => {
    const item = read.has(noteId)
      ? evidence.find((entry) => entry.item_id === noteId && entry.tool === "read_note")
      : undefined;
    return item ? [{ note_id: noteId, title: item.title ?? noteId, ref: item.ref }] : [];
  });
}

/** An allocation that is exactly what was asked for: `days` whole numbers summing to the total. */
function allocationOf(structured: unknown, total: number, days: number): number[] | undefined {
  if (!isRecord(structured) || !Array.isArray(structured["allocation"])) return undefined;
  const allocation = structured["allocation"];
  if (
    allocation.length !== days ||
    !allocation.every((minutes): minutes is number => Number.isSafeInteger(minutes) && minutes >= 0)
  )
    return undefined;
  return allocation.reduce((sum: number, minutes: number) => sum + minutes, 0) === total ? allocation : undefined;
}

const markers = (notes: readonly CitedNote[], citations: readonly string[]) =>
  notes.map((note) => `${note.title} [${citations.indexOf(note.ref) + 1}]`).join(", ");

function describeEvent(structured: unknown): string | undefined {
  const event = isRecord(structured) && isRecord(structured["event"]) ? structured["event"] : undefined;
  if (!event) return undefined;
  const text = (name: string) => (typeof event[name] === "string" ? event[name] : "?");
  const where = `${text("timezone")}, calendar ${text("calendar")}, event ${text("event_id")}`;
  return `${text("title")}: ${text("start")} to ${text("end")} (${where})`;
}

/** The final answer after the calendar writes: what was created, what was rejected and why, the notes cited. */
function afterWrites(
  request: Extract<StudyRequest, { kind: "plan" | "session" }>,
  writes: readonly StudyObservation[],
  notes: readonly CitedNote[],
): PlanOutcome {
  const created = writes.flatMap((write) =>
    write.ok ? [describeEvent(write.structured) ?? "an event (no details returned)"] : [],
  );
  const refused = writes.flatMap((write) => {
    if (write.ok) return [];
    const title = typeof write.args?.["title"] === "string" ? write.args["title"] : "a session";
    const start = typeof write.args?.["start"] === "string" ? write.args["start"] : "?";
    const what = `${title} at ${start}`;
    // A rejection's message names who rejected (human_review); any other failure keeps its code.
    if (write.code === "approval_rejected")
      return [
        `${what}: ${write.message?.startsWith("rejected by ") ? write.message : `rejected${write.message ? `: ${write.message}` : ""}`}`,
      ];
    return [`${what}: not created (${write.code ?? "error"})${write.message ? `: ${write.message}` : ""}`];
  });
  const citations = notes.map((note) => note.ref);
  const lines = [
    `Study plan${request.topic ? ` for ${request.topic}` : ""}: ${created.length} of ${writes.length} session(s) created.`,
    ...(created.length > 0 ? ["Created:", ...created.map((line) => `- ${line}`)] : []),
    ...(refused.length > 0 ? ["Not created:", ...refused.map((line) => `- ${line}`)] : []),
    notes.length > 0 ? `Based on your notes: ${markers(notes, citations)}.` : "No notes are cited.",
  ];
  return { type: "final", answer: lines.join("\n"), citations, abstained: false };
}

/** The notes a topic's search points at: relevant hits, best first. */
function relevantHits(search: StudyObservation | undefined, topic: string): Hit[] {
  if (!search?.ok) return [];
  const terms = contentTerms(topic);
  return searchHits(search.structured).filter((hit) => isRelevant(hit, terms));
}

function decidePlan(
  request: Extract<StudyRequest, { kind: "plan" | "session" }>,
  tools: readonly ToolSpec[],
  evidence: readonly Evidence[],
  observations: readonly StudyObservation[],
  call: Call,
): PlanOutcome {
  const offered = new Map(tools.map((tool) => [tool.name, tool]));
  const writer = offered.get("create_study_event");
  const toCalendar = request.kind === "session" || request.calendar !== null;
  const useNotes = request.topic !== null && offered.has("search_notes");
  if (request.uses_notes && request.topic === null)
    return needs(`missing_topic: which topic should the notes be about? e.g. "120 minutes of attention study"`);
  if (request.uses_notes && !useNotes)
    return needs("tool_not_permitted: no tool that can search the notes is available to you");
  if (toCalendar && !writer)
    return needs(
      "tool_not_permitted: creating calendar events (create_study_event) is not available to you; ask for calendar:write",
    );
  if (writer && !canFill(writer))
    return needs(
      "this request needs a model planner (set WARRANT_MODEL and an OpenAI-compatible endpoint): " +
        "the calendar tool's arguments are not the ones the rules planner fills",
    );
  if (request.kind === "plan" && !offered.has("calculate_schedule"))
    return needs("tool_not_permitted: the schedule calculator (calculate_schedule) is not available");

  const search = of(observations, "search_notes").at(-1);
  const schedule = of(observations, "calculate_schedule").at(-1);
  const first: Proposal[] = [];
  if (useNotes && !search) first.push(call("search_notes", { query: request.topic, limit: SEARCH_LIMIT }));
  if (request.kind === "plan" && !schedule)
    first.push(
      call("calculate_schedule", {
        total_minutes: request.total_minutes,
        days: request.days,
        daily_limit: request.daily_limit,
      }),
    );
  if (first.length > 0) return { type: "tool_calls", calls: first };

  let allocation: number[] = [];
  if (request.kind === "plan") {
    if (!schedule?.ok) {
      const detail = schedule?.message ? `: ${schedule.message}` : "";
      return schedule?.code === "capacity_exceeded"
        ? needs(
            `capacity_exceeded: ${request.total_minutes} minutes do not fit in ${request.days} day(s) ` +
              `at most ${request.daily_limit} a day${detail}. Raise the daily limit, add days or plan fewer minutes`,
          )
        : needs(
            `schedule_unavailable: the schedule could not be calculated (${schedule?.code ?? "no result"})${detail}`,
          );
    }
    const exact = allocationOf(schedule.structured, request.total_minutes, request.days);
    if (!exact)
      return needs(
        "schedule_unavailable: the schedule calculator answered with an allocation that does not match the request",
      );
    allocation = exact;
  } else {
    allocation = [request.minutes];
  }

  const chosen = useNotes
    ? relevantHits(search, request.topic ?? "")
        .slice(0, READ_TOP)
        .map((hit) => hit.note_id)
    : [];
  if (chosen.length > 0 && of(observations, "read_note").length === 0) {
    return offered.has("read_note")
      ? { type: "tool_calls", calls: chosen.map((noteId) => call("read_note", { note_id: noteId })) }
      : needs("tool_not_permitted: no tool that can read the notes is available to you");
  }
  const notes = readNotes(observations, evidence, chosen);
  if (request.uses_notes && notes.length === 0) {
    return needs(
      `no_evidence: none of the notes you can access cover "${request.topic ?? ""}", so the plan would cite nothing; ` +
        'name another topic, or ask again without "my notes"',
    );
  }

  const days = request.kind === "plan" ? request.days : 1;
  if (!toCalendar || !writer) {
    const citations = notes.map((note) => note.ref);
    const plan = allocation.map((minutes, index) => `day ${index + 1}: ${minutes} min`).join(", ");
    const answer =
      notes.length > 0
        ? `Schedule${request.topic ? ` for ${request.topic}` : ""}: ${plan}.\nBased on your notes: ${markers(notes, citations)}.`
        : `Schedule: ${plan}.`;
    return { type: "final", answer, citations, abstained: false };
  }

  const writes = of(observations, "create_study_event");
  if (writes.length > 0) return afterWrites(request, writes, notes);
  const start = request.start;
  if (!start)
    return needs(
      `missing_start: on which date and time should the study start? e.g. "starting 2026-12-02 at 18:00 UTC"`,
    );
  const planned = sessionsOf(start, allocation);
  if ("reason" in planned) return needs(planned.reason);
  const calendar = request.kind === "session" ? request.calendar : (request.calendar ?? "study");
  // Every session in one turn: they reach human review together, as one review.
  const calls = planned.sessions.map((session: Session) =>
    call(
      "create_study_event",
      eventArguments(writer, { topic: request.topic, session, days, zone: start.zone, calendar, notes }),
    ),
  );
  const titles = planned.sessions.map((session) => sessionTitle(request.topic, session.minutes));
  return { type: "tool_calls", calls, text: `Proposing ${calls.length} study session(s): ${titles.join(", ")}` };
}

/** The note that backs a topic: the best hit naming the topic in its title, else in its excerpt; one not taken by another topic first. */
function backingNote(hits: readonly Hit[], topic: string, taken: ReadonlySet<string>): string | undefined {
  const inTitle = hits.filter((hit) => mentions(hit.title, topic));
  const inText = hits.filter((hit) => mentions(hit.snippet, topic));
  const ranked = [...inTitle, ...inText];
  return (ranked.find((hit) => !taken.has(hit.note_id)) ?? ranked[0])?.note_id;
}

function decideDivision(
  request: Extract<StudyRequest, { kind: "divide" }>,
  tools: readonly ToolSpec[],
  evidence: readonly Evidence[],
  observations: readonly StudyObservation[],
  call: Call,
): PlanOutcome {
  const offered = new Set(tools.map((tool) => tool.name));
  if (!offered.has("search_notes")) {
    if (request.uses_notes) return needs("tool_not_permitted: no tool that can search the notes is available to you");
    const shares = divideEvenly(request.total_minutes, request.topics.length);
    const division = request.topics.map((topic, index) => `${topic}: ${shares[index]} min`).join(", ");
    return {
      type: "final",
      answer: `Division of ${request.total_minutes} minutes: ${division}.`,
      citations: [],
      abstained: false,
    };
  }
  const searches = of(observations, "search_notes");
  const searchFor = (topic: string) => searches.find((search) => search.args?.["query"] === topic);
  const unsearched = request.topics.filter((topic) => !searchFor(topic));
  if (searches.length === 0)
    return {
      type: "tool_calls",
      calls: unsearched.map((topic) => call("search_notes", { query: topic, limit: SEARCH_LIMIT })),
    };

  const taken = new Set<string>();
  const backing = new Map<string, string>();
  for (const topic of request.topics) {
    const noteId = backingNote(
      searchHits(searchFor(topic)?.ok ? searchFor(topic)?.structured : undefined),
      topic,
      taken,
    );
    if (noteId) {
      backing.set(topic, noteId);
      taken.add(noteId);
    }
  }
  const toRead = [...new Set(backing.values())];
  if (toRead.length > 0 && of(observations, "read_note").length === 0) {
    return offered.has("read_note")
      ? { type: "tool_calls", calls: toRead.map((noteId) => call("read_note", { note_id: noteId })) }
      : needs("tool_not_permitted: no tool that can read the notes is available to you");
  }
  const notes = readNotes(observations, evidence, toRead);
  const supported = request.topics.flatMap((topic) => {
    const note = notes.find((item) => item.note_id === backing.get(topic));
    return note ? [{ topic, note }] : [];
  });
  const unsupported = request.topics.filter((topic) => !supported.some((entry) => entry.topic === topic));
  const listed = (topics: readonly string[]) => topics.map((topic) => `"${topic}"`).join(", ");
  if (supported.length === 0) {
    return {
      type: "final",
      answer:
        `None of the notes you can access cover ${listed(unsupported)}, ` +
        `so I will not divide ${request.total_minutes} minutes between them or guess what to study.`,
      citations: [],
      abstained: true,
    };
  }
  const citations = [...new Set(supported.map((entry) => entry.note.ref))];
  const shares = divideEvenly(request.total_minutes, supported.length);
  const oneUnsupported = unsupported.length === 1;
  const lines = [
    `Division of ${request.total_minutes} minutes between ${supported.length} topic(s) your notes support:`,
    ...supported.map(
      (entry, index) =>
        `- ${entry.topic}: ${shares[index]} min (${entry.note.title} [${citations.indexOf(entry.note.ref) + 1}])`,
    ),
    ...(unsupported.length > 0
      ? [
          `Unsupported: ${listed(unsupported)}: no note you can access covers ${oneUnsupported ? "it" : "them"}, ` +
            `so ${oneUnsupported ? "it gets" : "they get"} no minutes ` +
            `and the ${request.total_minutes} are split among the supported topics only.`,
        ]
      : []),
  ];
  return { type: "final", answer: lines.join("\n"), citations, abstained: false };
}

/** The next step of a study request, or its answer. */
export function decideStudy(
  request: StudyRequest,
  tools: readonly ToolSpec[],
  evidence: readonly Evidence[],
  observations: readonly StudyObservation[],
  call: Call,
): PlanOutcome {
  return request.kind === "divide"
    ? decideDivision(request, tools, evidence, observations, call)
    : decidePlan(request, tools, evidence, observations, call);
}
