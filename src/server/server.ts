/**
 * Starts the API server: database (embedded or `DATABASE_URL`), MCP tools,
 * both graphs on the Postgres checkpointer, the run manager and the HTTP
 * listener. `close()` drains: it stops taking new runs, lets in-flight runs
 * finish (up to `drainMs`, then aborts them at their last checkpoint),
 * closes HTTP connections, MCP child processes, the pool and the embedded
 * database.
 */
import { countRunEnded, registerGauge, watchEventLoop } from "../metrics.js";
import { createRunQueueStore } from "../stores/run-queue-store.js";
import { createTaskWaitStore } from "../stores/task-wait-store.js";
import { startTaskWaitPoller } from "./crons/task-waits.js";
import { resumeTaskWait } from "./crons/task-wait-resume.js";
import { threadConfig } from "../run-config.js";
import { serve, type ServerType } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { loadApiSecret } from "../auth/api-token.js";
import { tokenVerifier } from "../auth/token-verifier.js";
import { requestGate } from "../auth/request-gate.js";
import { RevocationList } from "../auth/revocations.js";
import { createRevocationStore } from "../stores/revocation-store.js";
import { createRuntime, refuseConfigErrors } from "../bootstrap.js";
import type { Principal } from "../auth/principal.js";
import { approverRefusal } from "../policy/checks.js";
import { loadConfig } from "../policy/config.js";
import { runBoundFor } from "../policy/run-bound.js";
import type { Settings } from "../env.js";
import type { ToolHost } from "../mcp/tool-host.js";
import type { Database } from "../stores/open-database.js";
import type { Planner } from "../planners/planner.js";
import { createApp } from "./app.js";
import { createElicitationStore } from "../stores/elicitation-store.js";
import { withRunMetadata } from "./checkpoint-metadata.js";
import type { ServedGraph } from "./runs/types.js";
import { RunManager } from "./runs/manager.js";
import { webOptions } from "./web.js";
import { preparePlatform } from "./platform.js";
import { logLine } from "../secrets/process-scanner.js";
import type { SecretScanner } from "../secrets/scanner.js";
import { runExports } from "../trace/export-runs.js";
import { otlpConfigured } from "../trace/otel.js";

export interface StartedServer {
  url: string;
  port: number;
  manager: RunManager;
  /** Drains and releases everything. Idempotent. */
  close(options?: { drainMs?: number }): Promise<void>;
}

export interface StartServerOptions {
  settings: Settings;
  /** Replace parts of the runtime: the agent's planner, the tools (tests), the database (a worker on the primary's). */
  overrides?: { planner?: Planner; tools?: ToolHost; database?: Database };
  /** Lease on a thread while a run executes; default `settings.server.runLeaseMs`. */
  leaseMs?: number;
  drainMs?: number;
  log?: (line: string) => void;
  version?: string;
  /** SSE heartbeat interval on run streams (tests shorten it). */
  heartbeatMs?: number;
}

export async function startServer(options: StartServerOptions): Promise<StartedServer> {
  const { settings } = options;
  // Redacted with the tool host's patterns once it is built (the built-in ones before).
  let secrets: SecretScanner | undefined;
  const log = options.log ?? ((line: string) => console.error(logLine(`warrant-server: ${line}`, secrets)));
  // Task writes pause their thread; this instance's poller (with every other instance's) waits for them.
  const runtime = createRuntime(settings, { ...options.overrides, detachTasks: true });
  try {
    const database = await runtime.database();
    watchEventLoop();
    for (const [name, pool] of [
      ["requests", database.pool],
      ["background", database.background],
    ] as const) {
      // Background work shares the requests' pool when it has none of its own: counted once.
      if (name === "background" && pool === database.pool) continue;
      registerGauge(`warrant_pg_pool_connections{pool="${name}",state="total"}`, () => pool.totalCount);
      registerGauge(`warrant_pg_pool_connections{pool="${name}",state="idle"}`, () => pool.idleCount);
      registerGauge(`warrant_pg_pool_connections{pool="${name}",state="waiting"}`, () => pool.waitingCount);
    }
    // Tools start with the server, so a broken MCP configuration fails here, not in the first run.
    const tools = await runtime.host.tools();
    secrets = tools.secrets;
    // The checks of `npm run policy -- check`; a test's own tool host is not what the config describes.
    for (const warning of await refuseConfigErrors(settings, options.overrides?.tools ? undefined : tools))
      log(warning);
    const secret = await loadApiSecret({ configured: settings.server.authSecret, dataDir: settings.dataDir });
    // Warrant's own tokens, and those of the organization's OpenID Connect issuers when `auth.oidc` names any.
    const oidc = (await loadConfig(settings.configPath)).auth.oidc;
    const verifier = tokenVerifier({ secret, oidc });
    if (oidc)
      log(
        `OpenID Connect sign-in: ${oidc.issuers.map((issuer) => issuer.issuer).join(", ")}` +
          (oidc.directory ? " (narrowed by the principal directory)" : " (the IdP is the authority)"),
      );
    // Imported here: graph modules read settings on import, after configuration errors have had their chance.
    const { buildAgent } = await import("../../graphs/agent.js");
    const { buildWorkflow } = await import("../../graphs/workflow.js");
    // Checkpoints written by API runs carry the run's id and metadata (history filters by them).
    const saver = withRunMetadata(database.saver);
    const graphs = new Map<string, ServedGraph>([
      ["agent", buildAgent(runtime.host).compile({ checkpointer: saver }) as unknown as ServedGraph],
      ["workflow", buildWorkflow(runtime.host).compile({ checkpointer: saver }) as unknown as ServedGraph],
    ]);
    const leaseMs = options.leaseMs ?? settings.server.runLeaseMs;
    const contracts = (await runtime.host.tools()).catalog().map((tool) => tool.contract);
    // Other instances' run events wake this one's readers (server mode; the embedded database has one instance).
    const notifications =
      database.mode === "server"
        ? await database.listenForRunEvents(log).catch((error: unknown) => {
            log(`run event notifications unavailable (${String(error)}); readers of other instances' runs poll`);
            return undefined;
          })
        : undefined;
    // With an OTLP endpoint configured, each finished run is exported as OpenTelemetry spans (src/trace/otel.ts).
    const graphFor = async (graphId: string | null) => {
      const graph = graphs.get(graphId ?? "agent") ?? graphs.get("agent");
      if (graph === undefined) throw new Error("the server serves no agent graph");
      return graph;
    };
    const exports = otlpConfigured() ? runExports({ database, graphFor, log }) : undefined;
    // The store, crons and webhooks (platform.ts): their hooks into every run, the scheduler below.
    const platform = await preparePlatform({ settings, database, log });
    const manager = new RunManager({
      notifications,
      onRunEnded: (run, warrantRunId) => {
        countRunEnded(run.status);
        exports?.enqueue(warrantRunId ?? run.run_id);
        platform.webhooks.runEnded(run);
      },
      // `run.ended` (and `run.review_pending`) commit with the run's final status: a death in between cannot lose them.
      onRunEnd: platform.webhooks.endHook,
      storeFor: platform.storeFor,
      graphs,
      store: database.threads,
      events: database.runEvents,
      budgets: settings.budgets,
      log,
      leaseMs,
      maxActiveRuns: settings.server.maxActiveRuns,
      runBound: (request) => runBoundFor(request, contracts),
      // Only with a crash point configured: the hook makes a run's graph wait for its first event to be stored.
      atPoint:
        settings.server.testCrashAt === undefined
          ? undefined
          : (point) => {
              if (point === settings.server.testCrashAt) process.kill(process.pid, "SIGKILL");
            },
      secrets,
      queue: createRunQueueStore(database.pool, database.schema),
      ledger: database.ledger,
      taskWaits: database.taskWaits,
    });
    const recoverOrphans = async () => {
      const recovered = await manager.recoverOrphans();
      if (recovered > 0)
        log(`marked ${recovered} run(s) left by a stopped server as failed; their threads can be continued`);
      await manager.purgeEvents();
    };
    await recoverOrphans();
    // Another process sharing this Postgres may die at any time, not only before we start:
    // look again every lease, or its runs stay "running" (and their joins wait) forever.
    const sweep = setInterval(
      () => void recoverOrphans().catch((error: unknown) => log(`orphan sweep failed: ${String(error)}`)),
      leaseMs,
    );
    sweep.unref();
    const scheduler = platform.startScheduler({
      manager,
      directory: runtime.principals,
      graph: () => graphs.get("agent") ?? [...graphs.values()][0] ?? failNoGraph(),
    });
    const taskPoller = startTaskWaitPoller({
      // The poller's ticks run on the background connections, as the scheduler's do.
      store: createTaskWaitStore(database.background, database.schema),
      tools: runtime.host.tools,
      intervalMs: settings.platform?.taskPollMs ?? 1_000,
      log,
      resume: (wait) =>
        resumeTaskWait(
          {
            manager,
            threads: database.threads,
            directory: runtime.principals,
            snapshotOf: (threadId) => (graphs.get("agent") ?? failNoGraph()).getState(threadConfig(threadId)),
          },
          wait,
        ),
    });
    const web = await webOptions(settings, secret, runtime.host.tools, oidc);
    if (web.devPrincipals && settings.server.devLogin)
      log(
        `WARNING: WARRANT_DEV_LOGIN=1: anyone who can reach ${settings.server.host} can mint a token` +
          ` for any user of ${settings.principalsPath} (POST /dev/token)`,
      );
    if (settings.verifiedClaimsOnly)
      log(
        "WARRANT_VERIFIED_CLAIMS_ONLY=1: no principal directory; a verified token's claims are trusted until it expires",
      );
    const app = createApp({
      manager,
      queuePollMs: settings.platform?.queuePollMs,
      backgroundQueue: createRunQueueStore(database.background, database.schema),
      store: database.threads,
      ledger: database.ledger,
      elicitations: createElicitationStore(database.pool, database.schema),
      oauthTools: runtime.host.tools,
      graphs,
      secret,
      verifier,
      gate: requestGate({
        revocations: new RevocationList(createRevocationStore(database.pool, database.schema)),
        directory: runtime.principals,
      }),
      maxBodyBytes: settings.server.maxBodyBytes,
      corsOrigins: settings.server.corsOrigins,
      web,
      operator: {
        database,
        graphFor,
        tools: runtime.host.tools,
        config: () => loadConfig(settings.configPath),
        metricsToken: settings.server.metricsToken,
      },
      ping: async () => {
        await database.pool.query("select 1");
      },
      version: options.version ?? "0.1.0",
      secrets,
      platform: platform.routes,
      // Under Cedar the `approve` policies decide who may answer a review, before a resume run starts (the graph
      // asks them again in human_review); the built-in review policy is already the route's own check.
      approverRefusal: async (approver, owner, reviews) => {
        const engine = await runtime.host.policyEngine?.();
        if (!engine || engine.name === "builtin") return null;
        let current: Principal;
        try {
          current = await runtime.host.currentPrincipal(owner);
        } catch {
          return null; // an owner no longer in the directory: the resume run fails with principal_revoked
        }
        return approverRefusal(approver, current, reviews, engine, runtime.host.now());
      },
      ...(options.heartbeatMs ? { heartbeatMs: options.heartbeatMs } : {}),
    });
    const requests = new InFlight();
    const server = await listen(
      (request, env) => requests.track(() => app.fetch(request, env)),
      settings.server.host,
      settings.server.port,
    );
    const port = (server.address() as AddressInfo).port;
    let closing: Promise<void> | undefined;
    return {
      url: `http://${settings.server.host}:${port}`,
      port,
      manager,
      close: (closeOptions = {}) =>
        (closing ??= (async () => {
          const http = server as unknown as Server;
          clearInterval(sweep);
          // No new cron runs from this instance; the others keep firing.
          await scheduler.stop();
          await taskPoller.stop();
          // No new connections; idle keep-alive sockets go now, streams end with their runs.
          http.close();
          http.closeIdleConnections?.();
          const drainMs = closeOptions.drainMs ?? options.drainMs ?? 10_000;
          const deadline = Date.now() + drainMs;
          await manager.drain(drainMs);
          // Requests being handled (a wait or join whose run just ended, or runs on
          // another process) get their answer before connections are cut.
          await requests.idle(deadline - Date.now());
          await exports?.idle(deadline - Date.now());
          await platform.close();
          // Give streams a moment to flush their last events, then cut what is left.
          await new Promise((resolve) => setTimeout(resolve, 100));
          http.closeAllConnections?.();
          await notifications?.close();
          await runtime.close();
        })()),
    };
  } catch (error) {
    await runtime.close();
    throw error;
  }
}

/**
 * Counts requests whose handler has not returned a response yet (an SSE
 * response counts until its headers are out; its body ends with its run).
 */
class InFlight {
  #count = 0;
  #waiters: (() => void)[] = [];

  async track(handle: () => Response | Promise<Response>): Promise<Response> {
    this.#count += 1;
    try {
      return await handle();
    } finally {
      this.#count -= 1;
      if (this.#count === 0) for (const resolve of this.#waiters.splice(0)) resolve();
    }
  }

  /** Resolves when no request is in flight, or after `timeoutMs`. */
  async idle(timeoutMs: number): Promise<void> {
    if (this.#count === 0 || timeoutMs <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => this.#waiters.push(resolve)),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
    ]);
    clearTimeout(timer);
  }
}

function listen(
  fetch: (request: Request, env: unknown) => Response | Promise<Response>,
  hostname: string,
  port: number,
): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, hostname, port }, () => resolve(server));
    server.once("error", reject);
  });
}

function failNoGraph(): never {
  throw new Error("the server serves no graph");
}
