/** A review's deadline (the earliest `expires_at` of its actions) and the refusal every decision path shares. */
import { describe, expect, it } from "vitest";
import { assertReviewOpen, isPast, reviewDeadline } from "../../src/server/review-expiry.js";

const review = (...deadlines: unknown[]) => ({
  action_requests: deadlines.map(() => ({ name: "create_study_event", args: {} })),
  approvals: deadlines.map((expires_at, index) => ({ action_id: `a${index}`, expires_at })),
});

describe("review expiry", () => {
  it("the deadline is the earliest parseable expires_at; none when there is none", () => {
    expect(reviewDeadline(review("2026-12-05T18:50:00Z", "2026-12-05T18:47:00Z", "soon", 5))).toBe(
      "2026-12-05T18:47:00Z",
    );
    expect(reviewDeadline(review())).toBeNull();
    expect(reviewDeadline(null)).toBeNull();
    expect(reviewDeadline({ approvals: "x" })).toBeNull();
    expect(isPast(null)).toBe(false);
  });

  it("refuses a past deadline as review_expired (409) naming the time in UTC and who must ask again", () => {
    const now = Date.parse("2026-12-05T18:47:00Z");
    expect(() => assertReviewOpen(review("2026-12-05T18:47:01Z"), "alice", now)).not.toThrow();
    let refusal: unknown;
    try {
      assertReviewOpen(review("2026-12-05T18:47:01Z", "2026-12-05T18:47:00Z"), "alice", now);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toMatchObject({
      code: "review_expired",
      status: 409,
      message: "this request expired at 18:47 UTC; alice must ask again",
    });
    // A value that is no review (another kind of interrupt) is never refused here.
    expect(() => assertReviewOpen({ question: "?" }, "alice", now)).not.toThrow();
  });
});
