/**
 * Streamable HTTP MCP servers on the 2026-07-28 revision, through the v2 SDK
 * client. The revision has no session: one client serves every caller, and
 * each request carries its own task token (minted per call, attached by the
 * same fetch wrapper as on 2025-11-25 from the call's async context), so no
 * request ever travels under another tenant's credentials. The host's own
 * requests (listing, the `server/discover` probe, the `subscriptions/listen`
 * stream tool list changes arrive on) carry a host token. An OAuth-protected
 * `client_credentials` server is spoken to the same way with the deployment's
 * OAuth provider in place of the task tokens (`modernOAuthConnection`).
 *
 * Health: a launched server's exit reports it down at once (http-launch.ts);
 * an error on the client's transport makes it suspect; the listen stream
 * ended by the server takes it down (a host deaf to changes would miss a
 * changed definition). Failures are re-thrown as the v1 errors failures.ts
 * classifies (modern-session.ts), so the typed codes do not depend on the
 * revision.
 */
import type { Client } from "@modelcontextprotocol/client";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { ErrorCode, McpError, type ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import {
  OPEN_TIMEOUT_MS,
  PROBE_TIMEOUT_MS,
  type Caller,
  type OpenedServer,
  type ServerConnection,
} from "./connection.js";
import { reasonOf } from "./health.js";
import { httpEndpoint } from "./http-launch.js";
import { sessionFetch, traceMeta, withTaskToken, type HttpConnectionOptions } from "./http-session.js";
import {
  createModernClient,
  isNotModern,
  listenForToolChanges,
  listModernTools,
  requestsOf,
} from "./modern-session.js";
import { retire } from "./stdio-process.js";
import { interceptTaskAnswers } from "./tasks.js";

/** The host's own identity towards HTTP servers (as on 2025-11-25): listing and probing need no tenant data. */
const HOST = "warrant-host";

function capabilitiesOf(client: Client): ServerCapabilities {
  const capabilities = client.getServerCapabilities();
  if (!capabilities) throw new Error("the server did not answer server/discover");
  return capabilities as ServerCapabilities;
}

/**
 * How a 2026-07-28 connection authorizes its requests: task tokens minted per call (Warrant's own servers), or the
 * bearer of an OAuth provider (modernOAuthConnection), the same provider object the 2025-11-25 connection uses.
 */
export interface ModernAuthorization {
  /** The client's transport to `url`, with what adds the credentials (a fetch wrapper, an auth provider). */
  transport(url: URL): StreamableHTTPClientTransport;
  /** Runs the host's own requests (`task`: catalog, probe) under the host's credentials. */
  asHost<T>(task: string, work: () => Promise<T>): Promise<T>;
  /** What runs a caller's requests under that caller's credentials. */
  forCaller(caller: Caller): Promise<<T>(work: () => Promise<T>) => Promise<T>>;
}

/** A Streamable HTTP server with task tokens on 2026-07-28; `open` rejects `isNotModern` when it does not speak it. */
export function modernHttpConnection(options: HttpConnectionOptions): ServerConnection {
  const { mint } = options;
  return modernClientConnection(options, {
    transport: (url) => new StreamableHTTPClientTransport(url, { fetch: sessionFetch(() => {}) }),
    asHost: async (task, work) => withTaskToken(await mint({ tenant: HOST, subject: HOST, scopes: [], task }), work),
    async forCaller(caller) {
      const token = await mint({
        tenant: caller.principal.tenant,
        subject: caller.principal.user_id,
        scopes: caller.principal.scopes,
        task: caller.threadId,
      });
      return (work) => withTaskToken(token, work);
    },
  });
}

/**
 * An OAuth-protected Streamable HTTP server on 2026-07-28 (`client_credentials`: one provider for the deployment).
 * The v2 transport takes the v1 provider as is: it sends its token on every request, answers a 401 with the SDK's
 * `auth()` (a new token, or a refresh) and retries once, as the v1 transport does on 2025-11-25.
 */
export function modernOAuthConnection(
  options: Pick<HttpConnectionOptions, "server" | "events">,
  provider: OAuthClientProvider,
): ServerConnection {
  const unchanged = async <T>(work: () => Promise<T>): Promise<T> => work();
  return modernClientConnection(
    { ...options, launchEnvironment: {} },
    {
      transport: (url) => new StreamableHTTPClientTransport(url, { authProvider: provider }),
      asHost: (_task, work) => work(),
      forCaller: async () => unchanged,
    },
  );
}

export function modernClientConnection(
  options: Omit<HttpConnectionOptions, "mint">,
  authorization: ModernAuthorization,
): ServerConnection {
  const { server, events } = options;
  const endpoint = options.endpoint ?? httpEndpoint(server, options.launchEnvironment, events);
  let current: Client | undefined;
  let closing = false;
  const asHost = authorization.asHost;

  const connected = (): Client => {
    if (!current) throw new McpError(ErrorCode.ConnectionClosed, "not connected");
    return current;
  };

  const retireCurrent = async (): Promise<void> => {
    const previous = current;
    current = undefined;
    if (previous) await retire(previous);
  };

  /** Connects `client` (server/discover), listens for tool list changes, lists the tools. */
  const start = async (client: Client): Promise<{ opened: OpenedServer; ended?: Promise<string> }> => {
    const transport = authorization.transport(new URL(endpoint.url()));
    await client.connect(transport, { timeout: OPEN_TIMEOUT_MS });
    interceptTaskAnswers(transport);
    const capabilities = capabilitiesOf(client);
    // Listening before listing: a change is either in the listing or on the stream.
    const ended = capabilities.tools?.listChanged ? (await listenForToolChanges(client)).ended : undefined;
    const tools = await listModernTools(client, capabilities);
    const version = client.getServerVersion();
    const info = { name: version?.name ?? "", version: version?.version ?? "" };
    return { opened: { capabilities, info, tools, revision: "2026-07-28" }, ...(ended ? { ended } : {}) };
  };

  return {
    async open() {
      if (closing) throw new Error("the connection is shut down");
      await retireCurrent();
      await endpoint.ensure();
      const client = createModernClient(events.elicit);
      // Only the current client's notifications count: one still opening lists its tools itself.
      client.setNotificationHandler("notifications/tools/list_changed", () => {
        if (current === client) events.toolsChanged();
      });
      let started: Awaited<ReturnType<typeof start>>;
      try {
        started = await asHost("catalog", () => start(client));
        if (closing) throw new Error("the connection is shut down");
      } catch (error) {
        await retire(client);
        // A server we launched that cannot be opened is restarted on the next attempt; one that does not speak
        // 2026-07-28 is left running for the 2025-11-25 connection sharing its endpoint.
        if (!(options.endpoint && isNotModern(error))) await endpoint.stop();
        throw error;
      }
      client.onerror = (error) => {
        if (current === client) events.suspect(`stream error: ${reasonOf(error)}`);
      };
      current = client;
      void started.ended?.then((how) => {
        if (how === "local") return;
        // After a launched server's own exit report, which names the real reason.
        setTimeout(() => {
          if (current === client) events.down("the server ended the tools/list_changed subscription");
        }, 0).unref();
      });
      return started.opened;
    },
    async session(caller) {
      const asCaller = await authorization.forCaller(caller);
      return {
        meta: traceMeta(caller),
        run(work) {
          const client = current;
          if (!client) return Promise.reject(new McpError(ErrorCode.ConnectionClosed, "not connected"));
          return asCaller(() => work(requestsOf(client)));
        },
      };
    },
    relist: () => asHost("catalog", async () => listModernTools(connected(), capabilitiesOf(connected()))),
    async probe() {
      await asHost("probe", () => connected().discover({ timeout: PROBE_TIMEOUT_MS }));
    },
    async shutdown() {
      closing = true;
      await retireCurrent();
      if (!options.endpoint) await endpoint.close();
    },
  };
}
