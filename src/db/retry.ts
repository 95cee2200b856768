/**
 * The retry policy for transient database errors (issue 29): which
 * failures are transient, which statements may be sent again after one,
 * and how long to keep trying (bounded, jittered exponential backoff), run
 * by the one retry loop (`withRetries`, src/retry.ts). The pool applies it
 * to every `pool.query` (pool.ts) and `transaction` to whole transactions;
 * no call site retries on its own.
 *
 * What may be repeated depends on where the failure fell:
 * - before the statement left (no connection could be opened, or the pool's
 *   client was already dead): anything;
 * - `40001` / `40P01` (serialization failure, deadlock), and `57P01` /
 *   `57P02` / `57P03` answered to the statement (the server terminated the
 *   backend and aborted its transaction): anything, since nothing committed;
 * - a connection lost while the statement was in flight (socket reset,
 *   `08000`/`08003`/`08006`, "Connection terminated", or no answer within
 *   the pool's client-side query timeout): the effect is
 *   unknown, so only statements that are read-only or marked idempotent
 *   (`IDEMPOTENT`, a leading SQL comment) are repeated. Any other write fails
 *   with `database_unavailable` and its caller's rules decide: a ledger
 *   intent row is found or not on the run's continuation, and a write whose
 *   row says it may have started is settled through its status tool.
 *
 * Every transient failure that is not retried, or outlasts the budget,
 * becomes `DatabaseUnavailableError` (`database_unavailable`, answered 503
 * with `Retry-After`), which carries no Postgres text: the driver's error is
 * only its `cause`.
 */
import type pg from "pg";
import { DatabaseUnavailableError, isDatabaseUnavailable } from "../errors.js";
import { done, failed, jitteredBackoff, withRetries, type RetryPolicy } from "../retry.js";

/** Leading comment that marks a write as safe to repeat after a lost connection. */
export const IDEMPOTENT = "/* idempotent */ ";

/** How long a database operation is retried: the numbers of its `RetryPolicy` (`databasePolicy`). */
export interface RetryBudget {
  /** Total time spent retrying one statement or transaction before giving up. */
  budgetMs: number;
  /** First backoff; doubled per attempt up to `maxDelayMs`, each drawn uniformly from [0, delay] (full jitter). */
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_BUDGET: RetryBudget = { budgetMs: 5_000, baseDelayMs: 50, maxDelayMs: 1_000 };

/** SQLSTATEs after which the server rolled back: nothing of the statement committed. */
const ROLLED_BACK = new Set(["40001", "40P01", "57P01", "57P02", "57P03"]);
/** SQLSTATEs of a lost connection: the statement's effect is unknown. */
const CONNECTION_LOST = new Set(["08000", "08003", "08006"]);
/** Node socket codes of a connection that failed or died. */
const SOCKET_CODES = new Set(["ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT", "ECONNABORTED", "EHOSTUNREACH"]);
/**
 * node-postgres's messages for a connection that died under it (they carry no
 * code), and its client-side `query_timeout` ("Query read timeout"): the
 * answer never came, so the statement's effect is unknown.
 */
const LOST_MESSAGES =
  /Connection terminated|connection timeout|Client has encountered a connection error|not queryable|Query read timeout/i;

export type Transience = "rolled_back" | "connection_lost" | undefined;

/** How a driver error is transient, if it is. */
export function transience(error: unknown): Transience {
  if (typeof error !== "object" || error === null) return undefined;
  if (isDatabaseUnavailable(error)) return "connection_lost";
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && ROLLED_BACK.has(code)) return "rolled_back";
  if (typeof code === "string" && (CONNECTION_LOST.has(code) || SOCKET_CODES.has(code))) return "connection_lost";
  if (error instanceof AggregateError && error.errors.some((inner) => transience(inner) !== undefined))
    return "connection_lost";
  const message = (error as { message?: unknown }).message;
  if (typeof message === "string" && LOST_MESSAGES.test(message)) return "connection_lost";
  return undefined;
}

/** Whether `text` may be sent again after a connection was lost under it. */
export function repeatable(text: string): boolean {
  if (text.startsWith(IDEMPOTENT)) return true;
  // Read-only: a SELECT (or a WITH of SELECTs) that writes nothing and takes no row lock (any of the four strengths).
  return (
    /^\s*(select|with)\b/i.test(text) &&
    !/\b(insert|update|delete|merge|for\s+(no\s+key\s+)?update|for\s+(key\s+)?share|nextval|setval)\b/i.test(text)
  );
}

/** The policy of one operation: transient failures it may repeat (`safe`), for as long as `budget` allows. */
export function databasePolicy(
  safe: (kind: Exclude<Transience, undefined>) => boolean,
  budget: RetryBudget = DEFAULT_RETRY_BUDGET,
): RetryPolicy<Exclude<Transience, undefined>> {
  return {
    maxAttempts: Number.POSITIVE_INFINITY,
    retryOn: safe,
    backoffMs: (attempt) => jitteredBackoff(attempt, { baseMs: budget.baseDelayMs, maxMs: budget.maxDelayMs }),
    budgetMs: budget.budgetMs,
  };
}

type Tried<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * Runs `attempt` until it succeeds, fails for good, or the budget is spent.
 * `safe(transience)` says whether this operation may be repeated after that
 * kind of failure. Transient failures end as `DatabaseUnavailableError`.
 */
export async function retryTransient<T>(
  attempt: () => Promise<T>,
  safe: (kind: Exclude<Transience, undefined>) => boolean,
  budget: RetryBudget = DEFAULT_RETRY_BUDGET,
): Promise<T> {
  const last = await withRetries(databasePolicy(safe, budget), async () => {
    try {
      return done<Tried<T>>({ ok: true, value: await attempt() });
    } catch (error) {
      const kind = transience(error);
      // Not the database's transient failure, or one already given up on: no policy repeats it.
      if (kind === undefined || isDatabaseUnavailable(error)) return done<Tried<T>>({ ok: false, error });
      return failed(kind, { ok: false, error } as Tried<T>);
    }
  });
  if (last.ok) return last.value;
  throw transience(last.error) === undefined ? last.error : unavailable(last.error);
}

function unavailable(error: unknown): DatabaseUnavailableError {
  return isDatabaseUnavailable(error) ? error : new DatabaseUnavailableError({ cause: error });
}

/**
 * Replaces `pool.query` (promise form) by one that applies the policy: each
 * attempt takes a fresh client, which is destroyed after any failure (as
 * pg-pool's own `query` does). The callback form is passed through untouched.
 */
export function retryQueries(pool: pg.Pool, budget: RetryBudget = DEFAULT_RETRY_BUDGET): void {
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  const retried = (...args: unknown[]): unknown => {
    if (args.some((arg) => typeof arg === "function")) return query(...args);
    const [config, values] = args as [string | pg.QueryConfig, unknown[] | undefined];
    const text = typeof config === "string" ? config : config.text;
    let sent = false;
    const once = async (): Promise<pg.QueryResult> => {
      sent = false;
      const client = await pool.connect();
      // As pg-pool's own `query`: a socket error while the statement runs also reaches the client's
      // emitter (the statement fails with it too), which must not crash the process.
      const swallow = () => undefined;
      client.on("error", swallow);
      try {
        sent = true;
        const result = await client.query(config as pg.QueryConfig, values);
        client.release();
        return result;
      } catch (error) {
        // A client that was dead before it was handed out never sent the statement.
        if (error instanceof Error && /not queryable/i.test(error.message)) sent = false;
        client.release(error instanceof Error ? error : new Error(String(error)));
        throw error;
      } finally {
        client.off("error", swallow);
      }
    };
    return retryTransient(once, (kind) => kind === "rolled_back" || !sent || repeatable(text), budget);
  };
  pool.query = retried as typeof pool.query;
}

/**
 * `work` in one transaction on one client, retried whole (on a fresh
 * connection) after a transient failure, so `work` must be repeatable as a
 * unit. A connection lost during COMMIT leaves the outcome unknown: it is
 * retried only when `work` is idempotent (`idempotent: true`, e.g. a lease
 * that its own run may take again). The client is destroyed, never reused,
 * after any failure.
 */
export function transaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  options: { idempotent?: boolean; budget?: RetryBudget } = {},
): Promise<T> {
  let committing = false;
  const once = async (): Promise<T> => {
    committing = false;
    const client = await pool.connect();
    const swallow = () => undefined;
    client.on("error", swallow);
    let broken: Error | undefined;
    try {
      await client.query("begin");
      const result = await work(client);
      committing = true;
      await client.query("commit");
      return result;
    } catch (error) {
      broken = error instanceof Error ? error : new Error(String(error));
      await client.query("rollback").catch(() => undefined);
      throw error;
    } finally {
      client.release(broken);
      client.off("error", swallow);
    }
  };
  return retryTransient(
    once,
    (kind) => kind === "rolled_back" || !committing || options.idempotent === true,
    options.budget ?? DEFAULT_RETRY_BUDGET,
  );
}

/** A Postgres error as node-postgres raises it: a SQLSTATE and a severity (its message is the server's text). */
const isPostgresError = (error: unknown): boolean =>
  typeof error === "object" &&
  error !== null &&
  typeof (error as { severity?: unknown }).severity === "string" &&
  /^[0-9A-Z]{5}$/.test(String((error as { code?: unknown }).code));

/**
 * How a run that failed on the database reports it (its `error` and stream
 * event): typed, with no Postgres message, code or SQL. Undefined when the
 * failure was not the database's.
 */
export function databaseFailure(error: unknown): { error: string; message: string } | undefined {
  if (isDatabaseUnavailable(error) || transience(error) !== undefined)
    return {
      error: "database_unavailable",
      message:
        "the database was unavailable; the run stopped at its last saved step: continue the thread (input null) once it is back",
    };
  if (isPostgresError(error)) return { error: "database_error", message: "a database statement failed" };
  return undefined;
}
