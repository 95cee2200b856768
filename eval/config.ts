/**
 * The configuration every evaluated graph runs on: the shipped
 * `warrant.config.json` (same servers, contracts and review policy) with
 * three changes, the same for every configuration:
 * - the notes server serves the eval's own snapshot (`eval/fixtures/notes.json`),
 *   so the planted instruction and the unreleased notes are fixed;
 * - `read_note` and `create_study_event` time out after
 *   {@link EVAL_TIMEOUTS_MS} instead of 10 s / 5 s, so an injected timeout
 *   costs seconds, not minutes;
 * - a task's faults become the servers' test switches in their environment.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { WarrantConfig } from "../src/policy/config.js";
import type { Faults } from "./task.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** The eval's note snapshot. */
export const EVAL_NOTES_PATH = path.join(HERE, "fixtures", "notes.json");

/** Per-tool timeouts in the eval (ms); the injected notes delay is longer than this. */
export const EVAL_TIMEOUTS_MS = { read_note: 1_500, create_study_event: 2_000 } as const;

/** Where calendar events live when the eval runs on the embedded database (no Postgres server for the child). */
export interface CalendarPlacement {
  /** The calendar's store file; unset when it shares the host's Postgres. */
  dataPath?: string;
}

/** The servers' test switches for a task's faults. */
export function faultEnvironment(faults: Faults | undefined): {
  notes: Record<string, string>;
  calendar: Record<string, string>;
} {
  const notes: Record<string, string> = {};
  const calendar: Record<string, string> = {};
  if (faults?.notes) {
    notes["WARRANT_NOTES_DELAY_MS"] = String(faults.notes.delay_ms);
    if (faults.notes.first_calls !== undefined) notes["WARRANT_NOTES_DELAY_CALLS"] = String(faults.notes.first_calls);
  }
  if (faults?.calendar) {
    calendar["WARRANT_CALENDAR_FAIL"] = faults.calendar.fail;
    if (faults.calendar.first_calls !== undefined)
      calendar["WARRANT_CALENDAR_FAIL_COUNT"] = String(faults.calendar.first_calls);
  }
  return { notes, calendar };
}

/** A copy of `base` set up for the eval (see the header); `base` is not changed. */
export function evalConfig(
  base: WarrantConfig,
  faults: Faults | undefined,
  calendar: CalendarPlacement = {},
): WarrantConfig {
  const config: WarrantConfig = structuredClone(base);
  const switches = faultEnvironment(faults);
  const notes = config.servers["notes"];
  if (notes?.transport === "stdio") {
    notes.args = [...notes.args, "--data", EVAL_NOTES_PATH];
    notes.env = { ...notes.env, ...switches.notes };
  }
  const calendarServer = config.servers["calendar"];
  if (calendarServer?.transport === "stdio") {
    calendarServer.env = {
      ...calendarServer.env,
      ...switches.calendar,
      ...(calendar.dataPath ? { WARRANT_CALENDAR_DATA: calendar.dataPath } : {}),
    };
  }
  for (const [tool, timeout] of Object.entries(EVAL_TIMEOUTS_MS)) {
    const contract = config.tools[tool];
    if (contract) contract.timeout_ms = timeout;
  }
  return config;
}
