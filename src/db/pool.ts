/**
 * The process's one bounded `pg` pool. Everything in-process (checkpointer,
 * stores, run admission) shares it, so the connections one instance opens
 * are at most `max`, whatever the load.
 *
 * When all `max` connections are checked out, callers queue; a caller still
 * queued after `waitMs` fails with `DatabaseBusyError` (`database_busy`,
 * answered 503 with `Retry-After`) instead of waiting for ever. pg-pool's
 * own `connectionTimeoutMillis` is that queue timeout (it also bounds a new
 * connection's handshake); its queue-timeout error is an untyped `Error`
 * (pg-pool 3.x: "timeout exceeded when trying to connect"), so `connect` is
 * wrapped to give it a code. `pool.query` goes through `this.connect`, so
 * the wrapper covers it too. `pool.query` also retries transient failures
 * (a lost connection, a failover, a deadlock) by the one policy in retry.ts.
 *
 * Every statement also has a client-side deadline (`queryTimeoutMs`, pg's
 * `query_timeout`): a link that silently stops delivering the server's
 * answers (packets dropped one way, a half-dead NAT entry) fails the
 * statement instead of hanging its request for ever. The timed-out client is
 * destroyed (retry.ts releases it with the error), and the failure is a lost
 * connection: `database_unavailable` once the retry policy gives up.
 */
import pg from "pg";
import { DatabaseBusyError } from "../errors.js";
import { DEFAULT_RETRY_BUDGET, retryQueries, type RetryBudget } from "../db/retry.js";

export interface PoolBounds {
  /** Connections this process opens at most. */
  max: number;
  /** How long a caller may queue for a connection. */
  waitMs: number;
  /** How long one statement may wait for its answer before its connection is given up (client-side). */
  queryTimeoutMs?: number;
  /**
   * Of `max`, the connections kept for background work (pollers, deliveries,
   * crons) in a pool of their own, so they never hold every connection
   * requests need; requests keep at least {@link REQUEST_CONNECTIONS_KEPT}.
   * 0 (or a `max` too small to split): background work shares the requests' pool.
   */
  backgroundMax?: number;
}

/** Requests keep at least this many connections whatever the background pool's size. */
export const REQUEST_CONNECTIONS_KEPT = 3;

/** How `max` splits between requests and background work ({@link PoolBounds.backgroundMax}). */
export function splitConnections(bounds: PoolBounds): { requests: number; background: number } {
  const background = Math.max(0, Math.min(bounds.backgroundMax ?? 0, bounds.max - REQUEST_CONNECTIONS_KEPT));
  return { requests: bounds.max - background, background };
}

/** Longer than any statement the server sends (the longest waits on an owner's admission lock, for milliseconds). */
export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;

export const DEFAULT_POOL_BOUNDS: PoolBounds = {
  max: 10,
  waitMs: 5_000,
  queryTimeoutMs: DEFAULT_QUERY_TIMEOUT_MS,
  backgroundMax: 2,
};

/** pg-pool's message for a caller that timed out in the queue (not a failed handshake). */
const QUEUE_TIMEOUT_MESSAGE = "timeout exceeded when trying to connect";

type ConnectCallback = (
  error: Error | undefined,
  client: pg.PoolClient | undefined,
  done: (release?: unknown) => void,
) => void;

/** A pool of at most `bounds.max` connections whose queue times out with `database_busy`. */
export function createBoundedPool(
  config: Omit<pg.PoolConfig, "max" | "connectionTimeoutMillis" | "query_timeout">,
  bounds: PoolBounds,
  retry: RetryBudget = DEFAULT_RETRY_BUDGET,
): pg.Pool {
  const pool = new pg.Pool({
    ...config,
    max: bounds.max,
    connectionTimeoutMillis: bounds.waitMs,
    query_timeout: bounds.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS,
  });
  const translate = (error: unknown): unknown =>
    error instanceof Error && error.message === QUEUE_TIMEOUT_MESSAGE
      ? Object.assign(new DatabaseBusyError(bounds.waitMs, bounds.max), { cause: error })
      : error;
  const connect = pool.connect.bind(pool) as (callback?: ConnectCallback) => Promise<pg.PoolClient> | undefined;
  const bounded = (callback?: ConnectCallback) => {
    if (callback)
      return connect((error, client, done) => callback(error ? (translate(error) as Error) : error, client, done));
    return (connect() as Promise<pg.PoolClient>).catch((error: unknown) => Promise.reject(translate(error)));
  };
  pool.connect = bounded as typeof pool.connect;
  retryQueries(pool, retry);
  return pool;
}
