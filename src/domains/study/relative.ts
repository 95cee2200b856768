/**
 * Relative days in a study request ("today", "tonight", "tomorrow evening",
 * "the day after tomorrow", weekday names, "next week", "for the next 3
 * days"), read from the text and resolved against the run's clock in a time zone. The rules planner gets
 * the clock from the study profile (the run's start, in the user's zone):
 * without one, a relative day stays a question, never a guess. Pure.
 */
import type { Scanner } from "./scanner.js";
import { addDays, localDateOf, toInstant, weekdayOf, type LocalDate } from "./time.js";

/** The run's clock as the planner sees it: the run's start, and the user's zone when their profile names one. */
export interface StudyClock {
  /** Milliseconds since the epoch. */
  now: number;
  zone: string | null;
}

export type RelativeDay =
  /** Today (0), tomorrow (1), the day after tomorrow (2). */
  | { kind: "offset"; days: number }
  /** The next such weekday after today (0 Sunday … 6 Saturday). */
  | { kind: "weekday"; weekday: number }
  /** Monday of next week. */
  | { kind: "next_week" }
  /** "For the next 3 days": today when the start time is still ahead, else tomorrow. */
  | { kind: "upcoming" };

/** A relative day as read: how to resolve it, and the words as written (for the question that asks for a time). */
export interface RelativeReading {
  day: RelativeDay;
  words: string;
}

const WEEKDAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];

const DAY_AFTER_TOMORROW = /\b(?:the\s+)?day\s+after\s+tomorrow\b/i;
const TOMORROW = /\b(?:tomorrow|tmrw)(?:\s+(morning|afternoon|evening|night))?\b/i;
const TODAY = /\b(today|tonight)\b/i;
const THIS_PART = /\bthis\s+(morning|afternoon|evening)\b/i;
/** A weekday name, captured ("monday"; "mondays" also reads, its "s" outside the capture). */
const WEEKDAY_NAME = "(monday|tuesday|wednesday|thursday|friday|saturday|sunday)";
/** An optional part of the day after the weekday ("friday evening"), captured. */
const PART_OF_DAY = String.raw`(?:\s+(morning|afternoon|evening|night))?`;
const WEEKDAY = new RegExp(String.raw`\b(?:(?:on|this|next|coming)\s+)?${WEEKDAY_NAME}s?${PART_OF_DAY}\b`, "i");
const WEEKEND = /\b(?:(?:on|this|next|the)\s+)*weekend\b/i;
const NEXT_WEEK = /\bnext\s+week\b/i;
/** "the next 3 days", "the coming five days": the plan starts at the next occurrence of its time. */
const NEXT_DAYS = /\b(?:next|coming|following)(?=\s+(?:\d+|two|three|four|five|six|seven)\s*-?\s*days?\b)/i;

/** Reads and consumes a relative day; undefined when there is none. */
export function takeRelativeDay(scanner: Scanner): RelativeReading | undefined {
  const words = (match: RegExpExecArray) =>
    match[0]
      .replace(/\s+/g, " ")
      .trim()
      .toLowerCase()
      .replace(/^(?:on|the) /, "");
  const after = scanner.take(DAY_AFTER_TOMORROW);
  if (after) return { day: { kind: "offset", days: 2 }, words: words(after) };
  const tomorrow = scanner.take(TOMORROW);
  if (tomorrow) return { day: { kind: "offset", days: 1 }, words: words(tomorrow) };
  const part = scanner.take(THIS_PART);
  if (part) return { day: { kind: "offset", days: 0 }, words: words(part) };
  const today = scanner.take(TODAY);
  if (today) return { day: { kind: "offset", days: 0 }, words: words(today) };
  const weekday = scanner.take(WEEKDAY);
  if (weekday?.[1])
    return { day: { kind: "weekday", weekday: WEEKDAYS.indexOf(weekday[1].toLowerCase()) }, words: words(weekday) };
  const weekend = scanner.take(WEEKEND);
  if (weekend) return { day: { kind: "weekday", weekday: 6 }, words: words(weekend) };
  const nextWeek = scanner.take(NEXT_WEEK);
  if (nextWeek) return { day: { kind: "next_week" }, words: words(nextWeek) };
  const nextDays = scanner.take(NEXT_DAYS);
  if (nextDays) return { day: { kind: "upcoming" }, words: "the next days" };
  return undefined;
}

/**
 * The date a relative day denotes, seen from `clock.now` in `zone`; the
 * start time decides `upcoming` (today while it is still ahead).
 */
export function resolveRelativeDay(
  day: RelativeDay,
  clock: StudyClock,
  zone: string,
  time: { hour: number; minute: number } | undefined,
): LocalDate {
  const today = localDateOf(clock.now, zone);
  switch (day.kind) {
    case "offset":
      return addDays(today, day.days);
    case "weekday": {
      // The next such day after today: "on Thursday" said on a Thursday is a week ahead.
      const ahead = (day.weekday - weekdayOf(today) + 7) % 7;
      return addDays(today, ahead === 0 ? 7 : ahead);
    }
    case "next_week": {
      const toMonday = (8 - weekdayOf(today)) % 7;
      return addDays(today, toMonday === 0 ? 7 : toMonday);
    }
    case "upcoming": {
      if (!time) return today;
      const instant = toInstant({ ...today, ...time }, zone);
      return instant !== undefined && instant > clock.now ? today : addDays(today, 1);
    }
  }
}
