/**
 * The bench's database: a scratch database created on the `DATABASE_URL`
 * server (and dropped afterwards), or an embedded Postgres in a temporary
 * directory when it is unset. Every query on its pool is counted.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { openDatabase, type Database } from "../src/stores/open-database.js";
import { createTestDatabase } from "../test/int/support/postgres.js";
import { QueryCounter, countPool } from "./pg-counter.js";

export interface ScratchDatabase {
  database: Database;
  counter: QueryCounter;
  /** "Postgres server (pool of 10)" or "embedded Postgres (one connection)". */
  label: string;
  /** The scratch database's URL (server mode), for servers the bench starts as processes. */
  url?: string;
  close(): Promise<void>;
}

/** `waitMs`: how long a query may queue for a connection (WARRANT_PG_POOL_WAIT_MS; a loaded machine needs longer). */
export async function openScratchDatabase(databaseUrl: string | undefined, waitMs?: number): Promise<ScratchDatabase> {
  const pool = waitMs === undefined ? {} : { pool: { waitMs } };
  const counter = new QueryCounter();
  const observePool = (pool: Parameters<typeof countPool>[0]) => countPool(pool, counter);
  if (databaseUrl !== undefined) {
    // createTestDatabase creates on DATABASE_URL's server, which is the one given here.
    const scratch = await createTestDatabase();
    try {
      const database = await openDatabase({ databaseUrl: scratch.url, dataDir: os.tmpdir(), observePool, ...pool });
      return {
        database,
        counter,
        url: scratch.url,
        label: "Postgres server, scratch database, pool of 10",
        close: async () => {
          try {
            await database.close();
          } finally {
            await scratch.drop();
          }
        },
      };
    } catch (error) {
      await scratch.drop();
      throw error;
    }
  }
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "warrant-bench-"));
  const database = await openDatabase({ dataDir, observePool, ...pool });
  return {
    database,
    counter,
    label: "embedded Postgres (PGlite, one connection)",
    close: async () => {
      try {
        await database.close();
      } finally {
        await fs.rm(dataDir, { recursive: true, force: true });
      }
    },
  };
}
