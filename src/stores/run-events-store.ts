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
  /**
   * Appends events in order; rows already there (a retried batch) are kept as they are. Appends of several
   * runs that arrive while a statement is in flight go together in the next one (group commit).
   */
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

export function runEventTables(schema: string): string[] {
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

/** An append waiting for the statement in flight to finish. */
interface PendingAppend {
  runId: string;
  events: readonly StoredEvent[];
  settle(error?: unknown): void;
}

/** Most rows one statement carries when appends of several runs go together. */
const MAX_GROUP_ROWS = 2_000;

/**
 * Group commit: while one insert is in flight, the appends that arrive (from
 * any run of this process) wait and then go together in the next statement,
 * one transaction and one notification per run instead of one each. Each
 * run's appends keep their order: a run's writer has one append in flight at
 * a time. A group that fails is retried run by run, so one run's bad rows
 * (its run row deleted meanwhile, say) fail only that run's append.
 */
function groupAppends(insert: (group: readonly PendingAppend[]) => Promise<void>) {
  const waiting: PendingAppend[] = [];
  let flowing = false;
  const take = (): PendingAppend[] => {
    let rows = 0;
    let count = 0;
    for (const append of waiting) {
      if (count > 0 && rows + append.events.length > MAX_GROUP_ROWS) break;
      rows += append.events.length;
      count += 1;
    }
    return waiting.splice(0, count);
  };
  const flow = async () => {
    flowing = true;
    while (waiting.length > 0) {
      const group = take();
      try {
        await insert(group);
        for (const append of group) append.settle();
      } catch (error) {
        if (group.length === 1) for (const append of group) append.settle(error);
        else
          for (const append of group)
            await insert([append]).then(
              () => append.settle(),
              (alone: unknown) => append.settle(alone),
            );
      }
    }
    flowing = false;
  };
  return (runId: string, events: readonly StoredEvent[]) =>
    new Promise<void>((resolve, reject) => {
      waiting.push({ runId, events, settle: (error) => (error === undefined ? resolve() : reject(error)) });
      if (!flowing) void flow();
    });
}

export function createRunEventStore(pool: pg.Pool, schema: string): RunEventStore {
  const s = quoteSchemaName(schema);
  const channel = runEventsChannel(schema);
  // One statement: the rows of every append in the group, and a notification per run delivered when they are committed.
  const append = groupAppends(async (group) => {
    const rows = group.flatMap(({ runId, events }) => events.map((row) => ({ runId, row })));
    await pool.query(
      `with inserted as (
         insert into ${s}.run_events (run_id, seq, event, chain, delta, data)
         select * from unnest($1::uuid[], $2::integer[], $3::text[], $4::text[], $5::boolean[], $6::text[])
         on conflict (run_id, seq) do nothing)
       select pg_notify($7, run_id) from unnest($8::text[]) as notified (run_id)`,
      [
        rows.map(({ runId }) => runId),
        rows.map(({ row }) => row.seq),
        rows.map(({ row }) => row.event),
        rows.map(({ row }) => row.chain),
        rows.map(({ row }) => row.delta),
        rows.map(({ row }) => row.data),
        channel,
        [...new Set(group.map(({ runId }) => runId))],
      ],
    );
  });
  return {
    async append(runId, events) {
      if (events.length === 0) return;
      await append(runId, events);
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
