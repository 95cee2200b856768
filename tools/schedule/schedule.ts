/**
 * Pure logic behind the `schedule` MCP server: the tool schemas and the exact
 * allocation of a number of minutes over a number of days.
 *
 * Nothing here touches the file system, the network or the clock, so unit tests
 * exercise everything without starting a process.
 */
import { z } from "zod";

// ---------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------

/** Bounds on `total_minutes`. */
export const TOTAL_MINUTES_MIN = 1;
export const TOTAL_MINUTES_MAX = 100_000;

/** Bounds on `days` (a leap year at most). */
export const DAYS_MIN = 1;
export const DAYS_MAX = 366;

/** Bounds on `daily_limit` (a whole day at most). */
export const DAILY_LIMIT_MIN = 1;
export const DAILY_LIMIT_MAX = 1440;

// ---------------------------------------------------------------------------
// Tool schemas (shared by the server and the tests)
// ---------------------------------------------------------------------------

/**
 * Input of `calculate_schedule`. Strict: unknown keys are rejected. zod never
 * coerces, so a boolean, a numeric string or a float fails `.int()` instead of
 * being turned into a number.
 */
export const CalculateScheduleInputSchema = z
  .object({
    total_minutes: z
      .number()
      .int()
      .min(TOTAL_MINUTES_MIN)
      .max(TOTAL_MINUTES_MAX)
      .describe(`Total minutes to allocate, an integer ${TOTAL_MINUTES_MIN}–${TOTAL_MINUTES_MAX}.`),
    days: z
      .number()
      .int()
      .min(DAYS_MIN)
      .max(DAYS_MAX)
      .describe(`Number of days to spread the minutes over, an integer ${DAYS_MIN}–${DAYS_MAX}.`),
    daily_limit: z
      .number()
      .int()
      .min(DAILY_LIMIT_MIN)
      .max(DAILY_LIMIT_MAX)
      .describe(`Maximum minutes on any one day, an integer ${DAILY_LIMIT_MIN}–${DAILY_LIMIT_MAX}.`),
  })
  .strict();

/** Structured result of `calculate_schedule`: one entry per day, larger shares first, summing to the total. */
export const CalculateScheduleOutputSchema = z.object({
  allocation: z.array(z.number().int().min(0)),
  total_minutes: z.number().int(),
  days: z.number().int(),
  daily_limit: z.number().int(),
});

/** Parsed `calculate_schedule` arguments. */
export type CalculateScheduleInput = z.infer<typeof CalculateScheduleInputSchema>;

/** A computed schedule. */
export type Schedule = z.infer<typeof CalculateScheduleOutputSchema>;

/** A business error as sent to the host: the text content of an `isError` result. */
export interface ScheduleError {
  readonly code: "capacity_exceeded";
  readonly message: string;
}

/** Either a schedule or a business error; never both. */
export type ScheduleOutcome =
  | { readonly ok: true; readonly schedule: Schedule }
  | { readonly ok: false; readonly error: ScheduleError };

// ---------------------------------------------------------------------------
// Allocation
// ---------------------------------------------------------------------------

/**
 * Splits `total` into `days` non-negative integers that differ by at most one
 * and sum to exactly `total`; the larger shares come first
 * (121 over 3 → [41, 40, 40]). Integer arithmetic only, so there is no rounding.
 * @throws RangeError when the arguments are not non-negative integers with `days` ≥ 1.
 */
export function allocateEvenly(total: number, days: number): number[] {
  if (!Number.isSafeInteger(total) || total < 0)
    throw new RangeError(`total must be a non-negative integer, got ${total}`);
  if (!Number.isSafeInteger(days) || days < 1) throw new RangeError(`days must be a positive integer, got ${days}`);
  const base = Math.floor(total / days);
  const remainder = total % days;
  return Array.from({ length: days }, (_, day) => (day < remainder ? base + 1 : base));
}

/**
 * The `calculate_schedule` logic. When the total does not fit in
 * `days × daily_limit`, it returns `capacity_exceeded` and leaves every input
 * as given: raising the limit or adding days is the caller's decision, never
 * this server's. Otherwise the even split never exceeds the limit, because the
 * largest share is ⌈total / days⌉ ≤ daily_limit.
 */
export function calculateSchedule(input: CalculateScheduleInput): ScheduleOutcome {
  const { total_minutes, days, daily_limit } = input;
  const capacity = days * daily_limit;
  if (total_minutes > capacity) {
    const neededLimit = Math.ceil(total_minutes / days);
    const neededDays = Math.ceil(total_minutes / daily_limit);
    return {
      ok: false,
      error: {
        code: "capacity_exceeded",
        message:
          `total_minutes ${total_minutes} exceeds capacity ${capacity} ` +
          `(days ${days} × daily_limit ${daily_limit}) by ${total_minutes - capacity}; ` +
          `it would fit with daily_limit ≥ ${neededLimit}${beyond(neededLimit, DAILY_LIMIT_MAX)} ` +
          `or days ≥ ${neededDays}${beyond(neededDays, DAYS_MAX)}`,
      },
    };
  }
  return { ok: true, schedule: { allocation: allocateEvenly(total_minutes, days), total_minutes, days, daily_limit } };
}

/** A note for the capacity message when a suggested value is past the schema's maximum. */
function beyond(value: number, maximum: number): string {
  return value > maximum ? ` (above the maximum ${maximum})` : "";
}
