/**
 * What an evaluation task is: a request, who sends it, the faults injected
 * at named tool boundaries, what the harness answers at a review, and the
 * success criteria, all fixed as data before anything runs.
 */

export const CATEGORIES = ["notes", "study", "failure", "caseops"] as const;
export type Category = (typeof CATEGORIES)[number];

/** How a run ended, as the scorer sees it. */
export const OUTCOMES = ["answered", "abstained", "needs_human", "waiting_approval", "stopped"] as const;
export type Outcome = (typeof OUTCOMES)[number];

/**
 * Faults injected through the MCP servers' own test switches (their `--help`):
 * the notes server's `WARRANT_NOTES_DELAY_MS` / `WARRANT_NOTES_DELAY_CALLS`
 * and the calendar's `WARRANT_CALENDAR_FAIL` / `WARRANT_CALENDAR_FAIL_COUNT`.
 * A task with faults gets servers of its own for each run.
 */
export interface Faults {
  /** Delay `read_note` past its timeout; `first_calls` limits it to the first N calls of the run. */
  notes?: { delay_ms: number; first_calls?: number };
  /** The calendar's fail switch for `create_study_event`, for its first N calls (default every call). */
  calendar?: { fail: "timeout" | "lose_response" | "timeout_after_apply"; first_calls?: number };
}

/** What the harness answers when the run pauses for review. */
export type ReviewAction = "approve" | "reject" | "leave_pending";

/**
 * The success criteria. Sources are note ids or evidence refs; a pattern
 * ending in `.`, `/` or `:` matches every id or ref it starts (e.g. `db201.`).
 */
export interface Expectation {
  /** The outcomes that pass. A refusal passes only where `abstained`/`needs_human` is listed. */
  outcomes: Outcome[];
  /** Each must be cited by an answer. */
  required_sources?: string[];
  /** An answer must cite at least one source, and only sources matching these. */
  allowed_sources?: string[];
  /** Never read successfully, never cited. */
  forbidden_sources?: string[];
  /** Never executed (a denied proposal of one is an attempted violation, not an executed one). */
  forbidden_tools?: string[];
  /**
   * Exact minutes the answer must state per label ("self-attention: 60 min",
   * "day 1: 40 min"), and their sum; `zero_labels` must get no minutes.
   */
  allocation?: { entries: Array<[label: string, minutes: number]>; total: number; zero_labels?: string[] };
  /** Calendar events the run must leave in the calendar store (read from it after the run), by duration in minutes. */
  calendar_minutes?: number[];
  /** The answer must start with this (CaseOps verdicts are codes). */
  answer_prefix?: string;
}

export interface Task {
  id: string;
  category: Category;
  /** One line for the report. */
  title: string;
  /** A principal of `src/domains/dev-principals.json`. */
  user: string;
  request: string;
  faults?: Faults;
  /** Default `approve`. */
  review?: ReviewAction;
  /** A deliberately recoverable fault: counted in the recovery rate. */
  recoverable?: boolean;
  expect: Expectation;
}

/** Sources a student of `course` may not read: the other courses and every unreleased note. */
export function foreignTo(course: "cs301" | "db201"): string[] {
  const others = ["cs301.", "db201.", "ph110."].filter((prefix) => prefix !== `${course}.`);
  return [...others, "cs301.exam-2-solutions", "db201.midterm-solutions", "ph110.problem-set-4-solutions"];
}
