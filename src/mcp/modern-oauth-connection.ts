/**
 * `authorization_code` OAuth servers on 2026-07-28, through the v2 SDK client: the host's own listing, probes and
 * `subscriptions/listen` stream run on one client under the catalog owner's authorization
 * (`modernClientConnection`), and each owner's calls on a client of that owner's own, so an owner's token is only
 * ever sent on that owner's client, as on 2025-11-25 (oauth-connection.ts). The v2 transport takes the owner's
 * provider as is (its tokens are stored per owner, whichever revision obtained them); a request it cannot authorize
 * fails with v2's own `UnauthorizedError`, after which the owner's link is asked for as on 2025-11-25: completed by
 * `authorize` when given (the code exchanged on the v1 path), else {@link AuthorizationRequired} with the URL.
 * The owner's callback (`authorizationFor`, `completeAuthorization` with the RFC 9207 `iss` check) stays on the
 * v1 path, which the connection factory shares between both revisions.
 */
import {
  type Client,
  IssuerMismatchError,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { AuthorizationRequired, isAuthorizationRequired } from "../errors.js";
import { HOST_OWNER } from "../oauth/authorization.js";
import { OwnerOAuthProvider } from "../oauth/provider.js";
import { OPEN_TIMEOUT_MS, type ServerConnection } from "./connection.js";
import { traceMeta, type HttpConnectionOptions } from "./http-session.js";
import { modernClientConnection } from "./modern-http-session.js";
import { createModernClient, requestsOf } from "./modern-session.js";
import type { OAuthConnectionOptions } from "./oauth-connection.js";
import { retire } from "./stdio-process.js";
import { interceptTaskAnswers } from "./tasks.js";

/**
 * The v2 SDK checks the `issuer` of the authorization server's metadata (RFC 8414 §3.3) where the v1 SDK does not:
 * a server whose metadata fails that check (a 2025-03-26 one serving it at its own origin) is not spoken to in
 * 2026-07-28, and the negotiation speaks 2025-11-25 to it as before (a pinned one fails to open with this error).
 */
function asNotModern(error: unknown): unknown {
  if (!(error instanceof IssuerMismatchError && error.kind === "metadata")) return error;
  return new SdkError(SdkErrorCode.EraNegotiationFailed, `2026-07-28 refused: ${error.message}`, undefined, {
    cause: error,
  });
}

export function modernOwnerOAuthConnection(
  options: Pick<HttpConnectionOptions, "server" | "events">,
  oauth: OAuthConnectionOptions,
): ServerConnection {
  const { name, auth, events } = oauth;
  const url = new URL(oauth.url);
  const catalogOwner = oauth.catalogOwner ?? HOST_OWNER;
  const providers = new Map<string, OAuthClientProvider>();
  const sessions = new Map<string, Promise<Client>>();
  let closing = false;

  const providerOf = (owner: string): OAuthClientProvider => {
    let provider = providers.get(owner);
    if (!provider) {
      provider = oauth.providerFor(owner);
      providers.set(owner, provider);
    }
    return provider;
  };
  const transportOf = (owner: string) => new StreamableHTTPClientTransport(url, { authProvider: providerOf(owner) });

  /** One authorization round of `owner` after `error`; false when `error` was not a request for authorization. */
  const authorizeOnce = async (owner: string, error: unknown): Promise<boolean> => {
    if (!(error instanceof UnauthorizedError)) return false;
    const provider = providerOf(owner);
    const link = provider instanceof OwnerOAuthProvider ? provider.takeAuthorizationUrl() : undefined;
    if (!link) return false;
    if (!oauth.authorize) throw new AuthorizationRequired(name, owner, link.href);
    const code = await oauth.authorize({ server: name, owner, url: link });
    // The exchange on the v1 path, as the owner's callback makes it.
    await new V1Transport(url, { authProvider: provider }).finishAuth(code);
    return true;
  };

  /** `work` as `owner`, authorizing as the server asks, at most `max_authorization_attempts` rounds. */
  const authorized = async <T>(owner: string, work: () => Promise<T>): Promise<T> => {
    for (let round = 0; ; round += 1) {
      try {
        return await work();
      } catch (error) {
        if (round + 1 >= auth.max_authorization_attempts || !(await authorizeOnce(owner, error))) throw error;
      }
    }
  };

  const catalog = modernClientConnection(
    { ...options, launchEnvironment: {} },
    {
      transport: () => transportOf(catalogOwner),
      asHost: (_task, work) => work(),
      forCaller: async () => (work) => work(),
    },
  );

  /** The owner's own client (server/discover under the owner's token). */
  const open = (owner: string): Promise<Client> =>
    authorized(owner, async () => {
      const client = createModernClient(events.elicit);
      const transport = transportOf(owner);
      try {
        await client.connect(transport, { timeout: OPEN_TIMEOUT_MS });
      } catch (error) {
        await retire(client);
        throw error;
      }
      interceptTaskAnswers(transport);
      return client;
    });

  const sessionOf = (owner: string): Promise<Client> => {
    if (closing) return Promise.reject(new Error("the connection is shut down"));
    let session = sessions.get(owner);
    if (!session) {
      session = open(owner);
      sessions.set(owner, session);
      session.catch(() => {
        if (sessions.get(owner) === session) sessions.delete(owner);
      });
    }
    return session;
  };

  const dropSession = async (owner: string): Promise<void> => {
    const session = sessions.get(owner);
    sessions.delete(owner);
    await session?.then(retire, () => undefined);
  };

  /**
   * A call as `owner`; when the server refuses what is stored (revoked, the refresh failed), the tokens are
   * forgotten, so the next proposal pauses for the owner again (as on 2025-11-25).
   */
  const runAs = async <T>(owner: string, work: (client: Client) => Promise<T>): Promise<T> => {
    try {
      const client = await sessionOf(owner);
      return await authorized(owner, () => work(client));
    } catch (error) {
      const provider = providerOf(owner);
      if (isAuthorizationRequired(error) && provider instanceof OwnerOAuthProvider) {
        await provider.forgetTokens().catch(() => undefined);
        await dropSession(owner);
      }
      throw error;
    }
  };

  return {
    async open() {
      if (closing) throw new Error("the connection is shut down");
      await Promise.all([...sessions.keys()].map(dropSession));
      return authorized(catalogOwner, () => catalog.open()).catch((error: unknown) => {
        throw asNotModern(error);
      });
    },
    async session(caller) {
      const owner = caller.principal.user_id;
      return { meta: traceMeta(caller), run: (work) => runAs(owner, (client) => work(requestsOf(client))) };
    },
    relist: () => authorized(catalogOwner, () => catalog.relist()),
    probe: () => authorized(catalogOwner, () => catalog.probe()),
    async shutdown() {
      closing = true;
      await Promise.all([...sessions.keys()].map(dropSession));
      await catalog.shutdown();
    },
  };
}
