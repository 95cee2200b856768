/**
 * Domain context the simulated model reads from the system message, as a
 * model would: a quiz request's course outline (`Course outline of cs301 …`
 * followed by one `{"note_id", "title"}` line per note), or the line saying
 * no outline is available. Rebuilt into the course context the careful
 * decision tree takes.
 */
import { COURSE_CONTEXT, type CourseContext } from "../../src/domains/notes/course-context.js";
import type { DomainContext } from "../../src/state/domain-context.js";

const OUTLINE_HEADER = /^Course outline of ([a-z]{2,8}[0-9]{3}) \(/m;
const NO_OUTLINE = /^Course ([a-z]{2,8}[0-9]{3}): no outline is available to this user \(([^)]*)\)/m;

function outlineNotes(system: string, from: number): { note_id: string; title: string }[] {
  const notes: { note_id: string; title: string }[] = [];
  for (const line of system.slice(from).split("\n").slice(1)) {
    if (!line.startsWith("{")) break;
    try {
      const parsed = JSON.parse(line) as { note_id?: unknown; title?: unknown };
      if (typeof parsed.note_id === "string" && typeof parsed.title === "string")
        notes.push({ note_id: parsed.note_id, title: parsed.title });
    } catch {
      break;
    }
  }
  return notes;
}

/** The planner context the system message describes (empty when it names no course). */
export function contextFromPrompt(system: string): Record<string, DomainContext> {
  const outline = OUTLINE_HEADER.exec(system);
  const missing = NO_OUTLINE.exec(system);
  let course: CourseContext | undefined;
  if (outline?.[1])
    course = {
      course: outline[1],
      outline: { title: outline[1], notes: outlineNotes(system, outline.index) },
      guidance: null,
      unavailable: null,
    };
  else if (missing?.[1])
    course = { course: missing[1], outline: null, guidance: null, unavailable: missing[2] ?? "unavailable" };
  return course ? { [COURSE_CONTEXT]: { data: course, model_note: null } } : {};
}
