/**
 * Wakes this instance's readers of runs executing elsewhere when their
 * events are stored: one `LISTEN` connection per instance (beside the pool,
 * held for the process's life) on the channel every append notifies
 * (`run-events-store.ts`). Measured (test/int/multi-instance-latency.test.ts,
 * on the shared 2-core test machine): a reader polling the table every
 * 100 ms saw events p50 58 ms after they were emitted, one woken by a
 * notification p50 2.6 ms (75 ms and 18 ms under heavy load); and an idle
 * reader costs no query.
 *
 * Notifications are a wake-up, never the data: a reader still reads the
 * table, and still polls (slowly) in case one is lost, say while this
 * connection is being re-established.
 */
import pg from "pg";
import { runEventsChannel } from "./run-events-store.js";

export interface RunEventListener {
  /** Resolves at the next notification for `runId` (or when `signal` aborts). */
  next(runId: string, signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/** Pause before reconnecting a lost listening connection. */
const RECONNECT_MS = 1_000;

/** Connects with the pool's connection settings and listens; throws when Postgres cannot be reached. */
export async function listenForRunEvents(
  pool: pg.Pool,
  schema: string,
  log: (line: string) => void,
): Promise<RunEventListener> {
  const channel = runEventsChannel(schema);
  const waiting = new Map<string, Set<() => void>>();
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const wakeAll = () => {
    for (const resolvers of waiting.values()) for (const resolve of resolvers) resolve();
    waiting.clear();
  };
  const connect = async () => {
    const next = new pg.Client(pool.options);
    next.on("notification", (message) => {
      const resolvers = waiting.get(message.payload ?? "");
      waiting.delete(message.payload ?? "");
      for (const resolve of resolvers ?? []) resolve();
    });
    next.on("error", (error) => lost(next, error));
    next.on("end", () => lost(next, undefined));
    await next.connect();
    await next.query(`listen "${channel}"`);
    client = next;
  };
  const lost = (which: pg.Client, error: Error | undefined) => {
    if (client !== which || closed) return;
    client = undefined;
    log(`run event notifications lost${error ? `: ${error.message}` : ""}; reconnecting`);
    // Readers read the table once more instead of waiting for a notification that may never come.
    wakeAll();
    which.end().catch(() => undefined);
    const again = () => {
      retry = undefined;
      if (closed) return;
      connect().catch(() => {
        retry = setTimeout(again, RECONNECT_MS);
        retry.unref();
      });
    };
    retry = setTimeout(again, RECONNECT_MS);
    retry.unref();
  };

  await connect();
  return {
    next(runId, signal) {
      return new Promise((resolve) => {
        if (signal.aborted) return resolve();
        const resolvers = waiting.get(runId) ?? new Set<() => void>();
        const done = () => {
          resolvers.delete(done);
          if (resolvers.size === 0 && waiting.get(runId) === resolvers) waiting.delete(runId);
          resolve();
        };
        resolvers.add(done);
        waiting.set(runId, resolvers);
        signal.addEventListener("abort", done, { once: true });
      });
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      wakeAll();
      await client?.end().catch(() => undefined);
      client = undefined;
    },
  };
}
