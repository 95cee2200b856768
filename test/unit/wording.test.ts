/** Proposals, outcomes and statuses in people's words (src/wording/proposal.ts), shared by the page and the CLI. */
import { describe, expect, it } from "vitest";
import {
  describeAction,
  diffArguments,
  expiredWords,
  formatDuration,
  outcomeWords,
  riskWords,
  shorten,
  spanWords,
  statusWords,
  terminationWords,
  timesInWords,
  valueWords,
} from "../../src/wording/proposal.js";

const ISO = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;
const EVENT = {
  user_id: "alice",
  idempotency_key: "k-1",
  title: "Study: attention",
  description: "Topic: attention",
  start: "2026-12-14T18:00:00+00:00",
  end: "2026-12-14T18:40:00+00:00",
  timezone: "Europe/Berlin",
  calendar: "study",
};

describe("wording", () => {
  it("says a study event as a person would, in the viewer's zone", () => {
    expect(describeAction("create_study_event", EVENT, "Europe/Berlin").summary).toBe(
      "Add to calendar study: Study: attention (40 min), Mon 14 Dec, 19:00–19:40 (Europe/Berlin)",
    );
    // Another viewer zone names the event's own zone.
    expect(describeAction("create_study_event", EVENT, "UTC").summary).toBe(
      "Add to calendar study: Study: attention (40 min), Mon 14 Dec, 18:00–18:40 (UTC; the event's zone is Europe/Berlin)",
    );
  });

  it("keeps host-filled arguments out and shows no ISO time in the table", () => {
    const fields = describeAction("create_study_event", EVENT, "UTC").fields;
    expect(fields.map((field) => field.label)).toEqual([
      "Title",
      "Description",
      "Starts",
      "Ends",
      "Time zone",
      "Calendar",
    ]);
    expect(fields.some((field) => ISO.test(field.value))).toBe(false);
  });

  it("reads an unknown tool's arguments as a table, never a JSON line, bounded in depth and length", () => {
    const nested: Record<string, unknown> = { a: { b: { c: { d: { e: 1 } } } } };
    const words = describeAction(
      "frobnicate_things",
      { query: "x".repeat(200), nested, list: [1, "two"], none: null },
      "UTC",
    );
    expect(words.summary.startsWith("Frobnicate things: “")).toBe(true);
    expect(words.summary.length).toBeLessThan(120);
    const text = words.fields.map((field) => `${field.label}=${field.value}`).join("|");
    expect(text).not.toMatch(/[{}"]/);
    expect(text).toContain("List=1, two");
    expect(text).toContain("None=—");
    expect(text).toContain("…");
    expect(valueWords("y".repeat(5_000), "UTC").length).toBeLessThanOrEqual(400);
  });

  it("survives hostile input: control characters, a bad zone, bad dates, wrong types", () => {
    expect(() => describeAction("create_study_event", { start: 5, end: {}, title: ["x"] }, "Not/AZone")).not.toThrow();
    expect(spanWords("not a date", "nope", "UTC")).toBe("not a date – nope");
    expect(spanWords(EVENT.start, EVENT.end, "Not/AZone")).toContain("(UTC");
    expect(describeAction("create_study_event", { ...EVENT, title: "a\u0000b\u202e" }, "UTC").summary).toContain("a");
    expect(expiredWords("garbage", "", "UTC")).toBe("this request expired at its deadline; its owner must ask again");
  });

  it("shows an edit as a diff of what changed", () => {
    const changes = diffArguments(
      EVENT,
      { ...EVENT, start: "2026-12-14T19:00:00Z", end: "2026-12-14T19:40:00Z" },
      "UTC",
    );
    expect(changes).toEqual([
      { label: "Starts", before: "Mon 14 Dec, 18:00", after: "Mon 14 Dec, 19:00" },
      { label: "Ends", before: "Mon 14 Dec, 18:40", after: "Mon 14 Dec, 19:40" },
    ]);
    expect(diffArguments(EVENT, EVENT, "UTC")).toEqual([]);
  });

  it("puts durations, statuses, risks and outcomes in words", () => {
    expect(formatDuration(119_781)).toBe("2 min");
    expect(formatDuration(40 * 60_000)).toBe("40 min");
    expect(formatDuration(125 * 60_000)).toBe("2 h 5 min");
    expect(formatDuration(500)).toBe("under a second");
    expect(formatDuration(Number.NaN)).toBe("—");
    expect(statusWords("interrupted")).toBe("waiting for review");
    expect(statusWords("idle")).toBe("answered");
    expect(statusWords("whatever")).toBe("unknown");
    expect(riskWords("write_reversible")).toBe("makes a change that can be undone");
    expect(terminationWords({ code: "budget_exhausted", budget: "deadline" })).toBe(
      "Stopped: the time budget ran out.",
    );
    expect(terminationWords({ code: "final_answer" })).toBe("Answered.");
    expect(outcomeWords("rejected", "Not that day")).toBe("Rejected: “Not that day”");
    expect(outcomeWords("edited_and_created")).toBe("Edited, then done");
    expect(expiredWords("2026-12-05T18:47:00Z", "alice", "UTC")).toBe(
      "this request expired at 18:47; alice must ask again",
    );
  });

  it("shortens long titles to one line", () => {
    const title = shorten("2026-12-05 18:00 UTC. Plan 5 hours of revision on normalization and more", 30);
    expect(title.length).toBeLessThanOrEqual(30);
    expect(title.endsWith("…")).toBe(true);
    expect(shorten("short")).toBe("short");
    expect(shorten("a\n\nb")).toBe("a b");
  });
});

describe("instants in an answer and titles that say their length", () => {
  it("says an answer's ISO instants in the viewer's zone, a same-day span once", () => {
    const answer =
      "- Study: attention (40 min): 2026-12-02T18:00:00+00:00 to 2026-12-02T18:40:00+00:00 (UTC)\n" +
      "- a session at 2026-12-04T18:00:00Z: rejected";
    const said = timesInWords(answer, "Europe/Berlin");
    expect(said).toBe(
      "- Study: attention (40 min): Wed 2 Dec, 19:00–19:40 (UTC)\n- a session at Fri 4 Dec, 19:00: rejected",
    );
    expect(said).not.toMatch(ISO);
    expect(timesInWords("2026-12-02T23:30:00Z to 2026-12-03T00:10:00Z", "UTC")).toBe(
      "Wed 2 Dec, 23:30–Thu 3 Dec, 00:10",
    );
    expect(timesInWords("no instants, 2026-12-02 only", "UTC")).toBe("no instants, 2026-12-02 only");
  });

  it("does not repeat a length the title already says", () => {
    const args = { ...EVENT, title: "Study: attention (40 min)" };
    expect(describeAction("create_study_event", args, "UTC").summary).not.toContain("(40 min) (40 min)");
    expect(describeAction("create_study_event", args, "UTC").summary).toMatch(
      /^Add to calendar \S+: Study: attention \(40 min\), /,
    );
  });
});
