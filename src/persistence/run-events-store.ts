/**
 * A run's stream events in Postgres, so that any server instance can serve
 * `join`, `stream` and `Last-Event-ID` reconnects of a run that executes (or
 * executed) on another one. One row per SSE event, numbered by the process
 * that executes the run (it holds the thread's lease, so it is the only
 * writer): the row's `seq` is the SSE `id` on every instance.
 *
 * `data` is the event's wire JSON as text (what the SSE `data:` line
 * carries), or, when `delta` is set, a delta against the previous event of
 * the same `chain` (see `src/server/event-delta.ts`): a `values` snapshot
 * stores only what changed since the run's previous one, a `messages/partial`
 * only the characters added since that message's previous partial. Text,
 * not jsonb: jsonb refuses `\u0000`, which a tool's output may quote.
 *
 * The row with event `$end` marks the end of the run's events; it is never
 * sent to a client. A run whose process died has no such row (its run row
 * says how it ended instead).
 *
 * Events are kept while the run lives and for a retention window after it
 * ended (`purge`); they go with their run (and thread) when those are deleted.
 */
import type pg from "pg";
import { quoteSchemaName } from "../sql-names.js";

/** The event that closes a run's stored events (internal, never sent). */
export const END_EVENT = "$end";

export interface StoredEvent {
  seq: number;
  event: string;
  /** The delta chain this event belongs to (`values`, `partial:<message id>`), when it has one. */
  chain: string | null;
  /** `data` is a delta against the chain's previous event. */
  delta: boolean;
  data: string;
}

export interface RunEventStore {
  /** Appends events in order (one statement); rows already there (a retried batch) are kept as they are. */
  append(runId: string, events: readonly StoredEvent[]): Promise<void>;
  /**
   * The run's events after `afterSeq` (at most `limit`, in order), preceded by
   * the chain events up to `afterSeq` that deltas after it are built on
   * (`withBases`, for a reader that starts mid-run).
   */
  read(runId: string, afterSeq: number, options: { limit: number; withBases: boolean }): Promise<StoredEvent[]>;
  /** Deletes the events of runs that ended more than `retainMs` ago; returns how many rows went. */
  purge(retainMs: number): Promise<number>;
}

export function runEventMigrations(schema: string): string[] {
  const s = quoteSchemaName(schema);
  return [
    `create table if not exists ${s}.run_events (
      run_id uuid not null references ${s}.runs (run_id) on delete cascade,
      seq integer not null,
      event text not null,
      chain text,
      delta boolean not null default false,
      data text not null,
      created_at timestamptz not null default now(),
      primary key (run_id, seq)
    )`,
  ];
}

const COLUMNS = "seq, event, chain, delta, data";

/** The channel a schema's inserts are announced on (payload: the run id), for `run-events-listener.ts`. */
export function runEventsChannel(schema: string): string {
  quoteSchemaName(schema);
  // Channel names are identifiers: at most 63 bytes (a clash across long schema names only wakes a reader for nothing).
  return `run_events_${schema}`.slice(0, 63);
}

export function createRunEventStore(pool: pg.Pool, schema: string): RunEventStore {
  const s = quoteSchemaName(schema);
  const channel = runEventsChannel(schema);
  return {
    async append(runId, events) {
      if (events.length === 0) return;
      // One statement: the rows, and a notification delivered when they are committed.
      await pool.query(
        `with inserted as (
           insert into ${s}.run_events (run_id, seq, event, chain, delta, data)
           select $1, * from unnest($2::integer[], $3::text[], $4::text[], $5::boolean[], $6::text[])
           on conflict (run_id, seq) do nothing)
         select pg_notify($7, $1::text)`,
        [
          runId,
          events.map((row) => row.seq),
          events.map((row) => row.event),
          events.map((row) => row.chain),
          events.map((row) => row.delta),
          events.map((row) => row.data),
          channel,
        ],
      );
    },
    async read(runId, afterSeq, options) {
      const bases = options.withBases
        ? ((
            await pool.query(
              `select ${COLUMNS} from ${s}.run_events where run_id = $1 and seq <= $2 and chain is not null order by seq`,
              [runId, afterSeq],
            )
          ).rows as StoredEvent[])
        : [];
      const after = (
        await pool.query(
          `select ${COLUMNS} from ${s}.run_events where run_id = $1 and seq > $2 order by seq limit $3`,
          [runId, afterSeq, options.limit],
        )
      ).rows as StoredEvent[];
      return [...bases, ...after];
    },
    async purge(retainMs) {
      const result = await pool.query(
        `delete from ${s}.run_events e using ${s}.runs r
          where e.run_id = r.run_id and r.status not in ('pending', 'running')
            and r.updated_at < now() - make_interval(secs => $1::double precision / 1000)`,
        [retainMs],
      );
      return result.rowCount ?? 0;
    },
  };
}
