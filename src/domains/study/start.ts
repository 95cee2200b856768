/**
 * When a study plan starts: a date (`2026-12-02`, `2 December 2026`,
 * `Dec 2, 2026`) or a relative day ("tomorrow", "on Friday", "next week":
 * relative.ts), a time (`18:00`, `6 pm`, `6:30pm`, `noon`) and a time zone
 * (`UTC`, an IANA name such as `Europe/Berlin`; the user's own zone when the
 * request names none). Read strictly: a malformed date or time, an unknown
 * zone, an offset or an abbreviation is an error with a fix hint. A relative
 * day resolves against the run's clock in the zone; without a clock it is
 * asked for as a date, never guessed.
 */
import { resolveRelativeDay, takeRelativeDay, type RelativeDay, type StudyClock } from "./relative.js";
import type { Scanner } from "./scanner.js";
import { isKnownZone, isValidDate, type LocalDate } from "./time.js";

export interface StartTime {
  date: LocalDate;
  hour: number;
  minute: number;
  zone: string;
}

/** What was read: the parts found, and the first problem with them. */
export interface StartReading {
  date?: LocalDate;
  time?: { hour: number; minute: number };
  zone?: string;
  /** An `invalid_request` reason (with a fix hint) when something was written but is not valid. */
  invalid?: string;
  /** A relative date word ("tomorrow") that was given instead of a date, as written. */
  relative?: string;
  /** How that relative day resolves, when it is one the clock can resolve. */
  relativeDay?: RelativeDay;
}

const MONTHS: Record<string, number> = {
  january: 1,
  jan: 1,
  february: 2,
  feb: 2,
  march: 3,
  mar: 3,
  april: 4,
  apr: 4,
  may: 5,
  june: 6,
  jun: 6,
  july: 7,
  jul: 7,
  august: 8,
  aug: 8,
  september: 9,
  sep: 9,
  sept: 9,
  october: 10,
  oct: 10,
  november: 11,
  nov: 11,
  december: 12,
  dec: 12,
};
/** The month names in full, then their abbreviations ("sept" before "sep"), as alternatives. */
const MONTH_NAMES = [
  "january|february|march|april|may|june|july|august|september|october|november|december",
  "jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec",
].join("|");
/** A month name, captured, with an optional dot after an abbreviation ("Dec."). */
const MONTH = String.raw`(${MONTH_NAMES})\.?`;
const ORDINAL = "(?:st|nd|rd|th)?";

const ISO = /(?<![\w-])(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ]([0-2]?\d):([0-5]\d)(?::[0-5]\d)?(Z)?)?(?![\w-])/i;
const DATE_LIKE = /(?<![\w-])\d{2,4}-\d{1,3}-\d{1,4}(?![\w-])/;
const SLASH_DATE = /(?<![\w/])\d{1,4}\/\d{1,2}(?:\/\d{2,4})?(?![\w/])/;
const DAY_MONTH_YEAR = new RegExp(String.raw`\b(\d{1,2})${ORDINAL}\s+(?:of\s+)?${MONTH},?\s+(\d{4})\b`, "i");
const MONTH_DAY_YEAR = new RegExp(String.raw`\b${MONTH}\s+(\d{1,2})${ORDINAL},?\s+(\d{4})\b`, "i");
const MONTH_NO_YEAR = new RegExp(
  String.raw`\b(?:\d{1,2}${ORDINAL}\s+(?:of\s+)?${MONTH}|${MONTH}\s+\d{1,2}${ORDINAL})(?![\w,]|,?\s+\d{4})`,
  "i",
);
/** The weekday names, as alternatives. */
const WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday";
/** "this morning" to "this evening", or "this week". */
const THIS_PERIOD = String.raw`this\s+(?:morning|afternoon|evening|week)`;
const RELATIVE = new RegExp(
  String.raw`\b(today|tonight|tomorrow|yesterday|${WEEKDAYS}|weekend|next\s+week|${THIS_PERIOD})\b`,
  "i",
);

const TIME_24 = /(?<![\d:.])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])/;
const TIME_12 = /(?<![\d:.])(1[0-2]|0?[1-9])(?::([0-5]\d))?\s*(a\.?m\.?|p\.?m\.?)(?![a-z])/i;
const TIME_WORD = /\b(noon|midday|midnight)\b/i;
const TIME_LIKE = /(?<![\d:.])\d{1,2}:\d{1,2}(?![\d:])/;

const IANA = /(?<![\w/])([A-Z][A-Za-z_]+(?:\/[A-Za-z0-9][A-Za-z0-9_+-]*)+)/;
const UTC = /\b(?:UTC|GMT)\b(?!\s*[+-]\s*\d)/i;
const UTC_OFFSET = /\b(?:UTC|GMT)\s*[+-]\s*\d{1,2}(?::?\d{2})?/i;
const NUMERIC_OFFSET = /(?<=\d)\s*[+-]\d{2}:?\d{2}\b/;
const ABBREVIATION =
  /\b(CET|CEST|EET|EEST|WET|WEST|BST|IST|EST|EDT|CST|CDT|MST|MDT|PST|PDT|AKST|AKDT|HST|JST|KST|AEST|AEDT|ACST|AWST|NZST|NZDT|MSK)\b/;

const ZONE_HINT = "use an IANA name such as Europe/Berlin, or UTC";
const DATE_HINT = "write it as YYYY-MM-DD, e.g. 2026-12-02";

function readZone(scanner: Scanner): Pick<StartReading, "zone" | "invalid"> {
  const offset = scanner.peek(UTC_OFFSET) ?? scanner.peek(NUMERIC_OFFSET);
  if (offset)
    return { invalid: `invalid_request: a UTC offset ("${offset[0].trim()}") is not a time zone; ${ZONE_HINT}` };
  const named = scanner.take(IANA);
  if (named?.[1]) {
    return isKnownZone(named[1])
      ? { zone: named[1] }
      : { invalid: `invalid_request: unknown time zone "${named[1]}"; ${ZONE_HINT}` };
  }
  if (scanner.take(UTC)) return { zone: "UTC" };
  const abbreviation = scanner.peek(ABBREVIATION);
  if (abbreviation?.[1])
    return { invalid: `invalid_request: "${abbreviation[1]}" is an ambiguous zone abbreviation; ${ZONE_HINT}` };
  return {};
}

function readTime(scanner: Scanner): Pick<StartReading, "time" | "invalid"> {
  const h12 = scanner.take(TIME_12);
  if (h12) {
    const pm = /^p/i.test(h12[3] ?? "");
    const hour = (Number(h12[1]) % 12) + (pm ? 12 : 0);
    return { time: { hour, minute: Number(h12[2] ?? "0") } };
  }
  const h24 = scanner.take(TIME_24);
  if (h24) return { time: { hour: Number(h24[1]), minute: Number(h24[2]) } };
  const word = scanner.take(TIME_WORD);
  if (word?.[1]) return { time: { hour: word[1].toLowerCase() === "midnight" ? 0 : 12, minute: 0 } };
  const malformed = scanner.peek(TIME_LIKE);
  if (malformed)
    return {
      invalid: `invalid_request: "${malformed[0]}" is not a valid time; write it as HH:MM on a 24-hour clock, e.g. 18:00`,
    };
  return {};
}

function checked(date: LocalDate, written: string): Pick<StartReading, "date" | "invalid"> {
  return isValidDate(date) ? { date } : { invalid: `invalid_request: "${written}" is not a valid date; ${DATE_HINT}` };
}

function readDate(scanner: Scanner): Pick<StartReading, "date" | "invalid" | "time" | "zone"> {
  const iso = scanner.take(ISO);
  if (iso) {
    const result: Pick<StartReading, "date" | "invalid" | "time" | "zone"> = checked(
      { year: Number(iso[1]), month: Number(iso[2]), day: Number(iso[3]) },
      `${iso[1]}-${iso[2]}-${iso[3]}`,
    );
    if (iso[4] !== undefined) {
      if (Number(iso[4]) > 23)
        return {
          invalid: `invalid_request: "${iso[0]}" has no valid time; write it as HH:MM on a 24-hour clock, e.g. 18:00`,
        };
      result.time = { hour: Number(iso[4]), minute: Number(iso[5]) };
    }
    if (iso[6] !== undefined) result.zone = "UTC";
    return result;
  }
  const malformed = scanner.peek(DATE_LIKE);
  if (malformed) return { invalid: `invalid_request: "${malformed[0]}" is not a valid date; ${DATE_HINT}` };
  const slash = scanner.peek(SLASH_DATE);
  if (slash) return { invalid: `invalid_request: "${slash[0]}" is ambiguous (day or month first?); ${DATE_HINT}` };
  const dayFirst = scanner.take(DAY_MONTH_YEAR);
  if (dayFirst)
    return checked(
      { year: Number(dayFirst[3]), month: MONTHS[(dayFirst[2] ?? "").toLowerCase()] ?? 0, day: Number(dayFirst[1]) },
      dayFirst[0],
    );
  const monthFirst = scanner.take(MONTH_DAY_YEAR);
  if (monthFirst)
    return checked(
      {
        year: Number(monthFirst[3]),
        month: MONTHS[(monthFirst[1] ?? "").toLowerCase()] ?? 0,
        day: Number(monthFirst[2]),
      },
      monthFirst[0],
    );
  const noYear = scanner.peek(MONTH_NO_YEAR);
  if (noYear) return { invalid: `missing_start: "${noYear[0]}" has no year; ${DATE_HINT}` };
  return {};
}

/** Reads and consumes the start: date, then time, then zone. */
export function readStart(scanner: Scanner): StartReading {
  const date = readDate(scanner);
  if (date.invalid) return { invalid: date.invalid };
  const time = date.time ? { time: date.time } : readTime(scanner);
  if (time.invalid) return { invalid: time.invalid };
  const zone = date.zone ? { zone: date.zone } : readZone(scanner);
  if (zone.invalid) return { invalid: zone.invalid };
  const relativeDay = date.date ? undefined : takeRelativeDay(scanner);
  const relative = relativeDay?.words ?? (date.date ? undefined : scanner.peek(RELATIVE)?.[1]);
  return {
    ...(date.date ? { date: date.date } : {}),
    ...(time.time ? { time: time.time } : {}),
    ...(zone.zone ? { zone: zone.zone } : {}),
    ...(relative ? { relative: relative.toLowerCase() } : {}),
    ...(relativeDay ? { relativeDay: relativeDay.day } : {}),
  };
}

/** A part of the start that can be missing: what a follow-up may supply. */
export type StartFact = "start_date" | "start_time" | "time_zone";

/**
 * The reading with what the clock supplies: the user's zone when none was
 * written, and the date a relative day denotes once the zone is known.
 */
export function withClock(reading: StartReading, clock: StudyClock | undefined): StartReading {
  if (!clock || reading.invalid) return reading;
  const zone = reading.zone ?? clock.zone ?? undefined;
  const date =
    reading.date ??
    (reading.relativeDay && zone ? resolveRelativeDay(reading.relativeDay, clock, zone, reading.time) : undefined);
  return { ...reading, ...(zone ? { zone } : {}), ...(date ? { date } : {}) };
}

/** The parts of the start a reading lacks (all of them when what was written is invalid). */
export function missingStartFacts(reading: StartReading, clock?: StudyClock): StartFact[] {
  if (reading.invalid) return ["start_date", "start_time", "time_zone"];
  // A relative day is a date once the zone is known: with a clock, only the zone is asked for.
  const dated = reading.date !== undefined || (clock !== undefined && reading.relativeDay !== undefined);
  return [
    ...(dated ? [] : (["start_date"] as const)),
    ...(reading.time ? [] : (["start_time"] as const)),
    ...(reading.zone ? [] : (["time_zone"] as const)),
  ];
}

/** The start when every part is there, else the `missing_start` reason naming what is missing, and the missing parts. */
export function completeStart(
  written: StartReading,
  clock?: StudyClock,
): { start: StartTime } | { reason: string; missing: StartFact[] } {
  const reading = withClock(written, clock);
  const missing = missingStartFacts(reading, clock);
  if (reading.invalid) return { reason: reading.invalid, missing };
  const example = 'e.g. "starting 2026-12-02 at 18:00 UTC"';
  if (clock && reading.relativeDay && !reading.time) {
    const when = reading.relative ?? "then";
    const reason = reading.zone
      ? `missing_start: at what time ${when} should the study start (${reading.zone})? e.g. "at 18:00"`
      : `missing_start: at what time ${when}, and in which time zone, should the study start? e.g. "at 18:00 Europe/Berlin"`;
    return { reason, missing };
  }
  if (clock && !reading.date && reading.relativeDay && !reading.zone)
    return {
      reason:
        `missing_start: in which time zone is "${reading.relative ?? "that"}"? ` +
        'Add UTC or an IANA name such as Europe/Berlin, e.g. "Europe/Berlin"',
      missing,
    };
  if (!reading.date) {
    const why = reading.relative
      ? ` ("${reading.relative}" needs a calendar date: the rules planner has no clock)`
      : "";
    return {
      reason: `missing_start: on which date should the study start${why}? Give a date, a time and a time zone, ${example}`,
      missing,
    };
  }
  if (!reading.time)
    return {
      reason: `missing_start: at what time should each session start? Give a time and a time zone, ${example}`,
      missing,
    };
  if (!reading.zone)
    return {
      reason: `missing_start: in which time zone? Add UTC or an IANA name such as Europe/Berlin, ${example}`,
      missing,
    };
  return { start: { date: reading.date, hour: reading.time.hour, minute: reading.time.minute, zone: reading.zone } };
}
