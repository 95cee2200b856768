/**
 * The study domain's follow-up reading (src/domains/study/follow-up.ts): the
 * pending question a request leaves, and which next messages answer it.
 */
import { describe, expect, it } from "vitest";
import { parseStudyRequest } from "../../src/domains/study/parse.js";
import { readStudyAnswer, STUDY_FOLLOW_UP, studyFollowUpProvider } from "../../src/domains/study/follow-up.js";
import { pendingFrom, resolveRequest } from "../../src/graph/follow-up.js";
import type { PendingQuestion } from "../../src/state/domain-context.js";

const REQUEST = "Plan 5 hours of revision on normalization, max 90 minutes a day, and put it in my calendar";
const pending = (missing: string[], request = REQUEST): PendingQuestion => ({
  provider: STUDY_FOLLOW_UP,
  run_id: "run-1",
  request,
  missing,
  question: "missing_start: …",
});
const START = ["start_date", "start_time", "time_zone"];

describe("pending study questions", () => {
  it("records the missing start facts of a request, and nothing for a complete or unrelated one", () => {
    expect(pendingFrom([studyFollowUpProvider], { run_id: "r", request: REQUEST, reason: "x" })).toMatchObject({
      provider: STUDY_FOLLOW_UP,
      request: REQUEST,
      missing: START,
    });
    expect(
      pendingFrom([studyFollowUpProvider], {
        run_id: "r",
        request: `${REQUEST} starting 2026-12-05 18:00 UTC`,
        reason: "x",
      }),
    ).toBeNull();
    expect(
      pendingFrom([studyFollowUpProvider], { run_id: "r", request: "What is attention?", reason: "x" }),
    ).toBeNull();
    expect(
      pendingFrom([studyFollowUpProvider], { run_id: "r", request: "Plan attention study over 3 days", reason: "x" })
        ?.missing,
    ).toEqual(["duration"]);
  });

  it("reads a daily limit with no days as the fewest days the limit allows", () => {
    const parse = parseStudyRequest(`${REQUEST}, starting 2026-12-05 at 18:00 UTC`);
    expect(parse).toMatchObject({
      type: "request",
      request: { kind: "plan", total_minutes: 300, days: 4, daily_limit: 90 },
    });
  });
});

describe("reading the next message as the answer", () => {
  it.each(["Start on 2026-12-05 at 18:00 UTC.", "2026-12-05 18:00 UTC", "starting December 5th 2026 at 6pm UTC"])(
    "%j completes the request",
    (answer) => {
      const completed = readStudyAnswer(pending(START), answer);
      expect(completed).toBeDefined();
      expect(parseStudyRequest(completed ?? "")).toMatchObject({
        type: "request",
        request: { kind: "plan", days: 4, topic: "normalization", start: { hour: 18, minute: 0, zone: "UTC" } },
      });
    },
  );

  it("merges a partial answer and asks for the rest", () => {
    const completed = readStudyAnswer(pending(START), "2026-12-05") ?? "";
    expect(parseStudyRequest(completed)).toMatchObject({ type: "needs_human", missing: ["start_time", "time_zone"] });
    const next = readStudyAnswer(pending(["start_time", "time_zone"], completed), "at 6 pm Europe/Berlin") ?? "";
    expect(parseStudyRequest(next)).toMatchObject({
      type: "request",
      request: { start: { date: { day: 5 }, hour: 18, zone: "Europe/Berlin" } },
    });
  });

  it.each([
    "What do my notes say about self-attention?",
    "Plan 2 hours over 2 days starting 2026-12-05 18:00 UTC in my calendar",
    "Put a 40 minute session for attention on 2026-12-05 in my calendar",
  ])("takes %j as a new request", (message) => {
    expect(readStudyAnswer(pending(START), message)).toBeUndefined();
  });

  it("answers a missing duration with a duration, and declines a record it did not write", () => {
    expect(readStudyAnswer(pending(["duration"], "Plan attention study over 3 days"), "120 minutes")).toBe(
      "120 minutes. Plan attention study over 3 days.",
    );
    expect(readStudyAnswer(pending(["not_a_fact"]), "2026-12-05 18:00 UTC")).toBeUndefined();
    expect(
      resolveRequest([studyFollowUpProvider], { ...pending(START), provider: "other" }, "2026-12-05 18:00 UTC"),
    ).toEqual({ request: "2026-12-05 18:00 UTC" });
  });
});
