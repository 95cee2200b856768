/**
 * One inbox review: its approval cards, the decision sent for the owner's
 * thread, and what came of each action. An expired review shows why it can
 * no longer be decided, and so does the server's `review_expired` refusal.
 */
import { useState } from "react";
import { decideReview, problemOf, type Problem, type ReviewOutcome } from "../api";
import { approvalOf, isRecord } from "../read";
import type { ResumeDecision, SessionInfo } from "../types";
import { expiredWords, shorten, statusWords, VIEWER_ZONE } from "../wording";
import { ApprovalPanel } from "./ApprovalPanel";
import { ProblemBanner } from "./ProblemBanner";
import { ReviewOutcomeList } from "./ReviewOutcomeList";
import type { InboxEntry } from "./Reviews";
import { Termination } from "./Termination";

const answerOf = (result: unknown): string | null =>
  isRecord(result) && typeof result.answer === "string" ? result.answer : null;

export function ReviewDetail({
  token,
  session,
  entry,
  onBack,
}: {
  token: string;
  session: SessionInfo;
  entry: InboxEntry;
  onBack: () => void;
}) {
  const [request, setRequest] = useState(entry.review);
  const [sending, setSending] = useState(false);
  const [outcome, setOutcome] = useState<ReviewOutcome | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [expired, setExpired] = useState(entry.expired);

  const decide = (decisions: ResumeDecision[]) => {
    setSending(true);
    setProblem(null);
    decideReview(token, entry.thread_id, decisions).then(
      (answer) => {
        setSending(false);
        setOutcome(answer);
        // A refused answer is asked again (with `error`): show the new request.
        const again = approvalOf(answer.pending[0]);
        if (again) setRequest(again);
      },
      (error: unknown) => {
        setSending(false);
        const found = problemOf(error);
        // The server refused it as expired: nothing was sent to the run; say so, offer nothing to decide.
        if (found.code === "review_expired") setExpired(true);
        else setProblem(found);
      },
    );
  };
  const pendingAgain = outcome !== null && outcome.pending.length > 0;
  const title = entry.request || "a request";
  return (
    <section aria-labelledby="review-title" className="review-detail">
      <button type="button" className="secondary" onClick={onBack}>
        Back to the inbox
      </button>
      <h2 id="review-title" title={title}>
        {entry.owner}: {shorten(title, 90)}
      </h2>
      {problem && <ProblemBanner problem={problem} onDismiss={() => setProblem(null)} />}
      {expired && !outcome && (
        <p className="problem problem-refused" role="alert" data-testid="review-expired">
          This request expired at{" "}
          {expiredWords(entry.expires_at ?? "", entry.owner, VIEWER_ZONE).replace(/^this request expired at /, "")}.
          Nothing was sent.
        </p>
      )}
      {outcome && !pendingAgain && (
        <>
          <p role="status" data-testid="review-outcome" data-status={outcome.status ?? ""}>
            {entry.owner}'s request is now {statusWords(outcome.status)}.
          </p>
          <ReviewOutcomeList actions={outcome.actions ?? []} answer={answerOf(outcome.result)} />
          {outcome.termination_reason && <Termination reason={outcome.termination_reason} />}
        </>
      )}
      {sending && <p role="status">Sending the decision…</p>}
      {(!outcome || pendingAgain) && !sending && !expired && (
        <ApprovalPanel
          key={
            request.approvals.map((item) => `${item.action_id}:${item.version}`).join(",") +
            (request.error?.message ?? "")
          }
          request={request}
          tools={session.tools}
          onDecide={decide}
          owner={entry.owner}
        />
      )}
    </section>
  );
}
