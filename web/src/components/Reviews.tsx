/**
 * The reviewer's inbox (`GET /reviews`, shown only when the server has it):
 * the pending reviews the signed-in user may decide, across the tenant for a
 * reviewer. Opening one shows its approval cards; the decision is sent to
 * `POST /reviews/{thread_id}` and runs as the owner's resume.
 */
import { useCallback, useEffect, useState } from "react";
import { fetchReviews } from "../api";
import { approvalOf, isRecord } from "../read";
import type { ApprovalInterrupt, SessionInfo } from "../types";
import { describeAction, formatClock, shorten, VIEWER_ZONE } from "../wording";
import { ReviewDetail } from "./ReviewDetail";

export interface InboxEntry {
  thread_id: string;
  owner: string;
  request: string;
  review: ApprovalInterrupt;
  /** Past its deadline: listed as expired, cannot be decided. */
  expired: boolean;
  expires_at: string | null;
}

function entryOf(value: unknown): InboxEntry | null {
  if (!isRecord(value) || typeof value.thread_id !== "string") return null;
  const review = approvalOf(value.review);
  if (!review) return null;
  return {
    thread_id: value.thread_id,
    owner: typeof value.owner === "string" ? value.owner : "",
    request: typeof value.request === "string" ? value.request : "",
    review,
    expired: value.expired === true,
    expires_at: typeof value.expires_at === "string" ? value.expires_at : null,
  };
}

/** What the review asks for, in words: the first action's sentence and how many more. */
function askedFor(entry: InboxEntry): string {
  const [first, ...rest] = entry.review.action_requests;
  if (!first) return "nothing";
  const summary = describeAction(first.name, first.args, VIEWER_ZONE).summary;
  // Shortened before "and N more", so the count is never cut off.
  return rest.length === 0 ? shorten(summary, 90) : `${shorten(summary, 76)}, and ${rest.length} more`;
}

export function Reviews({ token, session }: { token: string; session: SessionInfo }) {
  const [entries, setEntries] = useState<InboxEntry[] | null>(null);
  const [open, setOpen] = useState<InboxEntry | null>(null);
  const load = useCallback(() => {
    void fetchReviews(token).then((reviews) =>
      setEntries((reviews ?? []).map(entryOf).filter((entry): entry is InboxEntry => entry !== null)),
    );
  }, [token]);
  useEffect(load, [load]);

  if (open)
    return (
      <ReviewDetail
        token={token}
        session={session}
        entry={open}
        onBack={() => {
          setOpen(null);
          load();
        }}
      />
    );
  if (entries === null) return <p role="status">Loading the reviews…</p>;
  return (
    <section aria-labelledby="reviews-title" className="inbox">
      <div className="row">
        <h2 id="reviews-title">Reviews waiting</h2>
        <button type="button" className="secondary" onClick={load}>
          Refresh
        </button>
      </div>
      {entries.length === 0 ? (
        <p className="empty">No reviews are waiting.</p>
      ) : (
        <ul className="reviews">
          {entries.map((entry) => (
            <li key={entry.thread_id}>
              <button
                type="button"
                className={entry.expired ? "thread expired" : "thread"}
                data-thread-id={entry.thread_id}
                data-expired={entry.expired ? "true" : "false"}
                title={entry.request}
                onClick={() => setOpen(entry)}
              >
                <span>
                  {entry.owner}: {shorten(entry.request || "a request", 70)}
                </span>
                <small>
                  {entry.expired ? (
                    <strong className="expired-label">
                      Expired
                      {entry.expires_at ? ` at ${formatClock(Date.parse(entry.expires_at), VIEWER_ZONE)}` : ""}
                      {" · "}
                    </strong>
                  ) : null}
                  {entry.review.action_requests.length === 1
                    ? "1 action"
                    : `${entry.review.action_requests.length} actions`}
                  : {askedFor(entry)}
                </small>
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
