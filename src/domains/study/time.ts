/**
 * Wall-clock times in IANA time zones, with no dependency beyond `Intl`:
 * validating a zone name, turning a local date and time into an instant
 * (refusing times that do not exist because the clocks jump), and writing an
 * instant as ISO 8601 with the zone's offset at that instant. Pure.
 */

/** A calendar date. */
export interface LocalDate {
  year: number;
  month: number;
  day: number;
}

/** A wall-clock date and time (minutes precision). */
export interface LocalDateTime extends LocalDate {
  hour: number;
  minute: number;
}

/** The shape of an IANA zone name; `Intl` decides whether it exists. */
const ZONE_SHAPE = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9][A-Za-z0-9_+-]*)*$/;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let existing = formatters.get(zone);
  if (!existing) {
    existing = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formatters.set(zone, existing);
  }
  return existing;
}

/** Whether `zone` is an IANA zone name this runtime knows (`UTC`, `Europe/Berlin`). */
export function isKnownZone(zone: string): boolean {
  if (zone.length > 64 || !ZONE_SHAPE.test(zone)) return false;
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

/** Whether the date exists (no 30 February). */
export function isValidDate(date: LocalDate): boolean {
  if (!Number.isInteger(date.year) || date.year < 1970 || date.year > 9999) return false;
  if (!Number.isInteger(date.month) || date.month < 1 || date.month > 12) return false;
  const days = new Date(Date.UTC(date.year, date.month, 0)).getUTCDate();
  return Number.isInteger(date.day) && date.day >= 1 && date.day <= days;
}

/** The wall-clock fields of an instant in a zone. */
function wallClock(instant: number, zone: string): LocalDateTime & { second: number } {
  const parts: Record<string, number> = {};
  for (const part of formatter(zone).formatToParts(new Date(instant))) {
    if (part.type !== "literal") parts[part.type] = Number(part.value);
  }
  return {
    year: parts["year"] ?? 0,
    month: parts["month"] ?? 0,
    day: parts["day"] ?? 0,
    hour: parts["hour"] ?? 0,
    minute: parts["minute"] ?? 0,
    second: parts["second"] ?? 0,
  };
}

/** The zone's offset from UTC at an instant, in whole minutes (east positive). */
export function offsetMinutes(instant: number, zone: string): number {
  const local = wallClock(instant, zone);
  const asUtc = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
  return Math.round((asUtc - Math.floor(instant / 1000) * 1000) / 60_000);
}

/**
 * The instant a wall-clock time denotes in a zone, or undefined when that
 * time does not exist there (skipped by a daylight-saving jump). In an
 * ambiguous hour (clocks set back) the earlier offset is taken.
 */
export function toInstant(local: LocalDateTime, zone: string): number | undefined {
  const guess = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute);
  const first = offsetMinutes(guess, zone);
  let instant = guess - first * 60_000;
  const second = offsetMinutes(instant, zone);
  if (second !== first) instant = guess - second * 60_000;
  const back = wallClock(instant, zone);
  const same =
    back.year === local.year &&
    back.month === local.month &&
    back.day === local.day &&
    back.hour === local.hour &&
    back.minute === local.minute;
  return same ? instant : undefined;
}

const pad = (value: number, width = 2) => String(Math.abs(value)).padStart(width, "0");

/** An instant as `YYYY-MM-DDTHH:MM:SS±HH:MM` in the zone's offset at that instant. */
export function formatInZone(instant: number, zone: string): string {
  const local = wallClock(instant, zone);
  const offset = offsetMinutes(instant, zone);
  const sign = offset < 0 ? "-" : "+";
  return (
    `${pad(local.year, 4)}-${pad(local.month)}-${pad(local.day)}T${pad(local.hour)}:${pad(local.minute)}:${pad(local.second)}` +
    `${sign}${pad(Math.trunc(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`
  );
}

/** The date `days` calendar days after `date`. */
export function addDays(date: LocalDate, days: number): LocalDate {
  const shifted = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return { year: shifted.getUTCFullYear(), month: shifted.getUTCMonth() + 1, day: shifted.getUTCDate() };
}

/** `YYYY-MM-DD`. */
export function formatDate(date: LocalDate): string {
  return `${pad(date.year, 4)}-${pad(date.month)}-${pad(date.day)}`;
}

/** The calendar date an instant falls on in a zone. */
export function localDateOf(instant: number, zone: string): LocalDate {
  const { year, month, day } = wallClock(instant, zone);
  return { year, month, day };
}

/** The day of the week of a date, 0 for Sunday to 6 for Saturday. */
export function weekdayOf(date: LocalDate): number {
  return new Date(Date.UTC(date.year, date.month - 1, date.day)).getUTCDay();
}
