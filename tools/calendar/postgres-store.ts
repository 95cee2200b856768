/**
 * The calendar's events in Postgres, in a schema of its own (`calendar` by
 * default). Exactly-once across processes rests on one constraint,
 * `unique (user_id, idempotency_key)`: a create is one
 * `insert … on conflict do nothing`; when it inserts nothing the key is
 * taken, and the existing row decides (same arguments → replayed, else
 * `invalid_arguments`). Postgres makes a concurrent insert of the same key
 * wait for the first one to commit, so two processes racing on one key end
 * with one row and the loser sees it.
 *
 * Start and end are kept as the text the caller sent (the event is returned
 * as written) and as instants (for ordering and window filters).
 */
import pg from "pg";
import { IDEMPOTENT, retryQueries, type RetryBudget } from "../../src/db/retry.js";
import {
  checkEventWindow,
  decideExisting,
  listWindow,
  newEvent,
  type CalendarEvent,
  type CreateStudyEventInput,
  type GetWriteStatusInput,
  type ListEventsInput,
} from "./calendar.js";
import type { CalendarStoreBackend, CreateOutcome, ListOutcome } from "./store.js";

/** Schema names we accept: a plain lowercase identifier, so it can be quoted safely. */
const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/** Fixed key for the migration lock: "WCAL" read as an integer; text, so it is never rounded. */
const MIGRATION_LOCK_KEY = "1464025420";

const CONNECT_TIMEOUT_MS = 5_000;

/**
 * How long one store statement rides out a lost connection, a failover or an
 * outage before the tool answers with a failure (the host's retry policy,
 * src/db/retry.ts). Shorter than the tools' 5 s timeout, so the host
 * hears `outcome_unknown` (and reconciles) rather than a timeout.
 */
export const CALENDAR_RETRY: RetryBudget = { budgetMs: 3_000, baseDelayMs: 50, maxDelayMs: 500 };

export function calendarMigrations(schema: string): string[] {
  const s = quoteSchema(schema);
  return [
    `create schema if not exists ${s}`,
    `create table if not exists ${s}.events (
      event_id text primary key,
      user_id text not null,
      idempotency_key text not null,
      title text not null,
      description text,
      start_text text not null,
      end_text text not null,
      start_at timestamptz not null,
      end_at timestamptz not null,
      timezone text not null,
      calendar text not null,
      created_at timestamptz not null,
      constraint events_one_per_key unique (user_id, idempotency_key)
    )`,
    `create index if not exists events_by_user on ${s}.events (user_id, start_at)`,
  ];
}

function quoteSchema(schema: string): string {
  if (!SCHEMA_PATTERN.test(schema))
    throw new Error(`invalid calendar schema name ${JSON.stringify(schema)} (expected a lowercase identifier)`);
  return `"${schema}"`;
}

interface EventRow {
  event_id: string;
  user_id: string;
  idempotency_key: string;
  title: string;
  description: string | null;
  start_text: string;
  end_text: string;
  timezone: string;
  calendar: string;
  created_at: Date;
}

const COLUMNS =
  "event_id, user_id, idempotency_key, title, description, start_text, end_text, timezone, calendar, created_at";
/** The columns an insert writes, in the order of its values: `COLUMNS` with the instants `start_at` and `end_at`. */
const INSERT_COLUMNS =
  "event_id, user_id, idempotency_key, title, description, start_text, end_text, start_at, end_at, timezone, calendar, created_at";

function toEvent(row: EventRow): CalendarEvent {
  return {
    event_id: row.event_id,
    user_id: row.user_id,
    title: row.title,
    ...(row.description !== null ? { description: row.description } : {}),
    start: row.start_text,
    end: row.end_text,
    timezone: row.timezone,
    calendar: row.calendar,
    idempotency_key: row.idempotency_key,
    created_at: row.created_at.toISOString(),
  };
}

/** The database URL without its password, for log lines. */
function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || "5432"}${parsed.pathname}`;
  } catch {
    return "(unparseable URL)";
  }
}

/**
 * Connects, creates the schema and table if needed (under an advisory lock,
 * since concurrent `create table if not exists` can collide), and returns the
 * store. Throws when the database cannot be reached.
 */
export async function openPostgresStore(databaseUrl: string, schema = "calendar"): Promise<CalendarStoreBackend> {
  const s = quoteSchema(schema);
  const pool = new pg.Pool({ connectionString: databaseUrl, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, max: 4 });
  // An idle client losing its connection must not crash the server; the next query reconnects.
  pool.on("error", () => undefined);
  // Every statement is retried on a fresh connection after a transient failure: reads, and the one write, whose
  // `on conflict do nothing` on the idempotency key makes it safe to repeat even when the first one committed.
  retryQueries(pool, CALENDAR_RETRY);
  try {
    const client = await pool.connect();
    try {
      await client.query("begin");
      await client.query("select pg_advisory_xact_lock($1::bigint)", [MIGRATION_LOCK_KEY]);
      for (const statement of calendarMigrations(schema)) await client.query(statement);
      await client.query("commit");
    } catch (error) {
      await client.query("rollback").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }

  const byKey = async (userId: string, key: string): Promise<CalendarEvent | undefined> => {
    const result = await pool.query<EventRow>(
      `select ${COLUMNS} from ${s}.events where user_id = $1 and idempotency_key = $2`,
      [userId, key],
    );
    const row = result.rows[0];
    return row === undefined ? undefined : toEvent(row);
  };

  return {
    label: `postgres ${describeUrl(databaseUrl)} ${schema}.events`,
    failureMayHaveApplied: true,
    async count() {
      const result = await pool.query<{ n: string }>(`select count(*)::text as n from ${s}.events`);
      return Number(result.rows[0]?.n ?? 0);
    },
    async list(input: ListEventsInput): Promise<ListOutcome> {
      const checked = listWindow(input);
      if (!checked.ok) return checked;
      const { from, to } = checked.window;
      const result = await pool.query<EventRow>(
        `select ${COLUMNS} from ${s}.events
          where user_id = $1 and ($2::text is null or calendar = $2)
            and ($3::timestamptz is null or end_at > $3) and ($4::timestamptz is null or start_at < $4)
          order by start_at, end_at, event_id collate "C"`,
        [
          input.user_id,
          input.calendar ?? null,
          from === undefined ? null : new Date(from),
          to === undefined ? null : new Date(to),
        ],
      );
      return { ok: true, result: { events: result.rows.map(toEvent) } };
    },
    async create(input: CreateStudyEventInput): Promise<CreateOutcome> {
      const windowError = checkEventWindow(input.start, input.end);
      if (windowError !== undefined) return { kind: "rejected", error: windowError };
      const event = newEvent(input);
      const inserted = await pool.query<EventRow>(
        `${IDEMPOTENT}insert into ${s}.events (${INSERT_COLUMNS})
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         on conflict (user_id, idempotency_key) do nothing
         returning ${COLUMNS}`,
        [
          event.event_id,
          event.user_id,
          event.idempotency_key,
          event.title,
          event.description ?? null,
          event.start,
          event.end,
          new Date(event.start),
          new Date(event.end),
          event.timezone,
          event.calendar,
          new Date(event.created_at),
        ],
      );
      const row = inserted.rows[0];
      if (row !== undefined) return { kind: "created", result: { event: toEvent(row), replayed: false } };
      // The key is taken (by an earlier call, or by a concurrent one that has committed by now).
      const existing = await byKey(input.user_id, input.idempotency_key);
      if (existing === undefined) throw new Error("the idempotency key conflicted but its event is gone");
      // Our own insert, committed before a lost connection hid its answer (the retry found it): created, not replayed.
      if (existing.event_id === event.event_id)
        return { kind: "created", result: { event: existing, replayed: false } };
      return decideExisting(existing, input);
    },
    async status(input: GetWriteStatusInput) {
      const event = await byKey(input.user_id, input.idempotency_key);
      return event === undefined ? { applied: false } : { applied: true, event };
    },
    close: () => pool.end(),
  };
}
