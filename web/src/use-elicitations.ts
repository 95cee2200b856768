/**
 * The open questions of the thread's running call (elicitations): added by
 * the run's `custom` stream events, removed when one closes or is answered,
 * and read again from the server when the thread is opened (after a reload).
 * A URL-mode question the owner accepted stays, marked accepted, then
 * completed when the server says so.
 */
import { useCallback, useEffect, useState } from "react";
import {
  answerElicitation,
  closedElicitationOf,
  closedOutcomeOf,
  completedElicitationOf,
  elicitationOf,
  fetchOpenElicitations,
  type AnswerRefusal,
  type Elicitation,
  type ElicitationAnswer,
} from "./elicitation";

export function useElicitations(token: string, threadId: string | null) {
  const [questions, setQuestions] = useState<Elicitation[]>([]);

  useEffect(() => {
    setQuestions([]);
    if (!threadId) return;
    let current = true;
    void fetchOpenElicitations(token, threadId).then((open) => {
      if (current)
        setQuestions((known) => [
          ...known,
          ...open.filter((item) => !known.some((k) => k.elicitation_id === item.elicitation_id)),
        ]);
    });
    return () => {
      current = false;
    };
  }, [token, threadId]);

  const onCustomEvent = useCallback((data: unknown) => {
    const asked = elicitationOf(data);
    if (asked)
      setQuestions((known) =>
        known.some((item) => item.elicitation_id === asked.elicitation_id) ? known : [...known, asked],
      );
    const closed = closedElicitationOf(data);
    if (closed)
      setQuestions((known) =>
        known.flatMap((item) => {
          if (item.elicitation_id !== closed) return [item];
          if (item.mode !== "url" || closedOutcomeOf(data) !== "accept") return [];
          return [{ ...item, state: item.state ?? ("accepted" as const) }];
        }),
      );
    const completed = completedElicitationOf(data);
    if (completed) setQuestions((known) => marked(known, completed, "completed"));
  }, []);

  const answer = useCallback(
    async (question: Elicitation, sent: ElicitationAnswer): Promise<AnswerRefusal | null> => {
      const refusal = await answerElicitation(token, question, sent);
      if (!refusal && question.mode === "url" && sent.action === "accept")
        setQuestions((known) => marked(known, question.elicitation_id, "accepted"));
      // Taken, or no longer open: either way the form goes.
      else if (!refusal || refusal.code === "elicitation_closed")
        setQuestions((known) => known.filter((item) => item.elicitation_id !== question.elicitation_id));
      return refusal;
    },
    [token],
  );

  return { questions, onCustomEvent, answer };
}

/** The questions with one marked accepted or completed (completed is never undone). */
function marked(known: Elicitation[], id: string, state: "accepted" | "completed"): Elicitation[] {
  return known.map((item) => (item.elicitation_id === id && item.state !== "completed" ? { ...item, state } : item));
}
