/**
 * Streamable HTTP MCP servers with per-call task tokens. One MCP session per
 * tenant serves every call of that tenant (the server binds a session to the
 * tenant that opened it): the token is minted for each call (audience,
 * tenant, task, subject, scopes) and attached by a fetch wrapper from the
 * call's async context. (The adapter opens a new connection per distinct
 * header set, which would grow without bound with per-call tokens.)
 *
 * Health: a launched server's exit reports it down at once; an error on a
 * session's stream makes it suspect (probed with a fresh session); a session
 * the server no longer knows (a 404 to a request carrying its id) is replaced
 * once, transparently, because the server did not process the request. A 404
 * to the optional GET event stream only means the server offers none.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { traceparentOf } from "../trace-ids.js";
import {
  listAllTools,
  negotiated,
  OPEN_TIMEOUT_MS,
  PROBE_TIMEOUT_MS,
  serverInfoOf,
  watchToolList,
  type Caller,
  type ConnectionEvents,
  type ServerConnection,
  v1Requests,
} from "./connection.js";
import { reasonOf } from "./health.js";
import { httpEndpoint, type HttpEndpoint, type HttpServer } from "./http-launch.js";
import { createHostClient, type ElicitationHandler } from "../elicitation/client.js";

const currentToken = new AsyncLocalStorage<string>();

/** Runs `work` with `token` as the bearer token of every request it makes. */
export function withTaskToken<T>(token: string, work: () => Promise<T>): Promise<T> {
  return currentToken.run(token, work);
}

/**
 * The standalone GET event stream is optional (spec: Streamable HTTP,
 * "Listening for Messages from the Server"): a server without one should
 * answer 405, and many (the conformance suite's among them) answer 404. The
 * SDK treats 405 as "no stream" and anything else as a transport error, which
 * would read as a lost session. So a 404 to the standalone GET (no
 * Last-Event-ID: not the resumption of a response) reaches the SDK as the 405
 * it means. A resumption GET, a POST or a DELETE keeps its 404.
 */
export function isStandaloneStreamRefusal(method: string, headers: Headers, status: number): boolean {
  return method.toUpperCase() === "GET" && !headers.has("last-event-id") && status === 404;
}

/**
 * A 404 to a GET resuming a response stream under our session id: the server
 * lost the session, and the response that stream was to carry with it. No
 * caller receives that error (the SDK only reports it), so the session says so.
 */
function isResumptionRefused(method: string, headers: Headers, status: number): boolean {
  return (
    method.toUpperCase() === "GET" && headers.has("last-event-id") && headers.has("mcp-session-id") && status === 404
  );
}

/** The fetch of one session: the call's task token, the GET stream's 404 read as "no stream", a lost resumption reported. */
export function sessionFetch(onResumptionRefused: () => void): typeof fetch {
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    const token = currentToken.getStore();
    if (token) headers.set("authorization", `Bearer ${token}`);
    const method = init?.method ?? "GET";
    const response = await fetch(input, { ...init, headers });
    if (isResumptionRefused(method, headers, response.status)) onResumptionRefused();
    if (!isStandaloneStreamRefusal(method, headers, response.status)) return response;
    await response.body?.cancel().catch(() => undefined);
    return new Response(null, { status: 405, statusText: "no server-initiated stream (the server answered 404)" });
  };
}

/** One MCP session over Streamable HTTP. */
export interface HttpSession {
  client: Client;
  transport: StreamableHTTPClientTransport;
}

/**
 * Connects one MCP client session to a Streamable HTTP server; the first token
 * opens the session. `onLost` hears of a lost session that no request's
 * answer reports (a refused stream resumption).
 */
export async function connectHttp(
  url: string,
  initialToken: string,
  onLost: () => void = () => undefined,
  elicit?: ElicitationHandler,
): Promise<HttpSession> {
  const client = createHostClient(elicit);
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: sessionFetch(onLost),
    // The SDK re-opens a dropped event stream itself; a few quick tries, then we hear about it through onerror.
    reconnectionOptions: {
      initialReconnectionDelay: 200,
      maxReconnectionDelay: 2_000,
      reconnectionDelayGrowFactor: 2,
      maxRetries: 2,
    },
  });
  await withTaskToken(initialToken, () => client.connect(transport, { timeout: OPEN_TIMEOUT_MS }));
  return { client, transport };
}

/** Closes our side of a session without reporting anything (its errors no longer matter). */
async function retire(session: HttpSession): Promise<void> {
  session.client.onerror = undefined;
  await session.client.close().catch(() => undefined);
}

/** Ends a session on the server too (DELETE), then closes it. */
async function endSession(session: HttpSession, token: string): Promise<void> {
  await withTaskToken(token, () => session.transport.terminateSession()).catch(() => undefined);
  await retire(session);
}

/**
 * A 404 answering a request that carried our session id: the server no longer
 * knows the session (restarted, or expired it). Without a session id (a
 * stateless server) a 404 is just a failed request, and the standalone GET's
 * 404 never gets here (see `isStandaloneStreamRefusal`).
 */
export function isSessionGone(error: unknown, session: HttpSession): boolean {
  return error instanceof StreamableHTTPError && error.code === 404 && session.transport.sessionId !== undefined;
}

/** Claims of a task token, minus the audience (fixed per server). */
export interface TokenRequest {
  tenant: string;
  subject: string;
  scopes: readonly string[];
  task: string;
}

export { EXIT_WITH_STDIN_ENV, launchHttpServer, stopChild, type LaunchedServer } from "./http-launch.js";

export interface HttpConnectionOptions {
  server: HttpServer;
  /** Mints a task token for this server's audience. */
  mint: (request: TokenRequest) => Promise<string>;
  /**
   * The server's endpoint when another owns it (negotiation.ts shares one between both revisions' connections, so
   * a launched server is started once): then shutdown leaves it running for its owner to close.
   */
  endpoint?: HttpEndpoint;
  /** Extra environment for a launched server (its token secret). */
  launchEnvironment: Record<string, string>;
  events: ConnectionEvents;
}

/** The host's own identity towards HTTP servers: listing tools and probing need no tenant data. */
const HOST = "warrant-host";

export function httpConnection(options: HttpConnectionOptions): ServerConnection {
  const { server, mint, events } = options;
  const endpoint = options.endpoint ?? httpEndpoint(server, options.launchEnvironment, events);
  let closing = false;
  /** One session per tenant: the promise while it opens, the session once open. */
  const sessions = new Map<string, { opening: Promise<HttpSession>; open?: HttpSession }>();

  const hostToken = (task: string) => mint({ tenant: HOST, subject: HOST, scopes: [], task });

  /** Runs `work` on a short-lived host session that is ended on the server afterwards. */
  const withHostSession = async <T>(task: string, work: (client: Client) => Promise<T>): Promise<T> => {
    const token = await hostToken(task);
    const session = await connectHttp(endpoint.url(), token);
    try {
      return await withTaskToken(token, () => work(session.client));
    } finally {
      await endSession(session, token);
    }
  };

  /** Drops a tenant's session (if it is still the current one) and closes our side of it. */
  const forget = (tenant: string, session: HttpSession): void => {
    if (sessions.get(tenant)?.open === session) sessions.delete(tenant);
    void retire(session);
  };

  const dropSessions = async (): Promise<void> => {
    const open = [...sessions.values()];
    sessions.clear();
    await Promise.all(open.map((entry) => entry.opening.then(retire, () => undefined)));
  };

  const tenantSession = (tenant: string, token: string): Promise<HttpSession> => {
    const known = sessions.get(tenant);
    if (known) return known.opening;
    const entry: { opening: Promise<HttpSession>; open?: HttpSession } = {
      // A lost resumption ends the session: the response it was to carry is gone with it.
      opening: connectHttp(
        endpoint.url(),
        token,
        () => {
          if (entry.open) forget(tenant, entry.open);
        },
        events.elicit,
      ).then((opened) => {
        watchToolList(opened.client, events);
        opened.client.onerror = (error) => {
          // A 404 to a request carrying our session id: the server is up and the
          // request that got it retries on a fresh session (run, below). Closing
          // the client here would abort that request and every other in flight.
          if (isSessionGone(error, opened)) return;
          events.suspect(`session stream error: ${reasonOf(error)}`);
        };
        entry.open = opened;
        return opened;
      }),
    };
    sessions.set(tenant, entry);
    entry.opening.catch(() => {
      if (sessions.get(tenant) === entry) sessions.delete(tenant);
    });
    return entry.opening;
  };

  return {
    async open() {
      if (closing) throw new Error("the connection is shut down");
      // Sessions of the previous connection belong to a server that failed; calls open fresh ones.
      await dropSessions();
      await endpoint.ensure();
      if (closing) throw new Error("the connection is shut down");
      try {
        return await withHostSession("catalog", async (client) => {
          const capabilities = negotiated(client);
          return { capabilities, info: serverInfoOf(client), tools: await listAllTools(client, capabilities) };
        });
      } catch (error) {
        // A server we launched that cannot list its tools is restarted on the next attempt.
        await endpoint.stop();
        throw error;
      }
    },
    async session(caller) {
      const tenant = caller.principal.tenant;
      const token = await mint({
        tenant,
        subject: caller.principal.user_id,
        scopes: caller.principal.scopes,
        task: caller.threadId,
      });
      return {
        // The caller's identity travels in the token; a tool call attempt's trace context in `_meta`.
        meta: traceMeta(caller),
        async run(work) {
          const first = await tenantSession(tenant, token);
          try {
            return await withTaskToken(token, () => work(v1Requests(first.client)));
          } catch (error) {
            // The server refused the session before processing the request: carry it once on a fresh session.
            if (!isSessionGone(error, first)) throw error;
            forget(tenant, first);
            const fresh = await tenantSession(tenant, token);
            return withTaskToken(token, () => work(v1Requests(fresh.client)));
          }
        },
      };
    },
    async relist() {
      // Tenant sessions hear list_changed on their event streams; the listing itself is the host's.
      return withHostSession("catalog", (client) => listAllTools(client, negotiated(client)));
    },
    async probe() {
      await withHostSession("probe", (client) => client.ping({ timeout: PROBE_TIMEOUT_MS }));
    },
    async shutdown() {
      closing = true;
      const open = [...sessions.entries()];
      sessions.clear();
      await Promise.all(
        open.map(async ([tenant, entry]) => {
          const session = await entry.opening.catch(() => undefined);
          if (!session) return;
          const token = await hostTokenFor(tenant).catch(() => "");
          await endSession(session, token);
        }),
      );
      if (!options.endpoint) await endpoint.close();
    },
  };

  /** Ending a tenant's session needs a token of that tenant (the server binds sessions to tenants). */
  function hostTokenFor(tenant: string): Promise<string> {
    return mint({ tenant, subject: HOST, scopes: [], task: "shutdown" });
  }
}

/** The `_meta` of a caller whose identity travels in a token: the attempt's `traceparent`, when it is one. */
export function traceMeta(caller: Caller): Record<string, string> | undefined {
  const trace = caller.trace;
  return trace ? { traceparent: traceparentOf(trace.runId, trace.callId, trace.attempt) } : undefined;
}
