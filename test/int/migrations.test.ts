/**
 * The versioned migration sequence (src/db/migrate.ts, src/stores/migrations.ts),
 * on the server Postgres and on embedded PGlite:
 * - a database created before versions (the `if not exists` lists every
 *   start ran: fixtures/schema-before-versions.sql, frozen from main) opens,
 *   keeps its rows, and ends with the same tables, columns and indexes as a
 *   new database;
 * - each migration is applied once, and concurrent openers apply it once;
 * - a database newer than the code is refused with a typed error.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { describe, expect, test } from "vitest";
import { VERSION_TABLE } from "../../src/db/migrate.js";
import { MIGRATIONS } from "../../src/stores/migrations.js";
import { type Database, openDatabase } from "../../src/stores/open-database.js";
import { createEmbeddedDir, createTestDatabase } from "./support/postgres.js";

const SLOW = { timeout: 400_000 };
const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "schema-before-versions.sql");

async function beforeVersions(): Promise<string[]> {
  const text = await fs.readFile(FIXTURE, "utf8");
  return text
    .split(/;\n/)
    .map((statement) => statement.replace(/^--.*$/gm, "").trim())
    .filter((statement) => statement.length > 0);
}

type Query = (sql: string, params?: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;

/** Tables, columns (type, null, default) and indexes of Warrant's schema and the checkpoint tables, as text. */
async function layout(query: Query): Promise<string[]> {
  const columns = await query(
    `select table_schema || '.' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable
              || ' ' || coalesce(column_default, '') as line
       from information_schema.columns
      where (table_schema = 'warrant' and table_name <> $1) or (table_schema = 'public' and table_name like 'checkpoint%')
      order by 1`,
    [VERSION_TABLE],
  );
  const indexes = await query(
    `select schemaname || ' ' || indexdef as line from pg_indexes
      where (schemaname = 'warrant' and tablename <> $1) or (schemaname = 'public' and tablename like 'checkpoint%')
      order by 1`,
    [VERSION_TABLE],
  );
  const steps = await query("select 'checkpoint step ' || v as line from public.checkpoint_migrations order by v");
  return [...columns.rows, ...indexes.rows, ...steps.rows].map((row) => String(row.line));
}

async function versions(query: Query): Promise<number[]> {
  const result = await query(`select version from warrant.${VERSION_TABLE} order by version`);
  return result.rows.map((row) => Number(row.version));
}

const THREAD = "00000000-0000-4000-8000-000000000001";
const ROW_BEFORE = `insert into warrant.threads (thread_id, owner, tenant) values ('${THREAD}', 'alice', 't1')`;

/** One database kind: a way to prepare it with raw SQL, then open it with Warrant. */
interface Kind {
  name: "server" | "embedded";
  create(): Promise<{
    raw(work: (query: Query) => Promise<void>): Promise<void>;
    open(): Promise<Database>;
    remove(): Promise<void>;
  }>;
}

const server: Kind = {
  name: "server",
  async create() {
    const database = await createTestDatabase();
    return {
      async raw(work) {
        const pool = new pg.Pool({ connectionString: database.url, max: 1 });
        try {
          await work((sql, params) => pool.query(sql, params));
        } finally {
          await pool.end();
        }
      },
      open: () => openDatabase({ databaseUrl: database.url, dataDir: os.tmpdir() }),
      remove: () => database.drop(),
    };
  },
};

const embedded: Kind = {
  name: "embedded",
  async create() {
    const directory = await createEmbeddedDir();
    return {
      async raw(work) {
        const pglite = await PGlite.create({ dataDir: path.join(directory.dir, "pglite") });
        try {
          await work((sql, params) => pglite.query<Record<string, unknown>>(sql, params));
        } finally {
          await pglite.close();
        }
      },
      open: () => openDatabase({ dataDir: directory.dir }),
      remove: () => directory.remove(),
    };
  },
};

describe.each([server, embedded])("migrations on $name", (kind) => {
  test(
    "a database created before versions upgrades to the same layout as a new one, keeping its rows",
    SLOW,
    async () => {
      const [old, fresh] = [await kind.create(), await kind.create()];
      try {
        const statements = await beforeVersions();
        await old.raw(async (query) => {
          for (const statement of statements) await query(statement);
          await query(ROW_BEFORE);
        });

        // Read through each opened database's own pool: each PGlite start is slow, so no extra ones.
        let upgradedLayout: string[] = [];
        const upgraded = await old.open();
        const upgradedQuery: Query = (sql, params) => upgraded.pool.query(sql, params);
        try {
          expect(await versions(upgradedQuery)).toEqual(MIGRATIONS.map((migration) => migration.version));
          const kept = await upgradedQuery("select owner from warrant.threads where thread_id = $1", [THREAD]);
          expect(kept.rows).toEqual([{ owner: "alice" }]);
          upgradedLayout = await layout(upgradedQuery);
        } finally {
          await upgraded.close();
        }
        const made = await fresh.open();
        let freshLayout: string[] = [];
        try {
          freshLayout = await layout((sql, params) => made.pool.query(sql, params));
        } finally {
          await made.close();
        }
        expect(upgradedLayout.length).toBeGreaterThan(50);
        expect(upgradedLayout).toEqual(freshLayout);
      } finally {
        await old.remove();
        await fresh.remove();
      }
    },
  );

  test("each migration is applied once; a database newer than the code is refused", SLOW, async () => {
    const target = await kind.create();
    try {
      const first = await target.open();
      await first.close();
      const again = await target.open();
      await again.close();
      let applied: Record<string, unknown>[] = [];
      await target.raw(async (query) => {
        applied = (await query(`select version, name from warrant.${VERSION_TABLE} order by version`)).rows;
        await query(`insert into warrant.${VERSION_TABLE} (version, name) values ($1, 'from the future')`, [
          MIGRATIONS.length + 1,
        ]);
      });
      expect(applied).toEqual(MIGRATIONS.map((migration) => ({ version: migration.version, name: migration.name })));
      await expect(target.open()).rejects.toMatchObject({ code: "config_invalid" });
    } finally {
      await target.remove();
    }
  });
});

describe("migrations under concurrent starts", () => {
  test("several instances opening one new server database apply each migration once", SLOW, async () => {
    const database = await createTestDatabase();
    try {
      const opened = await Promise.all(
        [1, 2, 3, 4].map(() => openDatabase({ databaseUrl: database.url, dataDir: os.tmpdir() })),
      );
      for (const one of opened) await one.close();
      const pool = new pg.Pool({ connectionString: database.url, max: 1 });
      try {
        const rows = await pool.query(`select version from warrant.${VERSION_TABLE} order by version`);
        expect(rows.rows.map((row) => row.version)).toEqual(MIGRATIONS.map((migration) => migration.version));
      } finally {
        await pool.end();
      }
    } finally {
      await database.drop();
    }
  });
});
