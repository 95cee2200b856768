/**
 * The labelled study-plan phrasings (issue 37): requests as students type
 * them, each labelled with what the rules planner must make of it (the plan,
 * the one question it needs, or a refusal that says what it can do). Read
 * against one fixed clock, Thursday 3 December 2026 10:00 UTC (11:00 in
 * Europe/Berlin), in the asker's time zone (`zone`, null when the user has
 * none). Two splits, like retrieval's: `tuning.ts` (the parser was widened
 * while reading its misses) and `heldout.ts` (written with it, before any
 * tuning, and never tuned on). Data types only.
 */
import type { StudyFact } from "../../src/domains/study/parse.js";

/** The clock every phrasing is read against: a Thursday, 11:00 in Berlin. */
export const PHRASING_NOW = Date.parse("2026-12-03T10:00:00Z");

/** A start as `YYYY-MM-DD HH:MM Zone`. */
export type StartLabel = string;

export type Expected =
  | {
      type: "plan";
      total: number;
      days: number;
      daily_limit: number;
      topic: string | null;
      /** Null when the plan stays a schedule (no calendar writes); otherwise its first session's start. */
      start: StartLabel | null;
    }
  | { type: "session"; minutes: number; topic: string | null; start: StartLabel }
  /** The one question: its code, and the facts it asks for. */
  | { type: "question"; code: "missing_start" | "missing_duration"; missing: StudyFact[] }
  /** Out of scope: refused, saying what the planner can do. */
  | { type: "refuse" };

export interface Phrasing {
  id: string;
  text: string;
  /** The asker's time zone, null when their profile names none. */
  zone: string | null;
  /** The asker's courses (the study profile's), for the examples a refusal gives; ["cs301"] when not given. */
  courses?: string[];
  expect: Expected;
}

export const BERLIN = "Europe/Berlin";

export const plan = (
  total: number,
  days: number,
  daily_limit: number,
  topic: string | null,
  start: StartLabel | null = null,
): Expected => ({ type: "plan", total, days, daily_limit, topic, start });
export const session = (minutes: number, topic: string | null, start: StartLabel): Expected => ({
  type: "session",
  minutes,
  topic,
  start,
});
export const question = (code: "missing_start" | "missing_duration", ...missing: StudyFact[]): Expected => ({
  type: "question",
  code,
  missing,
});
export const refuse: Expected = { type: "refuse" };
