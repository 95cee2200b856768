/**
 * Operator routes: what `npm run trace`, `audit` and `tools` need from a
 * running server, so they work while it holds the (embedded) database. They
 * take an operator token (src/auth/operator-token.ts), never a user's API
 * token, and answer with data; the CLI renders it as it renders its own reads.
 *
 *   GET  /operator/runs/{run_id}/trace      → the run's trace (src/trace/run-trace.ts), 404 when unknown
 *   GET  /operator/audit/verify[?run_id=]   → the audit chains' verification report
 *   GET  /operator/tools                    → { tools: [...] } every contracted tool, server, risk, pin state
 *   GET  /operator/tools/{name}             → { pin, relisted } after listing the tool's server again now
 *                                             (`?relist=false`: the stored pin only)
 *   POST /operator/tools/{name}/approve     body { by, served_hash } → { pin }; 409 `conflict` when it changed again
 *   POST /operator/replay-records           body { run_ids } or { last } → what `npm run policy -- replay` re-decides
 */
import type { Context, Hono } from "hono";
import { z } from "zod";
import { verifyOperatorToken } from "../../auth/operator-token.js";
import type { RequestGate } from "../../auth/request-gate.js";
import type { TokenVerifier } from "../../auth/token-verifier.js";
import type { ToolHost } from "../../mcp/tool-host.js";
import { toolStatus } from "../../mcp/tool-report.js";
import type { Database } from "../../stores/open-database.js";
import type { WarrantConfig } from "../../policy/config.js";
import { readReplayRecords } from "../../trace/read-replay.js";
import { readRunTrace, type HistorySource } from "../../trace/read-trace.js";
import type { Env } from "../context.js";
import { registerMetricsRoute } from "./metrics.js";

export interface OperatorOptions {
  secret: Uint8Array;
  /** Also admits an identity provider's token whose mapped groups include an operator one (absent: operator tokens only). */
  verifier?: TokenVerifier;
  /** Revocations (and the directory) an IdP token must also pass; absent: the token alone. */
  gate?: RequestGate;
  database: Database;
  graphFor(graphId: string | null): Promise<HistorySource>;
  tools(): Promise<ToolHost>;
  config(): Promise<WarrantConfig>;
  /** `WARRANT_METRICS_TOKEN`: a scraper's long-lived secret, accepted by `GET /metrics` alone. */
  metricsToken?: string | undefined;
}

const RUN_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
export const ApproveBody = z.object({
  by: z.string().regex(/^[A-Za-z0-9_.@-]{1,64}$/),
  served_hash: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
});

export const ReplayBody = z.union([
  z.object({ run_ids: z.array(z.string().regex(RUN_ID)).min(1).max(100) }).strict(),
  z.object({ last: z.number().int().min(1).max(1_000) }).strict(),
]);

const refuse = (c: Context<Env>, status: 400 | 401 | 404 | 409 | 422, error: string, message: string) =>
  c.json({ error, message }, status);

/** An operator token, or an IdP token of an operator group (never a Warrant API token: those name a user). */
async function isOperator(options: OperatorOptions, header: string | undefined): Promise<boolean> {
  if (await verifyOperatorToken(options.secret, header)) return true;
  if (options.verifier?.oidc !== true) return false;
  const verified = await options.verifier.authenticate({ authorization: header, apiKey: undefined });
  if (!verified.ok || verified.source === "warrant" || !verified.operator) return false;
  // A revoked IdP token opens no operator route either (a list that cannot be read refuses too).
  if (options.gate === undefined) return true;
  return (await options.gate.admit(verified).catch(() => ({ ok: false }))).ok;
}

/** Registers the routes; call before the API's token middleware (they have their own). */
export function registerOperatorRoutes(app: Hono<Env>, options: OperatorOptions): void {
  app.use("/operator/*", async (c, next) => {
    if (!(await isOperator(options, c.req.header("authorization"))))
      return refuse(c, 401, "token_invalid", "operator routes need an operator token (minted by the CLI)");
    await next();
  });
  registerMetricsRoute(app, {
    isOperator: (header) => isOperator(options, header),
    ...(options.metricsToken ? { scraperToken: options.metricsToken } : {}),
    database: options.database,
  });

  app.get("/operator/runs/:run_id/trace", async (c) => {
    const runId = c.req.param("run_id");
    if (!RUN_ID.test(runId)) return refuse(c, 422, "invalid_request", "run_id: letters, digits, `_.:-`, at most 128");
    const trace = await readRunTrace(options.database, options.graphFor, runId);
    if (!trace) return refuse(c, 404, "not_found", `no run ${runId} in this database`);
    return c.json(trace);
  });

  app.get("/operator/audit/verify", async (c) => {
    const runId = c.req.query("run_id");
    if (runId !== undefined && !RUN_ID.test(runId))
      return refuse(c, 422, "invalid_request", "run_id: letters, digits, `_.:-`, at most 128");
    return c.json(await options.database.verifyAudit(runId));
  });

  app.get("/operator/tools", async (c) =>
    c.json({ tools: await toolStatus(await options.config(), options.database.pins, await options.tools()) }),
  );

  app.get("/operator/tools/:name", async (c) => {
    const name = c.req.param("name");
    if (!TOOL_NAME.test(name)) return refuse(c, 422, "invalid_request", "name: 1..64 of A-Z a-z 0-9 _ -");
    const config = await options.config();
    const server = Object.hasOwn(config.tools, name) ? config.tools[name]?.server : undefined;
    let relisted: true | string = "the tool has no contract in the config";
    if (c.req.query("relist") === "false") relisted = "not asked";
    else if (server !== undefined) {
      const host = await options.tools();
      // What the server serves now, checked against the pin (recorded for review when it differs).
      relisted = host.relist
        ? await host.relist(server).then(
            () => true as const,
            (error: unknown) => (error instanceof Error ? error.message : String(error)),
          )
        : "this host cannot list a server again";
    }
    return c.json({ pin: (await options.database.pins.get(name)) ?? null, relisted });
  });

  app.post("/operator/tools/:name/approve", async (c) => {
    const name = c.req.param("name");
    if (!TOOL_NAME.test(name)) return refuse(c, 422, "invalid_request", "name: 1..64 of A-Z a-z 0-9 _ -");
    const parsed = ApproveBody.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success) return refuse(c, 422, "invalid_request", "body: { by, served_hash? }");
    const approved = await options.database.pins.approve(name, parsed.data.by, parsed.data.served_hash);
    if (!approved) return refuse(c, 409, "conflict", `the definition of ${name} changed again; run diff first`);
    return c.json({ pin: approved });
  });

  app.post("/operator/replay-records", async (c) => {
    const parsed = ReplayBody.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success)
      return refuse(c, 422, "invalid_request", "body: { run_ids: [1..100 run ids] } or { last: 1..1000 }");
    const which = "last" in parsed.data ? { last: parsed.data.last } : { runIds: parsed.data.run_ids };
    return c.json(await readReplayRecords(options.database, options.graphFor, which));
  });
}
