/**
 * Relative days against the run's clock (domains/study/relative.ts,
 * start.ts, profile.ts): which date "Friday", "next week" and "the next 3
 * days" are, in the user's zone; what is asked when the zone or the clock is
 * missing; and hostile text and profile data that must neither throw nor
 * produce a plan.
 */
import { HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { PrincipalSchema } from "../../src/auth/principal.js";
import { CAN_DO } from "../../src/domains/repertoire.js";
import { decide } from "../../src/domains/rules-planner.js";
import { parseStudyRequest } from "../../src/domains/study/parse.js";
import { profileOf, STUDY_PROFILE, studyProfileProvider } from "../../src/domains/study/profile.js";
import { resolveRelativeDay } from "../../src/domains/study/relative.js";
import type { ContextProviderInput } from "../../src/ports.js";

/** Thursday 3 December 2026, 10:00 UTC (11:00 in Berlin). */
const THURSDAY = Date.parse("2026-12-03T10:00:00Z");
const clock = (zone: string | null, now = THURSDAY) => ({ now, zone });

describe("resolving a relative day", () => {
  it("takes the next such weekday after today, a week ahead on the same weekday", () => {
    const berlin = clock("Europe/Berlin");
    expect(resolveRelativeDay({ kind: "weekday", weekday: 5 }, berlin, "Europe/Berlin", undefined)).toEqual({
      year: 2026,
      month: 12,
      day: 4,
    });
    expect(resolveRelativeDay({ kind: "weekday", weekday: 4 }, berlin, "Europe/Berlin", undefined)).toEqual({
      year: 2026,
      month: 12,
      day: 10,
    });
    expect(resolveRelativeDay({ kind: "next_week" }, berlin, "Europe/Berlin", undefined)).toEqual({
      year: 2026,
      month: 12,
      day: 7,
    });
  });

  it("reads today in the user's zone, not the server's", () => {
    // 23:30 UTC on Thursday is already Friday in Tokyo: "tomorrow" there is Saturday.
    const late = Date.parse("2026-12-03T23:30:00Z");
    const parsed = parseStudyRequest("Schedule 1 hour of attention tomorrow at 09:00", clock("Asia/Tokyo", late));
    expect(parsed.type === "request" && parsed.request.kind === "session" && parsed.request.start.date).toEqual({
      year: 2026,
      month: 12,
      day: 5,
    });
  });

  it("starts 'the next 3 days' today while the time is ahead, else tomorrow", () => {
    const ahead = parseStudyRequest("Schedule 30 min of BM25 every day for the next 3 days at 18:00 UTC", clock(null));
    const passed = parseStudyRequest("Schedule 30 min of BM25 every day for the next 3 days at 08:00 UTC", clock(null));
    const dayOf = (parse: ReturnType<typeof parseStudyRequest>) =>
      parse.type === "request" && parse.request.kind === "plan" ? parse.request.start?.date.day : undefined;
    expect(dayOf(ahead)).toBe(3);
    expect(dayOf(passed)).toBe(4);
    // 30 a day for 3 days is 90 minutes, never 30 spread thin.
    expect(ahead.type === "request" && ahead.request.kind === "plan" && ahead.request.total_minutes).toBe(90);
  });

  it("asks for the zone when neither the request nor the profile names one, and for a date without a clock", () => {
    const noZone = parseStudyRequest("Schedule 1 hour of attention tomorrow at 18:00", clock(null));
    expect(noZone).toMatchObject({ type: "needs_human", missing: ["time_zone"] });
    const noClock = parseStudyRequest("Schedule 1 hour of attention tomorrow at 18:00 UTC");
    expect(noClock).toMatchObject({ type: "needs_human", missing: ["start_date"] });
    expect(noClock.type === "needs_human" && noClock.reason).toMatch(
      /^missing_start: .*"tomorrow" needs a calendar date/,
    );
  });
});

describe("hostile text", () => {
  const hostile = [
    "\u0000Schedule 1 hour of attention tomorrow at 18:00\u0007",
    `Schedule ${"tomorrow ".repeat(5000)}1 hour of attention at 18:00`,
    `${"a".repeat(100_000)} schedule 2 hours tomorrow`,
    "Schedule 99999999999999999999 hours of attention tomorrow at 18:00",
    "Schedule -5 hours of attention on Friday at 18:00",
    "Schedule 1 hour of attention on Friday at 99:99",
    "Schedule 1 hour of attention on Friday at 18:00 Mars/Olympus",
    "schedule 1 hour of \u202e\u200battention\u2028 on Friday at 18:00",
  ];
  for (const text of hostile) {
    it(`neither throws nor plans something unstated: ${JSON.stringify(text.slice(0, 50))}`, () => {
      const started = Date.now();
      const parsed = parseStudyRequest(text, clock("Europe/Berlin"));
      expect(Date.now() - started).toBeLessThan(1000);
      if (parsed.type === "request" && parsed.request.kind === "session") {
        expect(parsed.request.minutes).toBeGreaterThanOrEqual(1);
        expect(parsed.request.minutes).toBeLessThanOrEqual(1440);
      }
      if (parsed.type === "request" && parsed.request.kind === "plan")
        expect(parsed.request.total_minutes).toBeLessThanOrEqual(6000);
    });
  }
  it("refuses impossible amounts and unknown zones with a typed reason", () => {
    for (const text of hostile.slice(3, 7)) {
      const parsed = parseStudyRequest(text, clock("Europe/Berlin"));
      // No plan: a typed question or refusal ("-5 hours" states no duration at all).
      expect(parsed.type, text).not.toBe("request");
      if (parsed.type === "needs_human") expect(parsed.reason).toMatch(/^(?:invalid_request|missing_\w+):/);
    }
  });
});

describe("the study profile", () => {
  const input = (principal: unknown): ContextProviderInput =>
    ({
      principal,
      now: THURSDAY,
      request: "x",
      threadId: "t",
      offered: [],
      tools: {},
    }) as unknown as ContextProviderInput;
  const alice = { user_id: "alice", tenant: "uni", role: "student", scopes: [], grants: { courses: ["cs301"] } };

  it("carries the run's clock, the user's known zone and courses; an unknown zone is none", async () => {
    const known = await studyProfileProvider.load(input({ ...alice, time_zone: "Europe/Berlin" }));
    expect(known?.data).toEqual({ now: THURSDAY, time_zone: "Europe/Berlin", courses: ["cs301"] });
    expect(known?.model_note).toBeNull();
    const unknown = await studyProfileProvider.load(input({ ...alice, time_zone: "Mars/Olympus" }));
    expect(unknown?.data).toMatchObject({ time_zone: null });
  });

  it("is read back only when well formed", () => {
    const entry = (data: unknown) => ({ [STUDY_PROFILE]: { data, model_note: null } });
    expect(profileOf(undefined)).toBeUndefined();
    expect(profileOf(entry({ now: "today", time_zone: null, courses: [] }))).toBeUndefined();
    expect(profileOf(entry({ now: -1, time_zone: null, courses: [] }))).toBeUndefined();
    expect(profileOf(entry({ now: 1, time_zone: null, courses: ["x".repeat(65)] }))).toBeUndefined();
    expect(profileOf(entry([1, 2]))).toBeUndefined();
    expect(profileOf(entry({ now: 1, time_zone: null, courses: ["cs301"] }))).toEqual({
      now: 1,
      time_zone: null,
      courses: ["cs301"],
    });
  });

  it("takes a principal's zone only in the shape of a zone name", () => {
    for (const zone of ["../../etc/passwd", "Europe/Berlin\u0000", "x".repeat(65), 42])
      expect(PrincipalSchema.safeParse({ ...alice, time_zone: zone }).success, String(zone)).toBe(false);
    expect(PrincipalSchema.safeParse({ ...alice, time_zone: "America/Argentina/Buenos_Aires" }).success).toBe(true);
  });
});

describe("what the rules planner says it can do", () => {
  const ask = (request: string) =>
    decide({
      request,
      messages: [new HumanMessage(request)],
      tools: [],
      evidence: [],
      turn: 1,
      context: {
        [STUDY_PROFILE]: { data: { now: THURSDAY, time_zone: "Europe/Berlin", courses: ["cs301"] }, model_note: null },
      },
    });

  it("names the user's course in its examples when it refuses", () => {
    const outcome = ask("send an email to my professor");
    expect(outcome.type).toBe("needs_human");
    if (outcome.type === "needs_human") {
      expect(outcome.reason).toMatch(/^outside_repertoire: /);
      expect(outcome.reason).toContain(CAN_DO);
      expect(outcome.reason).toContain("cs301");
    }
  });

  it("says what it can do for a study request it cannot read, instead of searching the raw words", () => {
    const outcome = ask("plan my revision please");
    expect(outcome).toMatchObject({ type: "needs_human" });
    if (outcome.type === "needs_human") expect(outcome.reason).toMatch(/^unclear_request: .*What I can do:/);
  });

  it("asks the one question a relative day leaves open", () => {
    const outcome = ask("can you schedule 2 hours of attention study for me tomorrow evening?");
    expect(outcome).toMatchObject({ type: "needs_human" });
    if (outcome.type === "needs_human")
      expect(outcome.reason).toMatch(/^missing_start: at what time tomorrow evening should the study start/);
  });
});

describe("what is not a study request", () => {
  it.each([
    "Tell me about the 2 hours exam on Friday",
    "Summarize what the lecture on Monday said in 2 hours of material",
    "What did the 90 minute lecture tomorrow cover?",
    "Explain TCP/IP at 18:00",
  ])("%s", (text) => {
    expect(parseStudyRequest(text, clock("Europe/Berlin")).type).toBe("none");
  });
});
