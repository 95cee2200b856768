/** The message box: Enter sends, Shift+Enter starts a new line; closed while a run works or a review waits. */
import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from "react";

export function Composer({
  disabled,
  pendingReview,
  question = false,
  onSend,
  onStop,
  initialText = "",
}: {
  disabled: boolean;
  pendingReview: boolean;
  /** The assistant asked a question: the box is for its answer, and has the focus. */
  question?: boolean;
  onSend: (text: string) => void;
  onStop: (() => void) | undefined;
  /** Text the box starts with (a request to ask again). */
  initialText?: string;
}) {
  const [text, setText] = useState(initialText);
  const box = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    if (question && !disabled) box.current?.focus();
  }, [question, disabled]);
  const send = (event?: FormEvent) => {
    event?.preventDefault();
    if (disabled || text.trim() === "") return;
    onSend(text.trim());
    setText("");
  };
  const keys = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === "Enter" && !event.shiftKey) send(event);
  };
  return (
    <form className="composer" onSubmit={send} aria-label="Send a message">
      <label htmlFor="message">{pendingReview ? "Answer the pending review above first" : "Your message"}</label>
      <div className="row">
        <textarea
          id="message"
          ref={box}
          rows={2}
          value={text}
          disabled={disabled}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={keys}
          placeholder={
            question
              ? "Your answer to the question above"
              : "Compare self-attention with cross-attention using my notes"
          }
        />
        {onStop ? (
          <button type="button" className="secondary" onClick={onStop}>
            Stop
          </button>
        ) : (
          <button type="submit" disabled={disabled || text.trim() === ""}>
            Send
          </button>
        )}
      </div>
    </form>
  );
}
