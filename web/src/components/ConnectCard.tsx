/**
 * A server the run needs the owner's permission for (OAuth, on the owner's
 * behalf): "Connect <server>" opens the authorization server's page in a new
 * tab. Its callback resumes the run server-side; the page notices on its
 * own (use-authorization-return.ts), so there is nothing to send from here.
 *
 * The tab is opened blank from this page and only then sent to the
 * authorization server: opened so, it starts with a copy of this tab's
 * sessionStorage (the callback page on our origin needs the sign-in token
 * kept there, src/server/oauth-callback-page.ts), and its `opener` is cut
 * before the other site loads, so that site cannot reach back into this page
 * (what `rel="noopener"` would give, but a noopener tab gets no session copy).
 * A blocked pop-up falls back to the plain link.
 */
import { useState, type MouseEvent } from "react";
import type { AuthorizationRequest } from "../types";
import { Countdown } from "./Countdown";

export function ConnectCard({ request }: { request: AuthorizationRequest }) {
  const [opened, setOpened] = useState(false);
  const { server } = request;
  const open = (event: MouseEvent<HTMLAnchorElement>) => {
    setOpened(true);
    const tab = window.open("", "_blank");
    if (!tab) return;
    event.preventDefault();
    tab.opener = null;
    tab.location.href = request.authorization_url;
  };
  return (
    <section className="connect-card" aria-label={`Connect ${server}`}>
      <header>
        <h2>Connect {server}</h2>
        {request.expires_at && <Countdown until={request.expires_at} />}
      </header>
      <p>Warrant needs your permission to use {server} on your behalf.</p>
      <a
        className="connect-link"
        href={request.authorization_url}
        target="_blank"
        rel="noopener noreferrer"
        onClick={open}
      >
        Connect {server}
      </a>
      {opened && (
        <p role="status" className="connect-waiting">
          Finish in the tab that opened; the run continues here once {server} is connected.
        </p>
      )}
    </section>
  );
}
