import { describe, expect, it } from "vitest";
import { checkSchedule, nextOccurrence } from "../../src/server/crons/schedule.js";

describe("checkSchedule", () => {
  it.each([
    ["0 9 * * 1", "Europe/Berlin"],
    ["*/15 8-18 * * 1-5", "America/New_York"],
    ["0 0 1 * *", undefined],
    ["30 7 * * MON", "UTC"],
  ])("accepts %s in %s", (schedule, zone) => {
    expect(checkSchedule(schedule, zone).ok).toBe(true);
  });
  it.each([
    ["* * *", "UTC", "schedule"],
    ["* * * * * *", "UTC", "schedule"],
    ["61 * * * *", "UTC", "schedule"],
    ["0 0 30 2 *", "UTC", "schedule"],
    ["@daily", "UTC", "schedule"],
    ["0 0 * * *\u0000", "UTC", "schedule"],
    ["0 0 * * *", "Mars/Olympus", "timezone"],
    ["0 0 * * *", "../etc/passwd", "timezone"],
    ["0 0 * * *", "UTC\u0000", "timezone"],
    [5, "UTC", "schedule"],
    ["0 0 * * *", 5, "timezone"],
  ])("refuses %j in %j (%s)", (schedule, zone, path) => {
    const checked = checkSchedule(schedule, zone);
    expect(checked.ok ? undefined : checked.path).toBe(path);
  });
});

describe("nextOccurrence", () => {
  it("is the schedule's next time in its zone, and none past the end time", () => {
    const after = new Date("2026-12-02T06:00:00Z");
    // Monday 09:00 in Berlin (UTC+1 in December).
    expect(nextOccurrence("0 9 * * 1", "Europe/Berlin", after)?.toISOString()).toBe("2026-12-07T08:00:00.000Z");
    expect(nextOccurrence("0 9 * * 1", "Europe/Berlin", after, new Date("2026-12-05T00:00:00Z"))).toBeUndefined();
    // Missed occurrences collapse: the next one after now, however long ago the last was due.
    expect(nextOccurrence("0 * * * *", "UTC", after)?.toISOString()).toBe("2026-12-02T07:00:00.000Z");
  });
});
