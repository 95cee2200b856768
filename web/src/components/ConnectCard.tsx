/**
 * A server the run needs the owner's permission for (OAuth, on the owner's
 * behalf): "Connect <server>" opens the authorization server's page in a new
 * tab. Its callback resumes the run server-side; the page notices on its
 * own (use-authorization-return.ts), so there is nothing to send from here.
 */
import { useState } from "react";
import type { AuthorizationRequest } from "../types";
import { Countdown } from "./Countdown";

export function ConnectCard({ request }: { request: AuthorizationRequest }) {
  const [opened, setOpened] = useState(false);
  const { server } = request;
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
        onClick={() => setOpened(true)}
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
