/**
 * Wall-clock arithmetic for study sessions: zone validation, offsets across
 * daylight-saving changes, nonexistent local times, ISO output with the
 * zone's offset, and sessions on consecutive days.
 */
import { describe, expect, it } from "vitest";
import { divideEvenly, eventArguments, sessionsOf } from "../../src/domains/study/sessions.js";
import {
  addDays,
  formatInZone,
  isKnownZone,
  isValidDate,
  offsetMinutes,
  toInstant,
} from "../../src/domains/study/time.js";

describe("time zones", () => {
  it("knows IANA names and UTC, and nothing else", () => {
    expect(isKnownZone("UTC")).toBe(true);
    expect(isKnownZone("Europe/Berlin")).toBe(true);
    expect(isKnownZone("America/Argentina/Buenos_Aires")).toBe(true);
    expect(isKnownZone("Mars/Base")).toBe(false);
    expect(isKnownZone("Europe/../etc")).toBe(false);
    expect(isKnownZone("")).toBe(false);
  });

  it("computes offsets on both sides of a daylight-saving change", () => {
    expect(offsetMinutes(Date.UTC(2026, 11, 2, 18), "Europe/Berlin")).toBe(60);
    expect(offsetMinutes(Date.UTC(2026, 6, 2, 18), "Europe/Berlin")).toBe(120);
    expect(offsetMinutes(Date.UTC(2026, 11, 2, 18), "America/New_York")).toBe(-300);
    expect(offsetMinutes(Date.UTC(2026, 11, 2, 18), "Asia/Kolkata")).toBe(330);
  });

  it("turns local times into instants and refuses times the clocks skip", () => {
    expect(toInstant({ year: 2026, month: 12, day: 2, hour: 18, minute: 0 }, "UTC")).toBe(Date.UTC(2026, 11, 2, 18));
    expect(toInstant({ year: 2026, month: 12, day: 2, hour: 19, minute: 0 }, "Europe/Berlin")).toBe(
      Date.UTC(2026, 11, 2, 18),
    );
    // 2027-03-28 02:30 does not exist in Berlin: the clocks go from 02:00 to 03:00.
    expect(toInstant({ year: 2027, month: 3, day: 28, hour: 2, minute: 30 }, "Europe/Berlin")).toBeUndefined();
  });

  it("writes instants with the zone's offset", () => {
    expect(formatInZone(Date.UTC(2026, 11, 2, 18), "UTC")).toBe("2026-12-02T18:00:00+00:00");
    expect(formatInZone(Date.UTC(2026, 11, 2, 18), "Europe/Berlin")).toBe("2026-12-02T19:00:00+01:00");
    expect(formatInZone(Date.UTC(2026, 11, 2, 18), "America/New_York")).toBe("2026-12-02T13:00:00-05:00");
  });

  it("checks dates and adds days across months and years", () => {
    expect(isValidDate({ year: 2026, month: 2, day: 29 })).toBe(false);
    expect(isValidDate({ year: 2028, month: 2, day: 29 })).toBe(true);
    expect(addDays({ year: 2026, month: 12, day: 31 }, 1)).toEqual({ year: 2027, month: 1, day: 1 });
  });
});

describe("sessions", () => {
  const start = { date: { year: 2026, month: 12, day: 2 }, hour: 18, minute: 0, zone: "UTC" };

  it("puts one session a day at the start time, skipping empty days", () => {
    expect(sessionsOf(start, [40, 40, 40])).toEqual({
      sessions: [
        { day: 1, minutes: 40, start: "2026-12-02T18:00:00+00:00", end: "2026-12-02T18:40:00+00:00" },
        { day: 2, minutes: 40, start: "2026-12-03T18:00:00+00:00", end: "2026-12-03T18:40:00+00:00" },
        { day: 3, minutes: 40, start: "2026-12-04T18:00:00+00:00", end: "2026-12-04T18:40:00+00:00" },
      ],
    });
    expect(sessionsOf(start, [1, 1, 0])).toMatchObject({ sessions: [{ day: 1 }, { day: 2 }] });
  });

  it("keeps the local time across a daylight-saving change", () => {
    const berlin = { date: { year: 2027, month: 3, day: 27 }, hour: 18, minute: 0, zone: "Europe/Berlin" };
    const planned = sessionsOf(berlin, [60, 60]);
    expect(planned).toMatchObject({
      sessions: [{ start: "2027-03-27T18:00:00+01:00" }, { start: "2027-03-28T18:00:00+02:00" }],
    });
  });

  it("says when a session's start does not exist", () => {
    const skipped = { date: { year: 2027, month: 3, day: 27 }, hour: 2, minute: 30, zone: "Europe/Berlin" };
    expect(sessionsOf(skipped, [30, 30])).toEqual({
      reason: expect.stringMatching(/^invalid_request: 02:30 does not exist on 2027-03-28 in Europe\/Berlin/),
    });
  });

  it("sends only the arguments the calendar's schema declares", () => {
    const session = { day: 1, minutes: 40, start: "2026-12-02T18:00:00+00:00", end: "2026-12-02T18:40:00+00:00" };
    const properties = { title: {}, start: {}, end: {}, timezone: {}, calendar: {} };
    const notes = [{ note_id: "cs301.self-attention", title: "Self-attention", ref: "cs301.self-attention@1" }];
    const options = { topic: "attention", session, days: 3, zone: "UTC", calendar: "study", notes };
    const without = eventArguments(
      { name: "create_study_event", description: "", parameters: { type: "object", properties } },
      options,
    );
    expect(without).toEqual({
      title: "Study: attention (40 min)",
      start: session.start,
      end: session.end,
      timezone: "UTC",
      calendar: "study",
    });
    const withDescription = eventArguments(
      {
        name: "create_study_event",
        description: "",
        parameters: { type: "object", properties: { ...properties, description: { maxLength: 60 } } },
      },
      options,
    );
    expect(withDescription["description"]).toBe(
      "Topic: attention. Session 1 of 3 (40 min). Notes: cs301.self-".slice(0, 60),
    );
  });

  it("divides minutes exactly, larger shares first", () => {
    expect(divideEvenly(180, 3)).toEqual([60, 60, 60]);
    expect(divideEvenly(100, 3)).toEqual([34, 33, 33]);
    expect(divideEvenly(180, 2).reduce((sum, part) => sum + part, 0)).toBe(180);
    expect(divideEvenly(5, 0)).toEqual([]);
  });
});
