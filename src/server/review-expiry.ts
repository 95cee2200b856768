/**
 * When a pending review can no longer be decided: its deadline is the
 * earliest `expires_at` of its actions. Every path that decides a review
 * (the inbox's POST /reviews/{id}, a run resumed with `command.resume`)
 * refuses an expired one with `review_expired` (409) before anything runs,
 * since every answer to it would be refused as `approval_expired` by the graph.
 */
import { expiredWords } from "../wording/proposal.js";
import { ApiError } from "../errors.js";

/** The earliest deadline of a review's actions (an interrupt value), or null when none parses. */
export function reviewDeadline(review: unknown): string | null {
  const approvals = typeof review === "object" && review !== null ? (review as { approvals?: unknown }).approvals : [];
  const deadlines = (Array.isArray(approvals) ? approvals : [])
    .map((approval: unknown) => (approval as { expires_at?: unknown } | null)?.expires_at)
    .filter((value): value is string => typeof value === "string" && !Number.isNaN(Date.parse(value)))
    .sort((a, b) => Date.parse(a) - Date.parse(b));
  return deadlines[0] ?? null;
}

/** Whether a deadline (from `reviewDeadline`) has passed. */
export const isPast = (deadline: string | null, now = Date.now()): boolean =>
  deadline !== null && Date.parse(deadline) <= now;

/** Throws `review_expired` when the review's deadline has passed ("this request expired at 18:47 UTC; alice …"). */
export function assertReviewOpen(review: unknown, owner: string, now = Date.now()): void {
  const deadline = reviewDeadline(review);
  if (deadline === null || !isPast(deadline, now)) return;
  throw new ApiError("review_expired", expiredWords(deadline, owner, "UTC").replace(/ at (\d\d:\d\d);/, " at $1 UTC;"));
}
