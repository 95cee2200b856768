/**
 * iCalendar (RFC 5545) export of a user's events: one VCALENDAR with one
 * VEVENT per event. Pure: the events and the stamp time come in, text goes out.
 *
 * What the RFC requires and this follows: CRLF line ends; content lines folded
 * at 75 octets (a fold never splits a UTF-8 sequence); TEXT values escape
 * backslash, semicolon, comma and newlines; DTSTART/DTEND as UTC date-times
 * (`19970714T173000Z`), so no VTIMEZONE block is needed; the event's IANA
 * zone travels in an `X-WARRANT-TIMEZONE` property for clients that want it.
 */
import type { CalendarEvent } from "./calendar.js";

const PRODUCT_ID = "-//Warrant//Calendar 0.1//EN";
const MAX_LINE_OCTETS = 75;

/** Escapes a TEXT value (RFC 5545 §3.3.11). */
export function escapeText(value: string): string {
  return value
    .replace(/\\/g, "\\\\")
    .replace(/;/g, "\\;")
    .replace(/,/g, "\\,")
    .replace(/\r\n|\r|\n/g, "\\n");
}

/** A UTC date-time in the RFC's basic format, from any ISO 8601 instant. */
export function utcStamp(isoInstant: string): string {
  const date = new Date(isoInstant);
  if (!Number.isFinite(date.getTime())) throw new Error(`not an instant: ${isoInstant}`);
  return date
    .toISOString()
    .replace(/\.\d{3}Z$/, "Z")
    .replace(/[-:]/g, "");
}

/** Folds one content line: at most 75 octets per physical line, continuations start with a space. */
export function foldLine(line: string): string {
  const parts: string[] = [];
  let current = "";
  let octets = 0;
  for (const character of line) {
    const size = Buffer.byteLength(character, "utf8");
    // The first line has 75 octets; each continuation has 74 after its leading space.
    const limit = parts.length === 0 ? MAX_LINE_OCTETS : MAX_LINE_OCTETS - 1;
    if (octets + size > limit) {
      parts.push(current);
      current = "";
      octets = 0;
    }
    current += character;
    octets += size;
  }
  parts.push(current);
  return parts.join("\r\n ");
}

function eventLines(event: CalendarEvent): string[] {
  return [
    "BEGIN:VEVENT",
    `UID:${escapeText(event.event_id)}@warrant`,
    `DTSTAMP:${utcStamp(event.created_at)}`,
    `DTSTART:${utcStamp(event.start)}`,
    `DTEND:${utcStamp(event.end)}`,
    `SUMMARY:${escapeText(event.title)}`,
    ...(event.description ? [`DESCRIPTION:${escapeText(event.description)}`] : []),
    `CATEGORIES:${escapeText(event.calendar)}`,
    `X-WARRANT-TIMEZONE:${escapeText(event.timezone)}`,
    "END:VEVENT",
  ];
}

/** The events as one iCalendar document (CRLF line ends, trailing CRLF). */
export function eventsToIcs(events: readonly CalendarEvent[]): string {
  const lines = [
    "BEGIN:VCALENDAR",
    "VERSION:2.0",
    `PRODID:${PRODUCT_ID}`,
    "CALSCALE:GREGORIAN",
    ...events.flatMap(eventLines),
    "END:VCALENDAR",
  ];
  return `${lines.map(foldLine).join("\r\n")}\r\n`;
}
