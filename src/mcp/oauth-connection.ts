/**
 * Streamable HTTP servers protected by OAuth 2.1 (the MCP authorization
 * specification), through the SDK's transport with an `authProvider`: the
 * transport answers a 401 with the SDK's `auth()` (discovery, registration,
 * token request, refresh) and a 403 `insufficient_scope` with a step-up.
 *
 * Sessions: one for the deployment (`client_credentials`, and the host's own
 * listing and probes), one per owner for `authorization_code` servers, so an
 * owner's token is only ever sent on that owner's session. When the SDK needs
 * a user at the authorization server it hands over a URL; `authorize` (when
 * given: the conformance client drives it as a browser would) returns the
 * code and the request is retried, at most `max_authorization_attempts`
 * rounds per request; without it the request fails with
 * {@link AuthorizationRequired}, carrying the URL for the owner.
 */
import { discoverOAuthServerInfo, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { createHostClient } from "../elicitation/client.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthConfig } from "../oauth/config.js";
import {
  listAllTools,
  negotiated,
  OPEN_TIMEOUT_MS,
  PROBE_TIMEOUT_MS,
  serverInfoOf,
  watchToolList,
  type ConnectionEvents,
  type ServerConnection,
  v1Requests,
} from "./connection.js";
import { reasonOf } from "./health.js";
import { isStandaloneStreamRefusal, traceMeta } from "./http-session.js";
import { HOST_OWNER, type Authorize } from "../oauth/authorization.js";
import { checkIssuer } from "../oauth/issuer.js";
import { OwnerOAuthProvider } from "../oauth/provider.js";
import { AuthorizationRequired, isAuthorizationRequired } from "../errors.js";

export interface OAuthConnectionOptions {
  name: string;
  url: string;
  auth: OAuthConfig;
  /** The provider of an owner (ignored for client_credentials: one provider for the deployment). */
  providerFor: (owner: string) => OAuthClientProvider;
  authorize?: Authorize | undefined;
  /** Whose authorization lists and probes an `authorization_code` server (default {@link HOST_OWNER}). */
  catalogOwner?: string | undefined;
  events: ConnectionEvents;
}

/** The GET event stream refused with 404 reads as "no stream" (as in http-session.ts), for the MCP endpoint only. */
function endpointFetch(endpoint: string): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const target = input instanceof Request ? input.url : String(input);
    const headers = new Headers(init?.headers);
    if (target !== endpoint || !isStandaloneStreamRefusal(init?.method ?? "GET", headers, response.status))
      return response;
    await response.body?.cancel().catch(() => undefined);
    return new Response(null, { status: 405, statusText: "no server-initiated stream (the server answered 404)" });
  };
}

interface OwnerSession {
  client: Client;
  transport: StreamableHTTPClientTransport;
  provider: OAuthClientProvider;
}

export function oauthConnection(options: OAuthConnectionOptions): ServerConnection {
  const { name, auth, events } = options;
  const endpoint = new URL(options.url).href;
  const perOwner = auth.grant === "authorization_code";
  const sessions = new Map<string, Promise<OwnerSession>>();
  const providers = new Map<string, OAuthClientProvider>();
  let closing = false;
  const catalogOwner = options.catalogOwner ?? HOST_OWNER;

  const providerOf = (owner: string): OAuthClientProvider => {
    const key = perOwner ? owner : HOST_OWNER;
    let provider = providers.get(key);
    if (!provider) {
      provider = options.providerFor(key);
      providers.set(key, provider);
    }
    return provider;
  };

  /**
   * One authorization round: the URL the SDK asked for (or an error naming
   * it), the code from `authorize`, the exchange. Returns false when the
   * failure was not a request for authorization.
   */
  const authorizeOnce = async (
    owner: string,
    provider: OAuthClientProvider,
    transport: StreamableHTTPClientTransport,
    error: unknown,
  ): Promise<boolean> => {
    if (!(error instanceof UnauthorizedError)) return false;
    const url = provider instanceof OwnerOAuthProvider ? provider.takeAuthorizationUrl() : undefined;
    if (!url) return false;
    if (!options.authorize) throw new AuthorizationRequired(name, owner, url.href);
    const code = await options.authorize({ server: name, owner, url });
    await transport.finishAuth(code);
    return true;
  };

  const open = async (owner: string): Promise<OwnerSession> => {
    const provider = providerOf(owner);
    for (let round = 0; ; round += 1) {
      const client = createHostClient(events.elicit);
      const transport = new StreamableHTTPClientTransport(new URL(endpoint), {
        authProvider: provider,
        fetch: endpointFetch(endpoint),
        reconnectionOptions: {
          initialReconnectionDelay: 200,
          maxReconnectionDelay: 2_000,
          reconnectionDelayGrowFactor: 2,
          maxRetries: 2,
        },
      });
      try {
        await client.connect(transport, { timeout: OPEN_TIMEOUT_MS });
        watchToolList(client, events);
        client.onerror = (error) => events.suspect(`session stream error: ${reasonOf(error)}`);
        return { client, transport, provider };
      } catch (error) {
        await client.close().catch(() => undefined);
        if (round + 1 >= auth.max_authorization_attempts || !(await authorizeOnce(owner, provider, transport, error)))
          throw error;
      }
    }
  };

  const sessionOf = (owner: string): Promise<OwnerSession> => {
    const key = perOwner ? owner : HOST_OWNER;
    let session = sessions.get(key);
    if (!session) {
      session = open(key);
      sessions.set(key, session);
      session.catch(() => {
        if (sessions.get(key) === session) sessions.delete(key);
      });
    }
    return session;
  };

  /** Runs one request on an owner's session, authorizing (and stepping up) as the server asks, within the limit. */
  const run = async <T>(owner: string, work: (client: Client) => Promise<T>): Promise<T> => {
    const session = await sessionOf(owner);
    for (let round = 0; ; round += 1) {
      try {
        return await work(session.client);
      } catch (error) {
        if (round + 1 >= auth.max_authorization_attempts) throw error;
        if (!(await authorizeOnce(owner, session.provider, session.transport, error))) throw error;
      }
    }
  };

  /**
   * A call as `owner`: when the server refuses what is stored (revoked, the
   * refresh failed), the tokens are forgotten, so the next proposal of this
   * server's tools pauses for the owner again instead of failing each time.
   */
  const runForgetting = async <T>(owner: string, work: (client: Client) => Promise<T>): Promise<T> => {
    try {
      return await run(owner, work);
    } catch (error) {
      const provider = providerOf(owner);
      if (isAuthorizationRequired(error) && provider instanceof OwnerOAuthProvider) {
        await provider.forgetTokens().catch(() => undefined);
        sessions.delete(perOwner ? owner : HOST_OWNER);
      }
      throw error;
    }
  };

  /** The owner's provider for the one authorization that carries `state`. */
  const providerFor = (owner: string, state: string): OAuthClientProvider => {
    const provider = providerOf(owner);
    return provider instanceof OwnerOAuthProvider ? provider.withAuthorization(state) : provider;
  };

  /**
   * Undefined when the owner holds a token (or `authorize` completes the step
   * itself), else the URL to send the owner to. Each call opens a connection
   * of its own with a provider bound to `state`, so two links asked for at
   * once (two paused threads of one owner) each carry their own state and
   * verifier; the owner's session is not touched.
   */
  const authorizationFor = async (owner: string, state: string): Promise<string | undefined> => {
    if (await providerOf(owner).tokens()) return undefined;
    const provider = providerFor(owner, state);
    const client = createHostClient(events.elicit);
    const transport = new StreamableHTTPClientTransport(new URL(endpoint), {
      authProvider: provider,
      fetch: endpointFetch(endpoint),
    });
    try {
      await client.connect(transport, { timeout: OPEN_TIMEOUT_MS });
      return undefined;
    } catch (error) {
      const url = provider instanceof OwnerOAuthProvider ? provider.takeAuthorizationUrl() : undefined;
      if (!(error instanceof UnauthorizedError) || !url) throw error;
      if (!options.authorize) return url.href;
      let code: string;
      try {
        code = await options.authorize({ server: name, owner, url });
      } catch (refused) {
        // `authorize` leaves this owner's step to the owner: the link is theirs.
        if (isAuthorizationRequired(refused)) return url.href;
        throw refused;
      }
      await transport.finishAuth(code);
      sessions.delete(owner);
      return undefined;
    } finally {
      await client.close().catch(() => undefined);
    }
  };

  const completeAuthorization = async (owner: string, code: string, state: string, iss?: string): Promise<void> => {
    // RFC 9207: the response must come from the authorization server this resource names, checked before the code
    // goes anywhere; the discovery made for the check is the one the exchange uses.
    const server = await discoverOAuthServerInfo(new URL(endpoint), { fetchFn: endpointFetch(endpoint) });
    checkIssuer(server.authorizationServerMetadata, iss);
    const provider = providerFor(owner, state);
    await provider.saveDiscoveryState?.(server);
    const transport = new StreamableHTTPClientTransport(new URL(endpoint), {
      authProvider: provider,
      fetch: endpointFetch(endpoint),
    });
    await transport.finishAuth(code);
    sessions.delete(owner);
  };

  const dropSessions = async (): Promise<void> => {
    const open = [...sessions.values()];
    sessions.clear();
    await Promise.all(
      open.map((session) =>
        session.then(
          (opened) => opened.client.close().catch(() => undefined),
          () => undefined,
        ),
      ),
    );
  };

  return {
    async open() {
      if (closing) throw new Error("the connection is shut down");
      await dropSessions();
      return run(catalogOwner, async (client) => {
        const capabilities = negotiated(client);
        return { capabilities, info: serverInfoOf(client), tools: await listAllTools(client, capabilities) };
      });
    },
    async session(caller) {
      const owner = caller.principal.user_id;
      return { meta: traceMeta(caller), run: (work) => runForgetting(owner, (client) => work(v1Requests(client))) };
    },
    relist: () => run(catalogOwner, (client) => listAllTools(client, negotiated(client))),
    async probe() {
      await run(catalogOwner, (client) => client.ping({ timeout: PROBE_TIMEOUT_MS }));
    },
    ...(perOwner ? { authorizationFor, completeAuthorization } : {}),
    async shutdown() {
      closing = true;
      await Promise.all(
        [...sessions.values()].map((session) =>
          session.then(
            (opened) => opened.transport.terminateSession().catch(() => undefined),
            () => undefined,
          ),
        ),
      );
      await dropSessions();
    },
  };
}
