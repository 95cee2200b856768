/**
 * The checkpointer's own migrations (src/checkpoint/checkpoint-tables.ts)
 * make exactly PostgresSaver 1.0.5's tables and record the same steps: a
 * database that the stock saver set up (as every Warrant before this one
 * did) opens with nothing to migrate, and a database set up by Warrant is
 * one the stock saver has nothing to add to.
 */
import os from "node:os";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { describe, expect, test } from "vitest";
import { openDatabase } from "../../src/stores/open-database.js";
import { createTestDatabase } from "./support/postgres.js";

const SLOW = { timeout: 120_000 };

/** The checkpoint tables' columns and keys, and the migration steps recorded. */
async function layout(pool: pg.Pool) {
  const columns = await pool.query(
    `select table_name, column_name, data_type, is_nullable, column_default from information_schema.columns
      where table_schema = 'public' and table_name like 'checkpoint%' order by table_name, ordinal_position`,
  );
  const keys = await pool.query(
    `select tc.table_name, kcu.column_name, kcu.ordinal_position from information_schema.table_constraints tc
       join information_schema.key_column_usage kcu on kcu.constraint_name = tc.constraint_name
      where tc.table_schema = 'public' and tc.constraint_type = 'PRIMARY KEY' and tc.table_name like 'checkpoint%'
      order by tc.table_name, kcu.ordinal_position`,
  );
  const steps = await pool.query<{ v: number }>("select v from public.checkpoint_migrations order by v");
  return { columns: columns.rows, keys: keys.rows, steps: steps.rows.map((row) => row.v) };
}

async function withPool<T>(url: string, work: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}

describe("the checkpoint tables", () => {
  test("a database the stock PostgresSaver set up opens with nothing to migrate, and the reverse", SLOW, async () => {
    const [stock, ours] = [await createTestDatabase(), await createTestDatabase()];
    try {
      const stockLayout = await withPool(stock.url, async (pool) => {
        await new PostgresSaver(pool).setup();
        return layout(pool);
      });
      expect(stockLayout.steps).toEqual([0, 1, 2, 3, 4]);

      // Warrant opening the stock database applies nothing and changes nothing.
      const opened = await openDatabase({ databaseUrl: stock.url, dataDir: os.tmpdir() });
      await opened.close();
      expect(await withPool(stock.url, layout)).toEqual(stockLayout);

      // A database Warrant set up has the same layout, and the stock saver has nothing to add to it.
      const fresh = await openDatabase({ databaseUrl: ours.url, dataDir: os.tmpdir() });
      await fresh.close();
      expect(await withPool(ours.url, layout)).toEqual(stockLayout);
      await withPool(ours.url, (pool) => new PostgresSaver(pool).setup());
      expect(await withPool(ours.url, layout)).toEqual(stockLayout);
    } finally {
      await stock.drop();
      await ours.drop();
    }
  });
});
