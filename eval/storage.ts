/**
 * Where an evaluation keeps its state. With `DATABASE_URL` (a server the
 * caller may create databases on): a scratch database `warrant_eval_<hex>`
 * that the ledger, approvals, audit, checkpoints and the calendar server all
 * use, dropped at the end. Without it: the embedded Postgres in a temporary
 * directory (the calendar then keeps its events in a store file there, as it
 * does under `npm start` on the embedded database). Either way nothing of an
 * earlier run or of the developer's `.data/` is seen.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import type { HostValues } from "../src/mcp/host-values.js";
import { openDatabase, type Database } from "../src/stores/open-database.js";
import { fileCalendar, postgresCalendar, type CalendarReader } from "./calendar-reader.js";
import type { CalendarPlacement } from "./config.js";

export interface EvalStorage {
  /** "server (scratch database …)" or "embedded (…)", for the report. */
  label: string;
  database: Database;
  calendar: CalendarReader;
  /** What the calendar server is told about the database (the `${DATABASE_URL}` placeholder). */
  hostValues: HostValues;
  calendarPlacement: CalendarPlacement;
  close(): Promise<void>;
}

async function onAdmin(adminUrl: string, statements: Array<[string, unknown[]]>): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    for (const [text, values] of statements) await client.query(text, values);
  } finally {
    await client.end();
  }
}

async function serverStorage(adminUrl: string): Promise<EvalStorage> {
  const name = `warrant_eval_${randomBytes(6).toString("hex")}`;
  // The name is hex digits after a fixed prefix, so quoting it is enough.
  await onAdmin(adminUrl, [[`create database "${name}"`, []]]);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const drop = () =>
    onAdmin(adminUrl, [
      ["select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()", [name]],
      [`drop database if exists "${name}"`, []],
    ]);
  try {
    const database = await openDatabase({ databaseUrl: url.toString(), dataDir: os.tmpdir() });
    const calendar = await postgresCalendar(url.toString());
    return {
      label: `Postgres server, scratch database ${name} (dropped afterwards)`,
      database,
      calendar,
      hostValues: { DATABASE_URL: url.toString() },
      calendarPlacement: {},
      async close() {
        await Promise.allSettled([calendar.close(), database.close()]);
        await drop();
      },
    };
  } catch (error) {
    await drop();
    throw error;
  }
}

async function embeddedStorage(): Promise<EvalStorage> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "warrant-eval-"));
  const calendarPath = path.join(dir, "calendar.json");
  try {
    const database = await openDatabase({ dataDir: dir });
    const calendar = fileCalendar(calendarPath);
    return {
      label: "embedded Postgres (PGlite) in a temporary directory; calendar events in its store file there",
      database,
      calendar,
      hostValues: {},
      calendarPlacement: { dataPath: calendarPath },
      async close() {
        await Promise.allSettled([calendar.close(), database.close()]);
        await fs.rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await fs.rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Opens the storage for one evaluation (see the header). */
export function openStorage(databaseUrl: string | undefined): Promise<EvalStorage> {
  return databaseUrl ? serverStorage(databaseUrl) : embeddedStorage();
}
