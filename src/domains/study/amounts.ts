/**
 * Amounts in a study request: durations ("120 minutes", "2 hours", "1.5 h",
 * "an hour and a half"), the number of days ("over 3 days", "a 3-day plan"),
 * and the daily limit ("at most 60 a day", "no more than 1 hour per day",
 * "a daily limit of 45 minutes"). Each reader consumes what it read.
 */
import type { Scanner } from "./scanner.js";

const NUMBER_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  "half a": 0.5,
  "half an": 0.5,
};

/** The number words "one" to "twelve", as alternatives. */
const ONE_TO_TWELVE = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve";
/** Digits with thousands separators ("1,500"), or with an optional decimal point ("1.5"). */
const DIGITS = String.raw`\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?`;
/** A quantity: digits (with thousands separators or a decimal point) or a number word. */
const QUANTITY = String.raw`(${DIGITS}|half\s+an?|an?|${ONE_TO_TWELVE})`;
const UNIT = "(hours?|hrs?|h|minutes?|mins?)";
const PER_DAY = String.raw`(?:(?:a|an|per|each|every)\s+day|\/\s*day|daily|(?:on|in)\s+(?:any\s+(?:one\s+)?|a\s+single\s+|one\s+)day)`;
/** The phrases before an amount that make it a limit ("at most", "no more than", "capped at"), as alternatives. */
const LIMIT_PHRASES = [
  String.raw`at\s+most`,
  String.raw`no\s+more\s+than`,
  String.raw`not\s+more\s+than`,
  String.raw`never\s+more\s+than`,
  String.raw`up\s+to`,
  String.raw`a\s+max(?:imum)?\s+of`,
  String.raw`max(?:imum)?(?:\s+of)?`,
  String.raw`(?:a\s+)?limit(?:ed)?\s+(?:of|to)`,
  String.raw`capped\s+at`,
  String.raw`a\s+cap\s+of`,
].join("|");
const LIMIT_WORDS = String.raw`(?:\b(?:${LIMIT_PHRASES})|<=|≤)`;

// Not after a minus sign: "-5 hours" is no duration (asked for), never 5 hours.
// After the unit, optionally: more minutes ("2 hours 30 minutes", "1 h and 15 min"; captured), or "and a half".
const AND_MINUTES = String.raw`\s*(?:and\s+)?(\d{1,2})\s*(?:minutes?|mins?)\b`;
const AND_A_HALF = String.raw`(\s+and\s+a\s+half)\b`;
const DURATION_SOURCE = String.raw`(?<![\w.-])${QUANTITY}\s*-?\s*${UNIT}\b(?:${AND_MINUTES}|${AND_A_HALF})?`;
const DURATION = new RegExp(DURATION_SOURCE, "i");
/** A duration marked as the total ("a total of 2 hours", "120 minutes in total"), which wins over session lengths. */
const MARKED_TOTAL = [
  new RegExp(String.raw`\btotal\s+(?:of\s+)?${DURATION_SOURCE}`, "i"),
  new RegExp(String.raw`${DURATION_SOURCE}\s+(?:in\s+total|total|altogether|overall)\b`, "i"),
];
const LIMIT_BEFORE = new RegExp(
  String.raw`${LIMIT_WORDS}\s*${QUANTITY}(?![\d.])(?:\s*-?\s*${UNIT}\b)?\s*${PER_DAY}`,
  "i",
);
const LIMIT_DAILY = new RegExp(
  String.raw`\bdaily\s+(?:limit|max(?:imum)?|cap)\s+(?:of\s+|is\s+)?${QUANTITY}(?![\d.])(?:\s*-?\s*${UNIT}\b)?`,
  "i",
);
/** The words after an amount that make it a limit, before or after "a day" ("2 hours max a day", "2 h a day tops"). */
const LIMIT_AFTER_WORDS = String.raw`(?:max(?:imum)?|at\s+most|tops)`;
const LIMIT_AFTER = new RegExp(
  String.raw`(?<![\w.])${QUANTITY}\s*-?\s*${UNIT}\b\s*` +
    String.raw`(?:${LIMIT_AFTER_WORDS}\s*${PER_DAY}|${PER_DAY}\s*${LIMIT_AFTER_WORDS}\b)`,
  "i",
);
/** "at most 60 minutes" with no "a day": a limit only when another duration is left for the total. */
const LIMIT_LOOSE = new RegExp(
  String.raw`${LIMIT_WORDS}\s*${QUANTITY}(?![\d.])(?:\s*-?\s*${UNIT}\b)?(?!\s*-?\s*(?:days?|weeks?)\b)`,
  "i",
);
/** "40 minutes a day": how much each day, with no limit word. */
const PER_DAY_AMOUNT = new RegExp(String.raw`(?<![\w.])${QUANTITY}\s*-?\s*${UNIT}\b\s*${PER_DAY}`, "i");

/** The words that may stand between a number and "days" ("3 separate days", "five study days"). */
const DAY_KINDS = "separate|consecutive|different|study|following|straight|working";
const DAYS = new RegExp(
  String.raw`(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+|${ONE_TO_TWELVE})\s*-?\s*(?:(?:${DAY_KINDS})\s+)?days?\b`,
  "i",
);
const WEEKS = /(?<![\w.])(\d+|an?|one|two|three|four)\s*-?\s*weeks?\b/i;

/** A duration as written: its value and whether the unit was hours (so "at most 1 a day" after "2 hours" means hours). */
export interface Amount {
  /** Minutes, possibly fractional until checked. */
  minutes: number;
  unit: "hours" | "minutes" | null;
}

function quantity(text: string | undefined): number {
  if (text === undefined) return Number.NaN;
  const word = text.toLowerCase().replace(/\s+/g, " ");
  if (Object.hasOwn(NUMBER_WORDS, word)) return NUMBER_WORDS[word] ?? Number.NaN;
  return Number(word.replace(/,/g, ""));
}

function unitOf(text: string | undefined): Amount["unit"] {
  if (text === undefined) return null;
  return /^h/i.test(text) ? "hours" : "minutes";
}

function amount(value: number, unit: Amount["unit"], inherited: Amount["unit"] = "minutes"): Amount {
  const effective = unit ?? inherited ?? "minutes";
  // Rounded to a millionth so that 0.1 h is 6 minutes, not 6.000000000000001.
  return { minutes: Math.round((effective === "hours" ? value * 60 : value) * 1e6) / 1e6, unit };
}

/** Reads and consumes the next duration ("2 hours 15 minutes", "an hour and a half"). */
export function takeDuration(scanner: Scanner): Amount | undefined {
  let match: RegExpExecArray | null = null;
  for (const pattern of [...MARKED_TOTAL, DURATION]) {
    match = scanner.take(pattern);
    if (match) break;
  }
  if (!match) return undefined;
  const unit = unitOf(match[2]);
  let minutes = amount(quantity(match[1]), unit).minutes;
  if (match[3] !== undefined) minutes += Number(match[3]);
  if (match[4] !== undefined) minutes += unit === "hours" ? 30 : 0.5;
  return { minutes, unit };
}

/** Whether a duration is still left. */
export function hasDuration(scanner: Scanner): boolean {
  return scanner.peek(DURATION) !== null;
}

export type DailyAmount = { kind: "limit" | "per_day"; value: number; unit: Amount["unit"] };

/**
 * Reads and consumes the daily limit. An explicit limit ("at most 60 a day")
 * wins; a loose one ("at most 60 minutes") counts only when a duration is
 * left for the total; "40 minutes a day" is an amount per day.
 */
export function takeDailyAmount(scanner: Scanner): DailyAmount | undefined {
  for (const pattern of [LIMIT_BEFORE, LIMIT_DAILY, LIMIT_AFTER]) {
    const match = scanner.take(pattern);
    if (match) return { kind: "limit", value: quantity(match[1]), unit: unitOf(match[2]) };
  }
  const trial = scanner.fork();
  const loose = trial.take(LIMIT_LOOSE);
  if (loose && hasDuration(trial)) {
    scanner.adopt(trial);
    return { kind: "limit", value: quantity(loose[1]), unit: unitOf(loose[2]) };
  }
  const perDay = scanner.take(PER_DAY_AMOUNT);
  if (perDay) return { kind: "per_day", value: quantity(perDay[1]), unit: unitOf(perDay[2]) };
  return undefined;
}

/** Minutes of a daily amount; a bare number takes the unit of the total ("2 hours …, at most 1 a day"). */
export function dailyMinutes(daily: DailyAmount, total: Amount | undefined): number {
  return amount(daily.value, daily.unit, total?.unit ?? "minutes").minutes;
}

/** Reads and consumes the number of days ("over 3 days", "a 3-day plan", "one week"). */
export function takeDays(scanner: Scanner): number | undefined {
  const days = scanner.take(DAYS);
  if (days) return quantity(days[1]);
  const weeks = scanner.take(WEEKS);
  if (weeks) return quantity(weeks[1]) * 7;
  return undefined;
}
