/**
 * Reads the calendar's events from its own store (the `calendar.events`
 * table in Postgres, or its store file on the embedded database), so the
 * eval counts writes that happened, not what the run's state says.
 */
import { fileStore, type CalendarStoreBackend } from "../tools/calendar/store.js";
import { openPostgresStore } from "../tools/calendar/postgres-store.js";

export interface StoredEvent {
  event_id: string;
  title: string;
  minutes: number;
}

export interface CalendarReader {
  /** Ids of a user's events now (taken before a run, to tell its new events apart). */
  eventIds(userId: string): Promise<Set<string>>;
  events(userId: string): Promise<StoredEvent[]>;
  close(): Promise<void>;
}

function readerOf(store: CalendarStoreBackend): CalendarReader {
  const events = async (userId: string): Promise<StoredEvent[]> => {
    const listed = await store.list({ user_id: userId });
    if (!listed.ok) throw new Error(`calendar store: ${listed.error.message}`);
    return listed.result.events.map((event) => ({
      event_id: event.event_id,
      title: event.title,
      minutes: Math.round((Date.parse(event.end) - Date.parse(event.start)) / 60_000),
    }));
  };
  return {
    events,
    eventIds: async (userId) => new Set((await events(userId)).map((event) => event.event_id)),
    close: () => store.close(),
  };
}

/** The calendar in Postgres (the same table the calendar server writes). */
export async function postgresCalendar(databaseUrl: string): Promise<CalendarReader> {
  return readerOf(await openPostgresStore(databaseUrl));
}

/** The calendar's store file. */
export function fileCalendar(filePath: string): CalendarReader {
  return readerOf(fileStore(filePath));
}
