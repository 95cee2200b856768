/**
 * A server's request that the owner open a URL (URL-mode elicitation): the
 * server's message, the URL's host large, the full URL as plain text (never a
 * link, an image or anything the browser would fetch). Only "Open <host>"
 * opens it, in a new window with `noopener,noreferrer`, and that click is
 * the owner's consent (the server is told `accept`); "Decline" tells it
 * `decline`. The agent never sees the URL or the page behind it.
 */
import { useState } from "react";
import type { AnswerRefusal, Elicitation, ElicitationAnswer } from "../elicitation";
import { Countdown } from "./Countdown";

export function UrlConsentCard({
  question,
  onAnswer,
}: {
  question: Elicitation;
  onAnswer: (answer: ElicitationAnswer) => Promise<AnswerRefusal | null>;
}) {
  const [refusal, setRefusal] = useState<AnswerRefusal | null>(null);
  const [sending, setSending] = useState(false);
  const url = question.url ?? "";
  const host = question.host ?? "";
  const answer = async (sent: ElicitationAnswer) => {
    setSending(true);
    setRefusal(await onAnswer(sent).finally(() => setSending(false)));
  };
  const open = () => {
    // Opened from the click itself (no popup blocker), in a window that cannot reach back to this page.
    window.open(url, "_blank", "noopener,noreferrer");
    void answer({ action: "accept" });
  };
  const state = question.state ?? "open";

  return (
    <section
      className="elicitation url-consent"
      aria-label={`The ${question.server} server asks you to open a page`}
      data-state={state}
    >
      <h2>
        The {question.server} server asks you to open a page{" "}
        {state === "open" && <Countdown until={question.expires_at} />}
      </h2>
      <p className="elicitation-message">{question.message}</p>
      <p className="url-host" data-testid="url-host">
        {host}
      </p>
      <p className="url-full">
        <code data-testid="url-full">{url}</code>
      </p>
      <p className="destination">
        during {question.tool}; only you can answer; the agent never sees this page or what you do there
      </p>
      {refusal && (
        <p role="alert" className="field-problem" data-code={refusal.code}>
          The server refused the answer ({refusal.code}).
        </p>
      )}
      {state === "open" ? (
        <div className="actions">
          <button type="button" disabled={sending} onClick={open}>
            Open {host}
          </button>
          <button type="button" disabled={sending} onClick={() => void answer({ action: "decline" })}>
            Decline
          </button>
        </div>
      ) : (
        <p role="status" className="url-state">
          {state === "completed" ? "Completed: the server says you are done there." : "Opened; waiting for the server."}
        </p>
      )}
    </section>
  );
}
