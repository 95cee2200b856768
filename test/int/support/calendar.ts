/** Reading the calendar server's events in tests: its store file, or its table in Postgres. */
import { readFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import type { Sandbox } from "../../support/sandbox.js";

/** Events in a calendar store file; an absent file holds none. */
export async function storedCalendarEvents(dataPath: string): Promise<Array<Record<string, unknown>>> {
  try {
    return (JSON.parse(await readFile(dataPath, "utf8")) as { events: Array<Record<string, unknown>> }).events;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

/** Rows of `calendar.events` in the database at `databaseUrl`; none when the calendar never started there. */
export async function databaseCalendarEvents(
  databaseUrl: string,
  schema = "calendar",
): Promise<Array<Record<string, unknown>>> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const exists = await client.query("select to_regclass($1) is not null as present", [`${schema}.events`]);
    if (exists.rows[0]?.present !== true) return [];
    return (await client.query(`select * from "${schema}".events order by start_at, event_id`)).rows as Array<
      Record<string, unknown>
    >;
  } finally {
    await client.end();
  }
}

/** The path of a calendar data file in a fresh directory of `sandbox` (removed at its teardown); the file is not made. */
export async function calendarDataPath(sandbox: Sandbox, prefix: string): Promise<string> {
  return path.join(await sandbox.tempDir(prefix), "calendar.json");
}
