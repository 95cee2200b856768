/** One inbox review: its approval cards, the decision sent for the owner's thread, and what came of it. */
import { useState } from "react";
import { decideReview, problemOf, type Problem, type ReviewOutcome } from "../api";
import { approvalOf } from "../read";
import type { ResumeDecision, SessionInfo } from "../types";
import { ApprovalPanel } from "./ApprovalPanel";
import { ProblemBanner } from "./ProblemBanner";
import type { InboxEntry } from "./Reviews";
import { Termination } from "./Termination";

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
        setProblem(problemOf(error));
      },
    );
  };
  const pendingAgain = outcome !== null && outcome.pending.length > 0;
  return (
    <section aria-labelledby="review-title" className="review-detail">
      <button type="button" className="secondary" onClick={onBack}>
        Back to the inbox
      </button>
      <h2 id="review-title">
        {entry.owner}: {entry.request || "a request"}
      </h2>
      {problem && <ProblemBanner problem={problem} onDismiss={() => setProblem(null)} />}
      {outcome?.termination_reason && !pendingAgain && <Termination reason={outcome.termination_reason} />}
      {outcome && !pendingAgain && (
        <p role="status" data-testid="review-outcome" data-status={outcome.status ?? ""}>
          Decision sent; {entry.owner}'s run is {outcome.status ?? "unknown"}.
        </p>
      )}
      {sending && <p role="status">Sending the decision…</p>}
      {(!outcome || pendingAgain) && !sending && (
        <ApprovalPanel
          key={
            request.approvals.map((item) => `${item.action_id}:${item.version}`).join(",") +
            (request.error?.message ?? "")
          }
          request={request}
          tools={session.tools}
          onDecide={decide}
        />
      )}
    </section>
  );
}
