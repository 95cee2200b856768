/**
 * A cron's schedule: a five-field cron expression (minute, hour, day of
 * month, month, day of week) in an IANA time zone, validated strictly before
 * it is stored, and its next occurrence. The expression is parsed by
 * `cron-parser` (pinned); the field count and characters are checked here
 * first, since the parser also accepts fewer fields.
 */
import { CronExpressionParser } from "cron-parser";

export const MAX_SCHEDULE_CHARS = 128;
const FIELD = /^[0-9A-Za-z*,/?#-]{1,64}$/;
const ZONE = /^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/;

export type ScheduleCheck =
  | { ok: true; schedule: string; timezone: string }
  | { ok: false; path: string; reason: string };

/** Whether `timezone` names a zone this runtime knows (IANA names, e.g. `Europe/Berlin`, `UTC`). */
export function isTimeZone(timezone: string): boolean {
  if (!ZONE.test(timezone)) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/** Checks a schedule and its zone (UTC when absent): five fields, known names, an occurrence that exists. */
export function checkSchedule(schedule: unknown, timezone: unknown): ScheduleCheck {
  const zone = timezone === undefined || timezone === null ? "UTC" : timezone;
  if (typeof zone !== "string" || !isTimeZone(zone))
    return { ok: false, path: "timezone", reason: "must be an IANA time zone name (e.g. Europe/Berlin)" };
  if (typeof schedule !== "string") return { ok: false, path: "schedule", reason: "must be a string" };
  if (schedule.length > MAX_SCHEDULE_CHARS)
    return { ok: false, path: "schedule", reason: `is longer than ${MAX_SCHEDULE_CHARS} characters` };
  const fields = schedule.trim().split(/ +/);
  if (fields.length !== 5 || fields.some((field) => !FIELD.test(field)))
    return {
      ok: false,
      path: "schedule",
      reason: "must be five cron fields (minute hour day-of-month month day-of-week)",
    };
  try {
    const next = CronExpressionParser.parse(fields.join(" "), { tz: zone, strict: false }).next();
    if (Number.isNaN(next.getTime())) throw new Error("no occurrence");
  } catch (error) {
    return { ok: false, path: "schedule", reason: `is not a valid cron expression (${firstLine(error)})` };
  }
  return { ok: true, schedule: fields.join(" "), timezone: zone };
}

/** The first occurrence strictly after `after`; undefined when there is none before `endTime`. */
export function nextOccurrence(
  schedule: string,
  timezone: string,
  after: Date,
  endTime?: Date | null,
): Date | undefined {
  const expression = CronExpressionParser.parse(schedule, { tz: timezone, currentDate: after });
  if (!expression.hasNext()) return undefined;
  const next = expression.next().toDate();
  if (endTime && next.getTime() > endTime.getTime()) return undefined;
  return next;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n", 1)[0]?.slice(0, 200) ?? "";
}
