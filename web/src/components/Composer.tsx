/** The message box: Enter sends, Shift+Enter starts a new line; closed while a run works or a review waits. */
import { useState, type FormEvent, type KeyboardEvent } from "react";

export function Composer({
  disabled,
  pendingReview,
  onSend,
  onStop,
}: {
  disabled: boolean;
  pendingReview: boolean;
  onSend: (text: string) => void;
  onStop: (() => void) | undefined;
}) {
  const [text, setText] = useState("");
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
          rows={2}
          value={text}
          disabled={disabled}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={keys}
          placeholder="Compare self-attention with cross-attention using my notes"
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
