/**
 * Builds a configured server's connection: stdio servers through the SDK's
 * stdio client, Streamable HTTP servers with task tokens minted per call from
 * the deployment's signing secret (the servers Warrant launches or controls),
 * both on the revision negotiated or pinned (negotiation.ts), and remote
 * servers with an `auth` block through OAuth: `client_credentials` ones on the
 * revision negotiated or pinned too, one provider shared by both revisions'
 * connections (its token serves whichever speaks); `authorization_code` ones
 * too, with per-owner sessions on either revision (oauth-connection.ts, modern-oauth-connection.ts) and the
 * owner's authorization (the link, the callback's exchange and `iss` check) on the v1 path for both.
 */
import { randomBytes } from "node:crypto";
import { mintTaskToken } from "../auth/task-token.js";
import type { ServerConfig } from "../policy/config.js";
import type { ConnectionEvents, ServerConnection } from "./connection.js";
import {
  deploymentProvider,
  memoryCredentialStore,
  OwnerOAuthProvider,
  type OAuthCredentialStore,
} from "../oauth/provider.js";
import { HOST_OWNER, type Authorize } from "../oauth/authorization.js";
import { oauthConnection } from "./oauth-connection.js";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { modernOAuthConnection } from "./modern-http-session.js";
import { modernOwnerOAuthConnection } from "./modern-oauth-connection.js";
import { negotiatedConnection, negotiatedHttpConnection, negotiatedStdioConnection } from "./negotiation.js";

/** Task-token settings: the signing secret shared with HTTP servers we launch. */
export interface TokenSettings {
  secret: Uint8Array;
  ttlSeconds: number;
}

/** Mints a fresh secret when none is configured (it is handed to the servers we launch). */
export function ephemeralTokenSettings(): TokenSettings {
  return { secret: new Uint8Array(randomBytes(32)), ttlSeconds: 120 };
}

/** What OAuth-protected servers need from the host. */
export interface OAuthHostOptions {
  /** Where tokens, verifiers and registrations are kept; by default in memory (lost on restart). */
  store?: OAuthCredentialStore;
  /** Values of the environment variables the servers' `${NAME}` credentials name (from env.ts). */
  credentials?: Readonly<Record<string, string | undefined>>;
  /** Completes an authorization itself (tests, the conformance client); without it a call ends `authorization_required`. */
  authorize?: Authorize;
  /**
   * Whose authorization lists the tools of `authorization_code` servers and
   * probes them (default: the host's own, {@link HOST_OWNER}); the conformance
   * client lists as the user it calls for, as a single-user client would.
   */
  catalogOwner?: string;
  /** Seals the `state` of per-user authorizations (from the deployment secret, so every instance can check it). */
  stateKey?: Uint8Array;
}

export type ConnectionFactory = (name: string, server: ServerConfig, events: ConnectionEvents) => ServerConnection;

export function connectionFactory(tokens: TokenSettings, oauth: OAuthHostOptions = {}): ConnectionFactory {
  const secretHex = Buffer.from(tokens.secret).toString("hex");
  const store = oauth.store ?? memoryCredentialStore();
  const values = oauth.credentials ?? {};
  return (name, server, events) => {
    if (server.transport === "stdio") return negotiatedStdioConnection(server, events);
    const auth = server.auth;
    if (auth?.grant === "client_credentials") {
      let provider: OAuthClientProvider | undefined;
      // Built at the first open (the credential is checked at start, checkCredentials), then shared.
      const deployment = () => {
        provider ??= deploymentProvider(name, auth, values);
        return provider;
      };
      const legacy = () => oauthConnection({ name, url: server.url ?? "", auth, providerFor: deployment, events });
      return negotiatedConnection(
        server.protocol,
        () => modernOAuthConnection({ server, events }, deployment()),
        legacy,
      );
    }
    if (auth) {
      const owners = {
        name,
        url: server.url ?? "",
        auth,
        providerFor: (owner: string) => new OwnerOAuthProvider({ server: name, owner, auth, store, values }),
        authorize: oauth.authorize,
        catalogOwner: oauth.catalogOwner,
        events,
      };
      // The owner's link and callback (never opened: it holds no session), whichever revision the calls speak.
      const flow = oauthConnection(owners);
      return negotiatedConnection(
        server.protocol,
        () => modernOwnerOAuthConnection({ server, events }, owners),
        () => oauthConnection(owners),
        flow,
      );
    }
    return negotiatedHttpConnection({
      server,
      mint: (request) =>
        mintTaskToken(
          tokens.secret,
          {
            audience: server.audience,
            tenant: request.tenant,
            subject: request.subject,
            task: request.task,
            scopes: [...request.scopes],
          },
          { ttlSeconds: tokens.ttlSeconds },
        ),
      launchEnvironment: { WARRANT_TASK_TOKEN_SECRET: secretHex },
      events,
    });
  };
}
