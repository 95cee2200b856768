/**
 * The study request parser on a table of phrasings: plans over days, single
 * calendar sessions, divisions between topics; daily limits, start words,
 * calendar verbs, minutes or hours, the topic anywhere in the sentence; and
 * every missing or invalid fact as a `needs_human` reason with a stable code.
 */
import { describe, expect, it } from "vitest";
import { parseStudyRequest, topicOf } from "../../src/domains/study/parse.js";

const at = (year: number, month: number, day: number, hour: number, minute: number, zone: string) => ({
  date: { year, month, day },
  hour,
  minute,
  zone,
});
const DEC2_18_UTC = at(2026, 12, 2, 18, 0, "UTC");

type Expected = Record<string, unknown>;
const plan = (fields: Expected) => ({ type: "request", request: { kind: "plan", ...fields } });
const session = (fields: Expected) => ({ type: "request", request: { kind: "session", ...fields } });
const divide = (fields: Expected) => ({ type: "request", request: { kind: "divide", ...fields } });

const understood: [string, Expected][] = [
  [
    "Use my notes to plan 120 minutes of attention study over 3 days, at most 60 minutes a day, " +
      "starting 2026-12-02 at 18:00 UTC, and put it in my calendar",
    plan({
      total_minutes: 120,
      days: 3,
      daily_limit: 60,
      topic: "attention",
      calendar: "study",
      start: DEC2_18_UTC,
      uses_notes: true,
    }),
  ],
  [
    "Use my notes to plan 120 minutes of attention study over 3 days, at most 60 a day, " +
      "starting 2026-12-02 18:00 UTC, and put it in my calendar",
    plan({ total_minutes: 120, days: 3, daily_limit: 60, topic: "attention", calendar: "study", start: DEC2_18_UTC }),
  ],
  [
    "Put a 40 minute study session for attention on 2026-12-02 at 18:00 UTC in my calendar",
    session({ minutes: 40, topic: "attention", calendar: "study", start: DEC2_18_UTC, uses_notes: false }),
  ],
  [
    "Divide 180 minutes between self-attention, cross-attention and normalization using my notes",
    divide({ total_minutes: 180, topics: ["self-attention", "cross-attention", "normalization"], uses_notes: true }),
  ],
  [
    "Split 121 minutes of revision over 3 days, at most 60 per day",
    plan({ total_minutes: 121, days: 3, daily_limit: 60, topic: null, calendar: null, start: null }),
  ],
  [
    "Schedule 2 hours of self-attention revision across 4 days beginning 2026-12-02 09:30 Europe/Berlin, " +
      "no more than 45 min per day, and add it to my calendar",
    plan({
      total_minutes: 120,
      days: 4,
      daily_limit: 45,
      topic: "self-attention",
      calendar: "study",
      start: at(2026, 12, 2, 9, 30, "Europe/Berlin"),
    }),
  ],
  [
    "Plan 1.5 h of BM25 over 2 days from 3 December 2026 at 6 pm Europe/London, up to 1 hour a day, put it on my calendar",
    plan({
      total_minutes: 90,
      days: 2,
      daily_limit: 60,
      topic: "bm25",
      start: at(2026, 12, 3, 18, 0, "Europe/London"),
    }),
  ],
  [
    "Put 90 min of dropout study in my calendar on Dec 5, 2026 at 7:30pm America/New_York",
    session({ minutes: 90, topic: "dropout", start: at(2026, 12, 5, 19, 30, "America/New_York") }),
  ],
  [
    "Schedule an hour and a half of multi-head attention on my calendar for 2026-12-02 at noon Europe/Paris",
    session({ minutes: 90, topic: "multi-head attention", start: at(2026, 12, 2, 12, 0, "Europe/Paris") }),
  ],
  [
    "Over the next 3 days, starting 2026-12-02 at 08:00 Asia/Tokyo, " +
      "I want to put 3 hours of positional encoding into my calendar, max 1.5 hours per day",
    plan({
      total_minutes: 180,
      days: 3,
      daily_limit: 90,
      topic: "positional encoding",
      start: at(2026, 12, 2, 8, 0, "Asia/Tokyo"),
    }),
  ],
  [
    "Study attention 40 minutes a day for 3 days starting 2026-12-02 at 18:00 UTC, add to my calendar",
    plan({ total_minutes: 120, days: 3, daily_limit: 40, topic: "attention", start: DEC2_18_UTC }),
  ],
  [
    "Block out 2 hours over 2 days for word embeddings in my calendar from 2026-12-24 at 9am UTC, a daily limit of 60 minutes",
    plan({
      total_minutes: 120,
      days: 2,
      daily_limit: 60,
      topic: "word embeddings",
      start: at(2026, 12, 24, 9, 0, "UTC"),
    }),
  ],
  [
    "Divide 3 hours among dropout and L1 regularization",
    divide({ total_minutes: 180, topics: ["dropout", "l1 regularization"], uses_notes: false }),
  ],
  [
    "Split 100 min between BM25 & dense retrieval & reranking",
    divide({ total_minutes: 100, topics: ["bm25", "dense retrieval", "reranking"] }),
  ],
  [
    "Allocate 2h across gradient descent, dropout, backpropagation",
    divide({ total_minutes: 120, topics: ["gradient descent", "dropout", "backpropagation"] }),
  ],
  [
    "Add 45 minutes of cross-attention to my calendar, beginning 2026-12-07 at 07:15 UTC",
    session({ minutes: 45, topic: "cross-attention", start: at(2026, 12, 7, 7, 15, "UTC") }),
  ],
  [
    "Book 30 mins for causal masking in my calendar starting 2026-12-02T18:00Z",
    session({ minutes: 30, topic: "causal masking", start: DEC2_18_UTC }),
  ],
  [
    "Please schedule a 2 hour session on dense retrieval in my calendar on December 9th, 2026 at 14:00 Europe/Madrid",
    session({ minutes: 120, topic: "dense retrieval", start: at(2026, 12, 9, 14, 0, "Europe/Madrid") }),
  ],
  [
    "Can you put 60-minute blocks of attention study in my calendar " +
      "for 2 days from 2026-12-02 at 18:00 UTC, up to 60 minutes per day, 120 minutes in total",
    plan({ total_minutes: 120, days: 2, daily_limit: 60, topic: "attention" }),
  ],
  [
    "plan 150 minutes of retrieval augmented generation over three days, not more than 1 hour each day, " +
      "from 2026-12-02 at 6:00 pm UTC, add them to my calendar",
    plan({
      total_minutes: 150,
      days: 3,
      daily_limit: 60,
      topic: "retrieval augmented generation",
      start: at(2026, 12, 2, 18, 0, "UTC"),
    }),
  ],
  [
    "Schedule 0.5 hours of reranking in my study calendar on 2026-12-02 at 18:00 UTC",
    session({ minutes: 30, topic: "reranking", calendar: "study" }),
  ],
  [
    "Put 40 min of attention in my cs301-exams calendar on 2026-12-02 at 18:00 UTC",
    session({ minutes: 40, topic: "attention", calendar: "cs301-exams" }),
  ],
  [
    "Spread 120 minutes of attention over 3 days, maximum of 60 minutes a day",
    plan({ total_minutes: 120, days: 3, daily_limit: 60, topic: "attention", calendar: null }),
  ],
  [
    "Plan a 3-day schedule of 90 minutes for dropout",
    plan({ total_minutes: 90, days: 3, daily_limit: 90, topic: "dropout" }),
  ],
  [
    "Use my notes to plan 2 hours of attention study over 2 days and put it in my calendar " +
      "starting 2026-12-02 at 18:00 America/Argentina/Buenos_Aires",
    plan({
      total_minutes: 120,
      days: 2,
      start: at(2026, 12, 2, 18, 0, "America/Argentina/Buenos_Aires"),
      uses_notes: true,
    }),
  ],
  [
    "For attention: put 40 minutes in my calendar on 2026-12-02 at 18:00 UTC",
    session({ minutes: 40, topic: "attention" }),
  ],
  [
    "Plan 120 minutes over 3 days with a daily limit of 1 hour, attention",
    plan({ total_minutes: 120, days: 3, daily_limit: 60, topic: "attention" }),
  ],
  [
    "Put 1 hour 15 minutes of gradient descent on my calendar, 2026-12-02 at 18:00 UTC",
    session({ minutes: 75, topic: "gradient descent" }),
  ],
];

const refused: [string, RegExp][] = [
  ["Add a 60 minute study session on attention to my calendar", /^missing_start: on which date/],
  ["Put a study block for attention in my calendar on Monday evening", /^missing_duration: /],
  [
    "Put 40 minutes of attention in my calendar on Monday at 18:00 UTC",
    /^missing_start: .*"monday" needs a calendar date/,
  ],
  ["Put 40 minutes of attention in my calendar on 2026-12-02", /^missing_start: at what time/],
  ["Put 40 minutes of attention in my calendar on 2026-12-02 at 18:00", /^missing_start: in which time zone/],
  ["put 45 min of retrieval on my calendar on 2 December at 18:00 UTC", /^missing_start: "2 December" has no year/],
  [
    "Plan attention study over 3 days starting 2026-12-02 18:00 UTC and put it in my calendar",
    /^missing_duration: how many minutes/,
  ],
  ["Divide 180 minutes between three topics using my notes", /^missing_topics: /],
  [
    "Plan 120 minutes over 3 days starting 2026-12-02 18:00 Mars/Base and put it in my calendar",
    /^invalid_request: unknown time zone "Mars\/Base"; use an IANA name such as Europe\/Berlin/,
  ],
  [
    "Put 45 min of retrieval on my calendar 2026-12-02 at 18:00 CET",
    /^invalid_request: "CET" is an ambiguous zone abbreviation/,
  ],
  [
    "Put 45 min of retrieval on my calendar 2026-12-02 at 18:00 UTC+1",
    /^invalid_request: a UTC offset \("UTC\+1"\) is not a time zone/,
  ],
  [
    "Put 45 min of retrieval on my calendar on 12/02/2026 at 18:00 UTC",
    /^invalid_request: "12\/02\/2026" is ambiguous/,
  ],
  [
    "Plan 120 minutes over 3 days starting 2026-13-45 18:00 UTC and put it in my calendar",
    /^invalid_request: "2026-13-45" is not a valid date; write it as YYYY-MM-DD/,
  ],
  [
    "Plan 120 minutes over 3 days starting 2026-02-30 18:00 UTC and put it in my calendar",
    /^invalid_request: "2026-02-30" is not a valid date/,
  ],
  [
    "Add 40 minutes of attention to my calendar on 2026-12-10 at 25:00 UTC",
    /^invalid_request: "25:00" is not a valid time/,
  ],
  [
    "Plan 120 minutes over 0 days starting 2026-12-02 18:00 UTC and put it in my calendar",
    /^invalid_request: the number of days must be at least 1/,
  ],
  [
    "Plan 10,000 minutes over 3 days starting 2026-12-02 18:00 UTC and put it in my calendar",
    /^invalid_request: 10000 minutes is more than one study plan holds \(at most 6000/,
  ],
  ["Plan 120 minutes over 30 days", /^invalid_request: 30 days is more than one plan covers/],
  ["Split 1.33 h over 3 days", /^invalid_request: the total duration \(79.8 minutes\) is not a whole number/],
  [
    "Put a 30 hour session of attention in my calendar on 2026-12-02 at 18:00 UTC",
    /^invalid_request: a 1800 minute session is longer than a calendar event may be/,
  ],
  ["Plan 0 minutes over 3 days", /^invalid_request: the total duration must be at least 1 minute/],
];

const notStudy = [
  "Compare self-attention with cross-attention using my notes",
  "What is BM25?",
  "Explain TCP/IP at 18:00",
  "How does the softmax split probability mass between keys?",
  "Make a quiz on attention from my cs301 notes",
  "Investigate claim C-102: are its documents complete?",
  "What happens over 3 days of training?",
];

describe("parseStudyRequest", () => {
  it.each(understood)("understands %s", (request, expected) => {
    expect(parseStudyRequest(request)).toMatchObject(expected);
  });

  it.each(refused)("asks for or refuses what is missing or invalid: %s", (request, reason) => {
    const parsed = parseStudyRequest(request);
    expect(parsed.type).toBe("needs_human");
    if (parsed.type === "needs_human") expect(parsed.reason).toMatch(reason);
  });

  it.each(notStudy)("leaves other requests alone: %s", (request) => {
    expect(parseStudyRequest(request)).toEqual({ type: "none" });
  });

  it("has a table of at least 25 understood phrasings", () => {
    expect(understood.length).toBeGreaterThanOrEqual(25);
  });
});

describe("topicOf", () => {
  it("keeps content words in order and drops request mechanics", () => {
    expect(topicOf("use my notes to plan of attention study starting at and put it in my calendar")).toBe("attention");
    expect(topicOf("please schedule a session on the bias-variance trade-off")).toBe("bias-variance trade-off");
    expect(topicOf("plan my study time")).toBeNull();
  });
});
