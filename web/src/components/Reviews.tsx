/**
 * The reviewer's inbox (`GET /reviews`, shown only when the server has it):
 * pending reviews of the tenant; opening one shows its approval cards.
 */
import { useEffect, useState } from "react";
import { fetchReviews } from "../api";
import { isRecord } from "../read";

export function Reviews({ token, onOpen }: { token: string; onOpen: (threadId: string) => void }) {
  const [reviews, setReviews] = useState<unknown[] | null>(null);
  useEffect(() => {
    void fetchReviews(token).then(setReviews);
  }, [token]);
  if (reviews === null) return <p role="status">Loading the reviews…</p>;
  if (reviews.length === 0) return <p className="empty">No reviews are waiting.</p>;
  return (
    <section aria-labelledby="reviews-title">
      <h2 id="reviews-title">Reviews waiting</h2>
      <ul className="reviews">
        {reviews.filter(isRecord).map((review, index) => {
          const threadId = typeof review.thread_id === "string" ? review.thread_id : "";
          const owner = typeof review.owner === "string" ? review.owner : "";
          const tool = typeof review.tool === "string" ? review.tool : Array.isArray(review.action_requests) ? `${review.action_requests.length} action(s)` : "";
          return (
            <li key={`${threadId}-${index}`}>
              <button type="button" className="thread" disabled={threadId === ""} onClick={() => onOpen(threadId)}>
                <span>
                  {owner && `${owner}: `}
                  {tool || "review"}
                </span>
                <small>{threadId.slice(0, 8)}</small>
              </button>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
