/** Who is signed in, the Chat / Reviews switch (only when the server has a review inbox), sign out. */
import { useEffect, useState } from "react";
import { fetchReviews } from "../api";
import type { SessionInfo } from "../types";

export function Header({
  session,
  token,
  view,
  onView,
  onSignOut,
}: {
  session: SessionInfo;
  token: string;
  view: "chat" | "reviews";
  onView: (view: "chat" | "reviews") => void;
  onSignOut: () => void;
}) {
  const [hasInbox, setHasInbox] = useState(false);
  useEffect(() => {
    if (!session.principal.scopes.includes("approvals:decide")) return;
    void fetchReviews(token).then((reviews) => setHasInbox(reviews !== null));
  }, [session, token]);
  return (
    <header className="header">
      <strong className="brand">Warrant</strong>
      {hasInbox && (
        <nav aria-label="Views" className="row">
          <button
            type="button"
            className={view === "chat" ? "" : "secondary"}
            aria-pressed={view === "chat"}
            onClick={() => onView("chat")}
          >
            Chat
          </button>
          <button
            type="button"
            className={view === "reviews" ? "" : "secondary"}
            aria-pressed={view === "reviews"}
            onClick={() => onView("reviews")}
          >
            Reviews
          </button>
        </nav>
      )}
      <span className="who" data-testid="signed-in-as">
        {session.principal.display_name} <small>({session.principal.role})</small>
      </span>
      <button type="button" className="secondary" onClick={onSignOut}>
        Sign out
      </button>
    </header>
  );
}
