/**
 * The calendar server's test switches for `create_study_event` (environment variables, read once at start-up):
 * how a call fails (`WARRANT_CALENDAR_FAIL`), for how many calls (`WARRANT_CALENDAR_FAIL_COUNT`, per process, or
 * `WARRANT_CALENDAR_FAIL_ONCE`, once across processes), and whether `get_write_status` fails.
 */
import { existsSync, writeFileSync } from "node:fs";

export const FAIL_ENV = "WARRANT_CALENDAR_FAIL";
export const FAIL_COUNT_ENV = "WARRANT_CALENDAR_FAIL_COUNT";
export const FAIL_ONCE_ENV = "WARRANT_CALENDAR_FAIL_ONCE";
export const STATUS_FAIL_ENV = "WARRANT_CALENDAR_STATUS_FAIL";

export const FAIL_MODES = ["timeout", "lose_response", "timeout_after_apply", "exit_before_apply"] as const;
export type FailMode = (typeof FAIL_MODES)[number];

export interface FailSwitches {
  readonly failMode: FailMode | undefined;
  /** How many more create_study_event calls the fail switch applies to (Infinity: all). */
  failuresLeft: number;
  /**
   * A marker file: the fail switch applies only while it does not exist, and the first failure makes it, so a
   * restarted process (the host's reconnect after `exit_before_apply`) does not fail again.
   */
  readonly onceMarker: string | undefined;
  /** get_write_status always fails (it cannot tell whether a write was applied). */
  readonly statusFails: boolean;
}

/** The fail switch; unset or empty means none. */
function parseFailMode(value: string | undefined): FailMode | undefined {
  if (value === undefined || value === "") return undefined;
  const mode = FAIL_MODES.find((candidate) => candidate === value);
  if (mode === undefined)
    throw new Error(`unknown ${FAIL_ENV}=${JSON.stringify(value)} (expected one of ${FAIL_MODES.join(", ")})`);
  return mode;
}

/** `WARRANT_CALENDAR_FAIL_COUNT` as a positive integer; unset or empty means every call. */
function parseFailCount(value: string | undefined): number {
  if (value === undefined || value === "") return Number.POSITIVE_INFINITY;
  if (!/^[1-9][0-9]{0,5}$/.test(value))
    throw new Error(`invalid ${FAIL_COUNT_ENV}=${JSON.stringify(value)} (expected a positive integer)`);
  return Number(value);
}

/** `WARRANT_CALENDAR_STATUS_FAIL`: unset or empty means none, `error` makes get_write_status fail. */
function parseStatusFail(value: string | undefined): boolean {
  if (value === undefined || value === "") return false;
  if (value === "error") return true;
  throw new Error(`unknown ${STATUS_FAIL_ENV}=${JSON.stringify(value)} (expected error)`);
}

/** The switches from `environment`; throws on a malformed one. */
export function parseSwitches(environment: NodeJS.ProcessEnv): FailSwitches {
  const once = environment[FAIL_ONCE_ENV]?.trim();
  return {
    failMode: parseFailMode(environment[FAIL_ENV]),
    failuresLeft: parseFailCount(environment[FAIL_COUNT_ENV]),
    onceMarker: once === undefined || once === "" ? undefined : once,
    statusFails: parseStatusFail(environment[STATUS_FAIL_ENV]),
  };
}

/** The fail mode for this create_study_event call, consuming one of the remaining failures. */
export function takeFailure(switches: FailSwitches): FailMode | undefined {
  if (switches.failMode === undefined || switches.failuresLeft <= 0) return undefined;
  if (switches.onceMarker !== undefined) {
    if (existsSync(switches.onceMarker)) return undefined;
    writeFileSync(switches.onceMarker, `${switches.failMode}\n`);
  }
  switches.failuresLeft -= 1;
  return switches.failMode;
}
