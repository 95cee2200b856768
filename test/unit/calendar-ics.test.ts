/** The .ics export: escaping, folding, UTC stamps and one VEVENT per event. */
import { describe, expect, it } from "vitest";
import type { CalendarEvent } from "../../tools/calendar/calendar.js";
import { escapeText, eventsToIcs, foldLine, utcStamp } from "../../tools/calendar/ics.js";

const event: CalendarEvent = {
  event_id: "evt_1",
  user_id: "alice",
  title: "Study attention; self, cross",
  description: "Topic: attention\nNotes: cs301/a, cs301/b",
  start: "2026-12-02T19:00:00+01:00",
  end: "2026-12-02T20:00:00+01:00",
  timezone: "Europe/Berlin",
  calendar: "study",
  idempotency_key: "key-0001",
  created_at: "2026-12-01T08:00:00.000Z",
};

describe("ics export", () => {
  it("escapes TEXT values", () => {
    expect(escapeText("a\\b;c,d\ne")).toBe("a\\\\b\\;c\\,d\\ne");
  });

  it("writes instants in UTC basic format", () => {
    expect(utcStamp("2026-12-02T19:00:00+01:00")).toBe("20261202T180000Z");
    expect(() => utcStamp("not a date")).toThrow();
  });

  it("folds lines at 75 octets without splitting a character", () => {
    const folded = foldLine(`DESCRIPTION:${"é".repeat(100)}`);
    const physical = folded.split("\r\n");
    expect(physical.length).toBeGreaterThan(1);
    for (const line of physical) expect(Buffer.byteLength(line, "utf8")).toBeLessThanOrEqual(75);
    expect(physical.slice(1).every((line) => line.startsWith(" "))).toBe(true);
    expect(physical.map((line, index) => (index === 0 ? line : line.slice(1))).join("")).toBe(
      `DESCRIPTION:${"é".repeat(100)}`,
    );
    expect(foldLine("SHORT:x")).toBe("SHORT:x");
  });

  it("renders one VEVENT per event with CRLF line ends", () => {
    const ics = eventsToIcs([event, { ...event, event_id: "evt_2", description: undefined } as CalendarEvent]);
    expect(ics.startsWith("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n")).toBe(true);
    expect(ics.endsWith("END:VCALENDAR\r\n")).toBe(true);
    expect(ics.replace(/\r\n/g, "")).not.toMatch(/\n/);
    expect(ics.match(/BEGIN:VEVENT/g)).toHaveLength(2);
    expect(ics).toContain("UID:evt_1@warrant\r\n");
    expect(ics).toContain("DTSTART:20261202T180000Z\r\nDTEND:20261202T190000Z\r\n");
    expect(ics).toContain("SUMMARY:Study attention\\; self\\, cross\r\n");
    expect(ics).toContain("DESCRIPTION:Topic: attention\\nNotes: cs301/a\\, cs301/b\r\n");
    expect(ics.match(/DESCRIPTION:/g)).toHaveLength(1);
    expect(eventsToIcs([])).toBe(
      "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Warrant//Calendar 0.1//EN\r\nCALSCALE:GREGORIAN\r\nEND:VCALENDAR\r\n",
    );
  });
});
