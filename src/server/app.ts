/**
 * The HTTP API (`npm start`): the LangGraph API routes that
 * `@langchain/langgraph-sdk`'s `Client` and `useStream` use, on our
 * Postgres, behind bearer tokens.
 *
 * Trust boundary, in one place:
 * - The principal comes from the verified token and nothing else; the run's
 *   `configurable` is built server-side (runs/manager.ts). A client's `config`,
 *   `context`, identity metadata keys and `x-*` headers never reach a run.
 * - A thread belongs to its creator; anybody else gets 404 on every route.
 * - Clients may only *resume* an interrupt: `command.update`/`goto`, state
 *   writes and input keys other than one user message are refused.
 * - One run per thread at a time (a Postgres lease), and no fork back to a
 *   checkpoint that could replay an approval or a write.
 */
import { Hono } from "hono";
import { routePath } from "hono/route";
import { countRequest } from "../metrics.js";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import { tokenVerifier, type TokenVerifier } from "../auth/token-verifier.js";
import type { ToolHost } from "../mcp/tool-host.js";
import type { RequestGate } from "../auth/request-gate.js";
import type { LedgerStore } from "../ports.js";
import { logLine } from "../secrets/process-scanner.js";
import type { ThreadStore } from "../stores/thread-store.js";
import type { SecretScanner } from "../secrets/scanner.js";
import { errorBody, RETRY_AFTER_SECONDS } from "./api-error.js";
import { clientView } from "./client-view.js";
import { routeContext, type Env, type RouteContext } from "./context.js";
import { registerAssistantRoutes } from "./routes/assistants.js";
import { registerOperatorRoutes, type OperatorOptions } from "./routes/operator.js";
import { registerReviewRoutes } from "./routes/reviews.js";
import { registerElicitationRoutes } from "./routes/elicitations.js";
import { registerOAuthCallbackPage, registerOAuthCallbackRoutes } from "./routes/oauth-callback.js";
import type { ElicitationStore } from "../stores/elicitation-store.js";
import { registerRunRoutes } from "./runs/routes.js";
import { registerA2ARoutes, registerAgentCardRoute } from "./routes/a2a.js";
import { registerMcpRoutes } from "./routes/mcp.js";
import { registerThreadRoutes } from "./routes/threads.js";
import { registerPlatformRoutes, type PlatformOptions } from "./platform-routes.js";
import type { RunQueueStore } from "../stores/run-queue-store.js";
import type { ServedGraph } from "./runs/types.js";
import { startQueueWorker } from "./runs/queue.js";
import type { RunManager } from "./runs/manager.js";
import { registerPageRoutes, registerSessionRoutes, type WebOptions } from "./web.js";
import { isDatabaseBusy, isDatabaseUnavailable, isApiError, ApiError } from "../errors.js";
import { registerOpenApiRoutes } from "./openapi/docs-page.js";

export interface AppOptions {
  manager: RunManager;
  /** How often this instance looks for delayed or queued runs due (runs/queue.ts; default 500 ms). */
  queuePollMs?: number | undefined;
  /** The queue worker's store, on the background connections (`Database.background`); default the manager's. */
  backgroundQueue?: RunQueueStore | undefined;
  store: ThreadStore;
  /** The thread's ledger rows (to tell whether a stopped run left a write in doubt). */
  ledger: LedgerStore;
  graphs: Map<string, ServedGraph>;
  secret: Uint8Array;
  /** How tokens are verified (src/auth/token-verifier.ts); absent: Warrant's own tokens with `secret`. */
  verifier?: TokenVerifier;
  /** Revoked tokens and the principal directory, checked after the token verifies (absent: the token alone). */
  gate?: RequestGate;
  maxBodyBytes: number;
  /** Answers /healthz: throws when the database is unreachable. */
  ping: () => Promise<void>;
  version: string;
  /** SSE heartbeat interval on run streams (default 10 s). */
  heartbeatMs?: number;
  /** Browser origins allowed to call the API (CORS); none by default. */
  corsOrigins?: string[];
  /** The chat page at `/` (web.ts); absent in tests that serve the API alone. */
  web?: WebOptions;
  /** The tool host's secret scanner, for the error log (absent: the built-in patterns). */
  secrets?: SecretScanner | undefined;
  /** The CLI's operator routes (`/operator/*`, their own tokens); absent in tests that serve the API alone. */
  operator?: Omit<OperatorOptions, "secret">;
  /** Who may answer a review under a policy language engine (context.ts `approverRefusal`); absent: the review policy. */
  approverRefusal?: RouteContext["approverRefusal"];
  /** The store, crons and webhooks (platform-routes.ts); absent in tests that serve the runs API alone. */
  platform?: PlatformOptions;
  /** Servers' questions to runs' owners (routes/elicitations.ts); absent: no such routes. */
  elicitations?: ElicitationStore;
  /** The tool host that completes per-user OAuth authorizations (routes/oauth-callback.ts); absent: no such routes. */
  oauthTools?: () => Promise<ToolHost>;
  /** How long `/mcp` and A2A calls wait for their run before answering `working` (default 45 s). */
  externalWaitMs?: number | undefined;
}

/** How much of an oversized body is read and discarded before answering 413. */
const DISCARD_CAP_BYTES = 16 * 1024 * 1024;

export function createApp(options: AppOptions): Hono<Env> {
  const { manager, store, graphs } = options;
  const app = new Hono<Env>();
  // Counted by the matched route's template (the last handler's), so a path's ids never become series.
  app.use("*", async (c, next) => {
    try {
      await next();
    } finally {
      countRequest(c.req.method, routePath(c, -1), c.res.status);
    }
  });

  app.onError((error, c) => {
    const answered = isDatabaseBusy(error)
      ? new ApiError("database_busy", error.message)
      : isDatabaseUnavailable(error)
        ? new ApiError("database_unavailable", error.message)
        : error;
    if (isApiError(answered)) {
      const retryAfter = RETRY_AFTER_SECONDS[answered.code];
      if (retryAfter !== undefined) c.header("Retry-After", String(retryAfter));
      return c.json(errorBody(answered.code, answered.message), answered.status as 400);
    }
    console.error(
      logLine(
        `warrant-server: unexpected error on ${c.req.method} ${c.req.path}: ${error instanceof Error ? error.stack : String(error)}`,
        options.secrets,
      ),
    );
    return c.json(errorBody("internal_error", "the server failed to handle the request"), 500);
  });
  app.notFound((c) => c.json(errorBody("not_found", "no such route"), 404));

  app.get("/healthz", async (c) => {
    try {
      await options.ping();
      return c.json({ ok: true, accepting_runs: manager.accepting });
    } catch {
      return c.json({ ok: false, error: "database_unreachable" }, 503);
    }
  });

  // The reference server's liveness route: the process answers (readiness, with the database, is /healthz).
  app.get("/ok", (c) => c.json({ ok: true }));

  // Cross-origin browser clients (a chat app on another port): only the listed origins, and
  // preflights are answered before authentication. Tokens travel in a header, never a cookie.
  if (options.corsOrigins && options.corsOrigins.length > 0) {
    app.use(
      "*",
      cors({
        origin: options.corsOrigins,
        // X-Api-Key carries the token for agent-chat-ui and the SDK's apiKey; X-Auth-Scheme is
        // sent beside it and changes nothing here (a token is verified the same way whatever it says).
        allowHeaders: [
          "Authorization",
          "Content-Type",
          "Last-Event-ID",
          "X-Api-Key",
          "X-Auth-Scheme",
          "Idempotency-Key",
          // The protocol versions MCP and A2A clients announce (/mcp, /a2a/{assistant_id}).
          "Mcp-Protocol-Version",
          "A2A-Version",
        ],
        exposeHeaders: ["Content-Location", "Location", "Idempotent-Replayed"],
        maxAge: 600,
      }),
    );
  }

  // Oversized bodies: 413 before the handler sees anything. The rest of the
  // body is read and discarded (up to a cap) so the client receives the
  // answer instead of a reset connection.
  app.use("*", async (c, next) => {
    const declared = Number(c.req.header("content-length") ?? "NaN");
    if (Number.isFinite(declared) && declared > options.maxBodyBytes) {
      await discardBody(c.req.raw, DISCARD_CAP_BYTES);
      c.header("Connection", "close");
      return c.json(errorBody("body_too_large", `the body is larger than ${options.maxBodyBytes} bytes`), 413);
    }
    return bodyLimit({
      maxSize: options.maxBodyBytes,
      onError: (inner) =>
        inner.json(errorBody("body_too_large", `the body is larger than ${options.maxBodyBytes} bytes`), 413),
    })(c, next);
  });

  // The page loads without a token; it asks for one (web.ts). So does the OAuth callback page.
  if (options.web) registerPageRoutes(app, options.web);
  if (options.oauthTools) registerOAuthCallbackPage(app);

  // What the server is, for clients probing it before they have a token (agent-chat-ui
  // checks /info first). Nothing about users, threads or configuration.
  app.get("/info", (c) =>
    c.json({
      version: options.version,
      name: "warrant",
      flags: {
        assistants: true,
        crons: options.platform !== undefined,
        langsmith: false,
        langsmith_tracing_replicas: false,
      },
    }),
  );

  // The API's OpenAPI document and its reference page (openapi/): public, like /info.
  registerOpenApiRoutes(app, options.version);

  const verifier = options.verifier ?? tokenVerifier({ secret: options.secret });
  if (options.operator)
    registerOperatorRoutes(app, {
      ...options.operator,
      secret: options.secret,
      verifier,
      ...(options.gate ? { gate: options.gate } : {}),
    });
  // A2A discovery: the card names the assistants and the endpoint, no user (routes/a2a.ts).
  registerAgentCardRoute(app, () => [...graphs.keys()]);

  // Every route below needs a valid token (Authorization: Bearer, or X-Api-Key).
  app.use("*", async (c, next) => {
    const result = await verifier.authenticate({
      authorization: c.req.header("authorization"),
      apiKey: c.req.header("x-api-key"),
    });
    // An identity provider that cannot be reached fails closed: 503, never an admission.
    if (!result.ok && result.code === "auth_unavailable") throw new ApiError(result.code, result.message);
    const admitted = result.ok && options.gate ? await admit(options.gate, result) : result;
    if (!admitted.ok) {
      c.header("WWW-Authenticate", `Bearer error="invalid_token"`);
      return c.json(errorBody(admitted.code, admitted.message), 401);
    }
    c.set("principal", admitted.principal);
    await next();
  });

  // The page's own session route shows the user their scopes (README); every API answer after
  // it leaves through one view of what a client may see (client-view.ts).
  if (options.web) registerSessionRoutes(app, options.web);
  app.use("*", clientView);
  const context = routeContext(manager, store, options.ledger, graphs, options.heartbeatMs ?? 10_000);
  if (options.platform?.webhooks) context.webhooks = options.platform.webhooks;
  if (options.approverRefusal) context.approverRefusal = options.approverRefusal;
  registerAssistantRoutes(app, context);
  registerThreadRoutes(app, context);
  registerRunRoutes(app, context);
  const queue = manager.queue && (options.backgroundQueue ?? manager.queue);
  if (queue)
    startQueueWorker(context, queue, {
      pollMs: options.queuePollMs,
      log: (line) => console.error(logLine(`warrant-server: ${line}`)),
    });
  registerReviewRoutes(app, context);
  // Other agents and MCP clients: the same runs, reviews and limits as the routes above (runs/external.ts).
  registerMcpRoutes(app, context, { waitMs: options.externalWaitMs });
  registerA2ARoutes(app, context, { waitMs: options.externalWaitMs });
  if (options.platform) registerPlatformRoutes(app, context, options.platform);
  if (options.elicitations) registerElicitationRoutes(app, context, options.elicitations);
  if (options.oauthTools) registerOAuthCallbackRoutes(app, context, options.oauthTools);
  return app;
}

/** The gate's answer; a revocation list or directory that cannot be read is a 503, never an admission. */
async function admit(gate: RequestGate, verified: Parameters<RequestGate["admit"]>[0]) {
  try {
    return await gate.admit(verified);
  } catch (error) {
    // The database's own outage is answered like every other request that cannot reach it (503, Retry-After).
    if (isDatabaseUnavailable(error)) throw error;
    console.error(logLine(`warrant-server: cannot check the token's revocation or principal: ${String(error)}`));
    throw new ApiError("auth_unavailable", "the server cannot check the token right now; retry");
  }
}

/** Reads and drops a request body, stopping after `cap` bytes. */
async function discardBody(request: Request, cap: number): Promise<void> {
  const reader = request.body?.getReader();
  if (!reader) return;
  let read = 0;
  try {
    while (read <= cap) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
    }
    await reader.cancel();
  } catch {
    // The client went away: nothing left to discard.
  }
}
