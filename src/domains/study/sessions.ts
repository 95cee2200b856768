/**
 * From an allocation to calendar events: one session a day with minutes > 0,
 * starting at the requested wall-clock time on consecutive days in the
 * requested zone (daylight-saving changes keep the local time), each with a
 * title and contents naming the topic and the notes it cites. Only arguments
 * the calendar tool's schema declares are sent: validation is strict, and an
 * argument the schema does not know would be refused. Pure.
 */
import type { ToolSpec } from "../../policy/contracts.js";
import type { StartTime } from "./start.js";
import { addDays, formatDate, formatInZone, toInstant } from "./time.js";

/** One planned session. */
export interface Session {
  /** 1-based day of the plan. */
  day: number;
  minutes: number;
  start: string;
  end: string;
}

/** A note a session cites: its id, title and evidence ref. */
export interface CitedNote {
  note_id: string;
  title: string;
  ref: string;
}

/** The arguments the rules planner fills; a calendar tool without one of them is not one it can use. */
const REQUIRED = ["title", "start", "end", "timezone", "calendar"] as const;
const TITLE_MAX = 200;
const DESCRIPTION_MAX = 1000;

/** The sessions of an allocation (zero-minute days get none), or why a start time does not exist. */
export function sessionsOf(
  start: StartTime,
  allocation: readonly number[],
): { sessions: Session[] } | { reason: string } {
  const sessions: Session[] = [];
  for (const [index, minutes] of allocation.entries()) {
    if (minutes <= 0) continue;
    const date = addDays(start.date, index);
    const instant = toInstant({ ...date, hour: start.hour, minute: start.minute }, start.zone);
    if (instant === undefined) {
      const time = `${String(start.hour).padStart(2, "0")}:${String(start.minute).padStart(2, "0")}`;
      return {
        reason:
          `invalid_request: ${time} does not exist on ${formatDate(date)} in ${start.zone} ` +
          "(the clocks move forward); choose another start time",
      };
    }
    sessions.push({
      day: index + 1,
      minutes,
      start: formatInZone(instant, start.zone),
      end: formatInZone(instant + minutes * 60_000, start.zone),
    });
  }
  return { sessions };
}

/** "Study: attention (40 min)". */
export function sessionTitle(topic: string | null, minutes: number): string {
  return (topic ? `Study: ${topic} (${minutes} min)` : `Study session (${minutes} min)`).slice(0, TITLE_MAX);
}

/** The event's contents: topic, place in the plan, cited notes. */
export function sessionDescription(
  topic: string | null,
  session: Session,
  days: number,
  notes: readonly CitedNote[],
): string {
  const cited =
    notes.length > 0
      ? `Notes: ${notes.map((note) => `${note.note_id} (${note.title})`).join("; ")}.`
      : "No notes cited.";
  return `Topic: ${topic ?? "unspecified"}. Session ${session.day} of ${days} (${session.minutes} min). ${cited}`;
}

function properties(spec: ToolSpec): Record<string, unknown> {
  const value = spec.parameters["properties"];
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** Whether the tool's schema takes every argument the planner must fill. */
export function canFill(spec: ToolSpec): boolean {
  const declared = properties(spec);
  return REQUIRED.every((name) => Object.hasOwn(declared, name));
}

/** The longest string the schema allows for a property, if it says. */
function maxLength(spec: ToolSpec, name: string, fallback: number): number {
  const property = properties(spec)[name];
  const declared =
    typeof property === "object" && property !== null ? (property as Record<string, unknown>)["maxLength"] : undefined;
  return typeof declared === "number" && Number.isInteger(declared) && declared > 0
    ? Math.min(declared, fallback)
    : fallback;
}

/** `create_study_event` arguments for one session, limited to what the schema declares. */
export function eventArguments(
  spec: ToolSpec,
  options: {
    topic: string | null;
    session: Session;
    days: number;
    zone: string;
    calendar: string;
    notes: readonly CitedNote[];
  },
): Record<string, unknown> {
  const args: Record<string, unknown> = {
    title: sessionTitle(options.topic, options.session.minutes).slice(0, maxLength(spec, "title", TITLE_MAX)),
    start: options.session.start,
    end: options.session.end,
    timezone: options.zone,
    calendar: options.calendar,
  };
  // The contents go in `description` only where the calendar takes one (it is optional and newer than the tool).
  if (Object.hasOwn(properties(spec), "description")) {
    args["description"] = sessionDescription(options.topic, options.session, options.days, options.notes).slice(
      0,
      maxLength(spec, "description", DESCRIPTION_MAX),
    );
  }
  return args;
}

/**
 * Splits `total` minutes over `parts` topics exactly: integer shares that
 * differ by at most one and sum to the total, larger shares first (the same
 * rule as `calculate_schedule`, which is about days and a daily limit and so
 * does not fit topics).
 */
export function divideEvenly(total: number, parts: number): number[] {
  if (parts < 1) return [];
  const base = Math.floor(total / parts);
  const remainder = total % parts;
  return Array.from({ length: parts }, (_, index) => (index < remainder ? base + 1 : base));
}
