/**
 * GET /metrics: Prometheus text (version 0.0.4) of every worker's series,
 * summed, and each worker's with a `worker="N"` label (src/metrics.ts,
 * src/cluster/metrics.ts), plus the database-wide ones read here (reviews
 * pending). It takes an operator token, as `/operator/*` does (a user's API
 * token is refused), or the scraper's long-lived secret when one is set
 * (`WARRANT_METRICS_TOKEN`, compared in constant time; it opens this route
 * alone): 401 `token_invalid` otherwise, whatever the header holds.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Hono } from "hono";
import { collectMetrics } from "../../cluster/metrics.js";
import { renderMetrics, type MetricsSnapshot } from "../../metrics.js";
import type { Database } from "../../stores/open-database.js";
import type { Env } from "../context.js";

export interface MetricsOptions {
  /** Whether the Authorization header carries an operator's token (routes/operator.ts). */
  isOperator(header: string | undefined): Promise<boolean>;
  /** `WARRANT_METRICS_TOKEN`: also admitted as `Authorization: Bearer <it>`. */
  scraperToken?: string;
  database: Pick<Database, "pool" | "schema">;
}

/** Threads interrupted with a review pending, the whole database; left out when the database cannot answer. */
async function databaseSeries(database: MetricsOptions["database"]): Promise<MetricsSnapshot> {
  try {
    const result = await database.pool.query<{ count: string }>(
      `select count(*)::text as count from ${database.schema}.threads where status = 'interrupted'`,
    );
    return { warrant_reviews_pending: Number(result.rows[0]?.count ?? 0) };
  } catch {
    return {};
  }
}

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();

/** Whether the header is `Bearer <the scraper's secret>`: digests compared in constant time, so no length or prefix leaks. */
function isScraper(expected: Buffer | undefined, header: string | undefined): boolean {
  if (expected === undefined || header === undefined || header.length > 1_024) return false;
  const match = /^Bearer (\S+)$/i.exec(header.trim());
  return match?.[1] !== undefined && timingSafeEqual(digest(match[1]), expected);
}

export function registerMetricsRoute(app: Hono<Env>, options: MetricsOptions): void {
  const scraper = options.scraperToken === undefined ? undefined : digest(options.scraperToken);
  app.get("/metrics", async (c) => {
    const header = c.req.header("authorization");
    if (!isScraper(scraper, header) && !(await options.isOperator(header))) {
      c.header("WWW-Authenticate", `Bearer error="invalid_token"`);
      return c.json(
        {
          error: "token_invalid",
          message: "/metrics needs an operator token (minted by the CLI) or the scraper token (WARRANT_METRICS_TOKEN)",
        },
        401,
      );
    }
    const [collected, shared] = await Promise.all([collectMetrics(), databaseSeries(options.database)]);
    const body = renderMetrics(collected.workers, { ...collected.primary, ...shared });
    return c.body(body, 200, { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" });
  });
}
