/**
 * Understands a study request in the many ways people phrase it, or says
 * precisely what is missing or wrong. Three kinds:
 * - a plan over days ("plan 120 minutes of attention over 3 days, at most 60 a
 *   day, starting 2026-12-02 18:00 UTC", optionally "put it in my calendar");
 * - one session in the calendar ("put a 40 minute session for attention on
 *   2026-12-02 at 18:00 UTC in my calendar");
 * - a division of minutes between topics ("divide 180 minutes between
 *   self-attention, cross-attention and normalization").
 * Missing facts come back as `needs_human` reasons, invalid ones as
 * `invalid_request: …` with a fix hint; nothing is defaulted that the user
 * would have to know about (a daily limit that was not given is no limit).
 */
import { dailyMinutes, hasDuration, takeDailyAmount, takeDays, takeDuration, type Amount } from "./amounts.js";
import type { StudyClock } from "./relative.js";
import { Scanner } from "./scanner.js";
import {
  completeStart,
  missingStartFacts,
  readStart,
  type StartFact,
  type StartReading,
  type StartTime,
} from "./start.js";

/** Bounds a study plan keeps (the calendar and the run's budgets set them; see README "Study plans"). */
export const LIMITS = {
  /** 100 hours: more is not one plan. */
  max_total_minutes: 6000,
  /** One review of at most a week of sessions (each a calendar write, each counted against the tool budget). */
  max_days: 7,
  /** A calendar event is at most 24 hours. */
  max_session_minutes: 1440,
  /** Topics in one division (one search and one read each, within the tool budget). */
  max_topics: 6,
} as const;

/** The calendar sessions go to unless the request names another. */
export const DEFAULT_CALENDAR = "study";

export type StudyRequest =
  | {
      kind: "plan";
      total_minutes: number;
      days: number;
      /** The largest number of minutes on one day; the total when no limit was given. */
      daily_limit: number;
      topic: string | null;
      /** The destination calendar when the plan goes into the calendar. */
      calendar: string | null;
      start: StartTime | null;
      uses_notes: boolean;
    }
  | { kind: "session"; minutes: number; topic: string | null; calendar: string; start: StartTime; uses_notes: boolean }
  | { kind: "divide"; total_minutes: number; topics: string[]; uses_notes: boolean };

/** A fact a study request can lack, which a follow-up message may supply. */
export type StudyFact = StartFact | "duration";

export type StudyParse =
  | { type: "none" }
  | { type: "request"; request: StudyRequest }
  /** `missing` names the facts asked for when the reason is a question (`missing_start`, `missing_duration`), not an error. */
  | { type: "needs_human"; reason: string; missing?: StudyFact[] };

const CALENDAR = /\bcalendars?\b/i;
const CALENDAR_WRITE =
  /\b(?:put|add|schedule|book|create|plan|block|insert|place|set\s+up|reserve|enter|pencil|save|make|get)\b/i;
const PLAN_VERB = /\b(?:plan|schedule|split|spread|divide|distribute|allocate|organi[sz]e|arrange|timetable)\b/i;
const DIVIDE_VERB = /\b(?:divide|split|allocate|distribute|share|spread|apportion|budget)\b/i;
/** The words after a list of topics that start the rest of the request ("… using my notes"), as alternatives. */
const AFTER_TOPICS = [
  "using",
  String.raw`based\s+on`,
  "with",
  "from",
  String.raw`according\s+to`,
  String.raw`in\s+my`,
  "by",
  "so",
  String.raw`and\s+(?:put|add|schedule)`,
].join("|");
/** The topics after "between" (captured), up to a word that starts the rest of the request, a stop, or the end. */
const TOPIC_LIST = new RegExp(
  String.raw`\b(?:between|among|amongst|across|over)\s+(.+?)(?=\s+(?:${AFTER_TOPICS})\b|[.?!;:]|$)`,
  "i",
);
const USES_NOTES = /\bnotes?\b/i;
/** Verbs that put study time somewhere: with a day or a time, a calendar session or plan. */
/** "find" only before an amount ("find me 2 hours", "find an hour"), not in "find my notes". */
const FIND_AMOUNT = String.raw`find(?=\s+(?:me\s+)?(?:\d|an?\s|half|one|two|three))`;
const SESSION_VERB = new RegExp(
  String.raw`\b(?:schedule|book|block|put|pencil|set\s+aside|reserve|plan|add|fit|squeeze|carve|${FIND_AMOUNT})\b`,
  "i",
);
/** Verbs that ask for a calendar entry even before a start is given ("schedule 2 hours of attention"). */
const CALENDAR_VERB = /\b(?:schedule|book|block|pencil|set\s+aside|reserve)\b/i;
/** Words that make a request about study time when no duration is given yet ("schedule attention study tomorrow"). */
const STUDY_WORD = /\b(?:study|studying|session|revise|revising|revision|learn|learning|review|practi[cs]e)\b/i;
/** A question about the notes, not a request for study time. */
const QUESTION_FORM = /^\s*(?:what|why|how|when|where|who|which|whose|is|are|does|do|did|explain|define|describe)\b/i;
/** A request that opens with its duration ("90 min of …"). */
const LEADING_AMOUNT = /^\s*(?:\d|(?:an?|one|two|three|half)\s)/i;
/** "every day", "each day", "daily" away from the duration ("30 min of BM25 every day"): the duration is per day. */
const DETACHED_PER_DAY = /\b(?:every|each|per)\s+day\b|\bdaily\b/i;
/** Words that make a duration the total to spread, not an amount per day. */
const SPREAD_WORDS = /\b(?:spread|split|total|altogether|overall)\b/i;
/** "Over 3 days", "across 4 days": the span of a total, unless the duration is said to be "per day". */
const SPAN_WORDS = /\b(?:over|across)\b/i;
const PER_DAY_WORDS = /\bper\s+day\b/i;
const NAMED_CALENDAR = /\b(?:my|the)\s+([a-z0-9][a-z0-9_-]{0,63})\s+calendar\b/i;
const GENERIC_CALENDAR_NAMES = new Set(["own", "personal", "main", "default", "usual", "google", "outlook", "ical"]);

/**
 * Words that carry no topic: request mechanics, time words, filler. What is
 * left of a request after its amounts, dates and these is its topic.
 */
const NOT_TOPIC = new Set(
  [
    "a about after again all also am an and any are as aside at be been before begin beginning begins best block",
    "blocks book but by calendar calendars can could create day days daily do does each enter evenly equally every",
    "exam exams for from get give go going have help how i in into is it its just learn learning let like make me",
    "minute minutes more most my need next no not notes note now of off on onto or our out over",
    "pencil per place plan planned planning please prepare preparing put reserve review reviewing revise revising",
    "revision schedule scheduled session sessions set should so some spread",
    "start starting starts study studying studies than that the them then these this those time times to together",
    "topic topics total up use using want we week weeks what when will with",
    "would you your hour hours split divide distribute allocate share between among amongst across evening evenings",
    "morning mornings afternoon afternoons separate consecutive different following",
    "straight working one two three four five six seven eight nine ten eleven twelve first each utc gmt via add",
    "it's i'd i'm based according insert",
    "hi hey hello kindly ok okay thanks thank aside fit squeeze find carve same",
  ]
    .join(" ")
    .split(" "),
);
const WORD = /[a-z0-9]+(?:['-][a-z0-9]+)*/g;
const MAX_TOPIC_WORDS = 5;

/** The topic words left in `text`, in order, or null when none are. */
export function topicOf(text: string): string | null {
  const words = [
    ...new Set((text.toLowerCase().match(WORD) ?? []).filter((word) => !NOT_TOPIC.has(word) && !/^\d+$/.test(word))),
  ];
  return words.length > 0 ? words.slice(0, MAX_TOPIC_WORDS).join(" ") : null;
}

function wholeMinutes(minutes: number, what: string): string | undefined {
  if (!Number.isFinite(minutes))
    return `invalid_request: the ${what} is not a number of minutes; write it like "120 minutes" or "2 hours"`;
  if (!Number.isInteger(minutes)) {
    const shown = Math.round(minutes * 100) / 100;
    return (
      `invalid_request: the ${what} (${shown} minutes) is not a whole number of minutes; ` +
      `round it, e.g. "${Math.round(minutes)} minutes"`
    );
  }
  if (minutes < 1) return `invalid_request: the ${what} must be at least 1 minute`;
  return undefined;
}

function totalProblem(total: number): string | undefined {
  const whole = wholeMinutes(total, "total duration");
  if (whole) return whole;
  if (total > LIMITS.max_total_minutes) {
    const most = LIMITS.max_total_minutes;
    return (
      `invalid_request: ${total} minutes is more than one study plan holds ` +
      `(at most ${most} minutes, ${most / 60} hours); plan a shorter period`
    );
  }
  return undefined;
}

function daysProblem(days: number): string | undefined {
  if (!Number.isInteger(days) || days < 1)
    return `invalid_request: the number of days must be at least 1; write e.g. "over 3 days"`;
  if (days > LIMITS.max_days)
    return `invalid_request: ${days} days is more than one plan covers (at most ${LIMITS.max_days}); plan one week at a time`;
  return undefined;
}

function calendarName(scanner: Scanner): string {
  const named = scanner.take(NAMED_CALENDAR);
  const name = named?.[1]?.toLowerCase();
  // "my study calendar" names the default; "my own calendar" names none.
  return name !== undefined && !GENERIC_CALENDAR_NAMES.has(name) && (name === DEFAULT_CALENDAR || !NOT_TOPIC.has(name))
    ? name
    : DEFAULT_CALENDAR;
}

/**
 * Whether a request asks for calendar time: it says "calendar" with a verb
 * that writes; or a verb that schedules with a day or a time (and a duration
 * or a study word); or "schedule 2 hours of …" with no start yet (the start
 * is then asked for); or a duration with a day and no verb ("2 hours of
 * attention tomorrow at 19:00"). A question about the notes is none of these.
 */
function calendarIntent(
  text: string,
  probe: { cue: StartReading; duration: boolean; days: boolean; limit: boolean },
): boolean {
  if (CALENDAR.test(text) && CALENDAR_WRITE.test(text)) return true;
  if (QUESTION_FORM.test(text)) return false;
  const { cue } = probe;
  const day = cue.date !== undefined || (cue.relativeDay !== undefined && cue.relativeDay.kind !== "upcoming");
  const when = day || cue.time !== undefined;
  if (SESSION_VERB.test(text) && (probe.duration || STUDY_WORD.test(text)) && when) return true;
  // "I need 4 hours … on Friday at 14:00 in my calendar": the calendar named, with a duration and a start.
  if (CALENDAR.test(text) && probe.duration && when) return true;
  if (CALENDAR_VERB.test(text) && probe.duration && !probe.days && !probe.limit) return true;
  // No verb: only what reads as study time ("2 hours of attention tomorrow at 19:00", "revise X for 2 hours on Friday"),
  // not a question that happens to hold a duration and a day ("tell me about the 2 hours exam on Friday").
  return probe.duration && day && (STUDY_WORD.test(text) || LEADING_AMOUNT.test(text));
}

/** A division between named topics ("between A, B and C"); undefined when the request is not one. */
function parseDivision(scanner: Scanner, total: Amount | undefined, usesNotes: boolean): StudyParse | undefined {
  const list = scanner.peek(TOPIC_LIST);
  if (!list?.[1]) return undefined;
  const topics = [
    ...new Set(
      list[1]
        .split(/\s*(?:,|;|&|\+|\band\b|\bor\b)\s*/i)
        .map((item) => topicOf(item))
        .filter((item): item is string => item !== null),
    ),
  ];
  if (!total)
    return {
      type: "needs_human",
      reason: `missing_duration: how many minutes should be divided between the topics? e.g. "divide 180 minutes between …"`,
      missing: ["duration"],
    };
  const problem = totalProblem(total.minutes);
  if (problem) return { type: "needs_human", reason: problem };
  if (topics.length < 2)
    return {
      type: "needs_human",
      reason:
        `missing_topics: name the topics to divide ${total.minutes} minutes between, ` +
        `e.g. "between self-attention, cross-attention and normalization"`,
    };
  if (topics.length > LIMITS.max_topics)
    return {
      type: "needs_human",
      reason:
        `invalid_request: ${topics.length} topics are more than one division holds ` +
        `(at most ${LIMITS.max_topics}); divide fewer at a time`,
    };
  return { type: "request", request: { kind: "divide", total_minutes: total.minutes, topics, uses_notes: usesNotes } };
}

/**
 * Reads a study request, or `none` when the request is not about study time
 * at all. With a clock (the run's start, in the user's zone) relative days
 * resolve and a missing zone is the user's; without one they are asked for.
 */
export function parseStudyRequest(request: string, clock?: StudyClock): StudyParse {
  const text = request.slice(0, 2000);
  const scanner = new Scanner(text);
  const usesNotes = USES_NOTES.test(text);

  // Intent comes first, from words only: a notes question with "18:00" or "Mars/Base" in it is not parsed further.
  const probe = scanner.fork();
  const cue = readStart(probe.fork());
  const probeDaily = takeDailyAmount(probe);
  const probeDays = takeDays(probe);
  const probeDuration = hasDuration(probe) || probeDaily !== undefined;
  const toCalendar = calendarIntent(text, {
    cue,
    duration: probeDuration,
    days: probeDays !== undefined,
    limit: probeDaily?.kind === "limit",
  });
  const dividing =
    !toCalendar &&
    probeDays === undefined &&
    DIVIDE_VERB.test(text) &&
    probe.peek(TOPIC_LIST) !== null &&
    probeDuration;
  // "plan 100 minutes, at most 50 a day": the limit sets the days.
  const limited = probeDaily?.kind === "limit" && hasDuration(probe) && PLAN_VERB.test(text);
  const planning = (probeDays !== undefined && (probeDuration || PLAN_VERB.test(text))) || limited;
  if (!toCalendar && !dividing && !planning) return { type: "none" };

  const calendar = toCalendar ? calendarName(scanner) : null;
  const startReading: StartReading = toCalendar || planning ? readStart(scanner) : {};
  let daily = takeDailyAmount(scanner);
  let days = takeDays(scanner);
  let total = takeDuration(scanner);
  // "1 hour of X per day over the next 4 days" is 60 a day; "3 hours over 3 days, every day at 18:00" is 3 hours in all.
  const perDay =
    !daily &&
    total !== undefined &&
    scanner.peek(DETACHED_PER_DAY) !== null &&
    !SPREAD_WORDS.test(text) &&
    (!SPAN_WORDS.test(text) || scanner.peek(PER_DAY_WORDS) !== null);
  // "every day next week": seven days from Monday.
  if (perDay && days === undefined && startReading.relativeDay?.kind === "next_week") days = 7;
  if (perDay && total && days !== undefined) {
    daily = { kind: "per_day", value: total.minutes, unit: "minutes" };
    total = undefined;
  }
  // Further durations ("in 40 minute sessions") are read and dropped, so they are not taken for the topic.
  while (takeDuration(scanner)) {
    /* consumed */
  }

  if (dividing) return parseDivision(scanner, total, usesNotes) ?? { type: "none" };
  if (startReading.invalid?.startsWith("invalid_request"))
    return { type: "needs_human", reason: startReading.invalid, missing: missingStartFacts(startReading, clock) };

  const topic = topicOf(scanner.rest);
  // "5 hours, max 90 minutes a day" with no days: as few days as the limit allows, never one session over the limit.
  if (days === undefined && daily?.kind === "limit" && total) {
    const perDay = dailyMinutes(daily, total);
    if (Number.isInteger(perDay) && perDay >= 1 && total.minutes > perDay) days = Math.ceil(total.minutes / perDay);
  }
  if (days !== undefined) {
    const dayProblem = daysProblem(days);
    if (dayProblem) return { type: "needs_human", reason: dayProblem };
    let totalMinutes: number | undefined = total?.minutes;
    let limit: number | undefined;
    if (daily) {
      const perDay = dailyMinutes(daily, total);
      const dailyProblem = wholeMinutes(perDay, "daily limit");
      if (dailyProblem) return { type: "needs_human", reason: dailyProblem };
      if (perDay > LIMITS.max_session_minutes)
        return {
          type: "needs_human",
          reason: `invalid_request: a daily limit of ${perDay} minutes is more than a day has (at most ${LIMITS.max_session_minutes})`,
        };
      if (daily.kind === "per_day" && totalMinutes === undefined) totalMinutes = perDay * days;
      limit = perDay;
    }
    if (totalMinutes === undefined) {
      return {
        type: "needs_human",
        reason: `missing_duration: how many minutes of study in total? e.g. "120 minutes over ${days} days"`,
        missing: ["duration"],
      };
    }
    const problem = totalProblem(totalMinutes);
    if (problem) return { type: "needs_human", reason: problem };
    let start: StartTime | null = null;
    if (toCalendar) {
      const complete = completeStart(startReading, clock);
      if ("reason" in complete) return { type: "needs_human", reason: complete.reason, missing: complete.missing };
      start = complete.start;
    }
    const dailyLimit = limit ?? Math.min(LIMITS.max_session_minutes, totalMinutes);
    return {
      type: "request",
      request: {
        kind: "plan",
        total_minutes: totalMinutes,
        days,
        daily_limit: dailyLimit,
        topic,
        calendar,
        start,
        uses_notes: usesNotes,
      },
    };
  }

  // To the calendar with no days: one session.
  const minutes = total?.minutes ?? (daily ? dailyMinutes(daily, undefined) : undefined);
  if (minutes === undefined)
    return {
      type: "needs_human",
      reason: `missing_duration: how long should the study session be? e.g. "a 40 minute study session"`,
      missing: ["duration"],
    };
  const problem = wholeMinutes(minutes, "session length");
  if (problem) return { type: "needs_human", reason: problem };
  if (minutes > LIMITS.max_session_minutes) {
    return {
      type: "needs_human",
      reason:
        `invalid_request: a ${minutes} minute session is longer than a calendar event may be ` +
        `(at most ${LIMITS.max_session_minutes}); split it over days, e.g. "over 3 days"`,
    };
  }
  const complete = completeStart(startReading, clock);
  if ("reason" in complete) return { type: "needs_human", reason: complete.reason, missing: complete.missing };
  return {
    type: "request",
    request: {
      kind: "session",
      minutes,
      topic,
      calendar: calendar ?? DEFAULT_CALENDAR,
      start: complete.start,
      uses_notes: usesNotes,
    },
  };
}
