/**
 * Applies a versioned migration sequence to one schema, once, under an
 * advisory lock (several instances may start at once on one server).
 *
 * `<schema>.schema_migrations` has one row per migration applied: its
 * version, name and when. At start the versions above the highest row are
 * applied in order, each in its own transaction with its row, so a failure
 * leaves the database at the last whole version and the next start resumes
 * there. A database older than the version table (whose tables were created
 * by `create ... if not exists` lists at every start) has no row yet and gets
 * migration 1, whose statements are those same lists: on such a database
 * they change nothing, and from then on it is versioned like a new one.
 *
 * Everything runs on ONE client that holds the lock for the whole time, so
 * the one-connection embedded pool never waits for a second one. In embedded
 * mode the lock is redundant (one process owns the data directory) but
 * harmless. The sequence itself is src/stores/migrations.ts; this module
 * knows no table.
 */
import type pg from "pg";
import { ConfigError } from "../errors.js";
import { quoteSchemaName } from "../sql-names.js";
import { oneLine } from "./database-url.js";

/** One step of the sequence. Append only: a version once released never changes. */
export interface Migration {
  /** 1, 2, 3…: its place in the sequence, with no gap. */
  version: number;
  /** What it does, in a few words (kept in the version table). */
  name: string;
  /** Its statements, for Warrant's tables in `schema`. */
  statements(schema: string): readonly string[];
}

/** Fixed key for the setup lock: the ASCII bytes of "WARRANT" read as a bigint. Text, so JS never rounds it. */
export const SETUP_LOCK_KEY = "24560144796962388";

/** The version table's name, in Warrant's schema. */
export const VERSION_TABLE = "schema_migrations";

/** What `migrate` did: the version found and the versions applied. */
export interface MigrationReport {
  from: number;
  applied: number[];
}

/**
 * Brings `schema` to the last version of `migrations`. Throws
 * `ConfigError("database_unreachable")` when no connection can be had, and
 * `ConfigError("config_invalid")` for a sequence that is not 1, 2, 3… or a
 * database newer than this code (a downgrade).
 */
export async function migrate(
  pool: pg.Pool,
  target: string,
  schema: string,
  migrations: readonly Migration[],
): Promise<MigrationReport> {
  checkSequence(migrations);
  const client = await connectOrExplain(pool, target);
  let broken: Error | undefined;
  try {
    await client.query("select pg_advisory_lock($1::bigint)", [SETUP_LOCK_KEY]);
    try {
      return await applyPending(client, schema, migrations);
    } finally {
      await client.query("select pg_advisory_unlock($1::bigint)", [SETUP_LOCK_KEY]);
    }
  } catch (error) {
    broken = error instanceof Error ? error : new Error(String(error));
    throw error;
  } finally {
    // A client that failed mid-setup may still hold the lock or a broken
    // connection; passing the error makes the pool destroy it.
    client.release(broken);
  }
}

/** The highest version applied to `schema`, 0 when none (or no version table yet). */
export async function appliedVersion(client: pg.ClientBase | pg.Pool, schema: string): Promise<number> {
  const table = `${quoteSchemaName(schema)}.${VERSION_TABLE}`;
  const exists = await client.query<{ found: string | null }>("select to_regclass($1) as found", [table]);
  if (!exists.rows[0]?.found) return 0;
  const last = await client.query<{ version: number | null }>(`select max(version) as version from ${table}`);
  return last.rows[0]?.version ?? 0;
}

async function applyPending(
  client: pg.ClientBase,
  schema: string,
  migrations: readonly Migration[],
): Promise<MigrationReport> {
  const s = quoteSchemaName(schema);
  await client.query(`create schema if not exists ${s}`);
  await client.query(
    `create table if not exists ${s}.${VERSION_TABLE} (
      version integer primary key,
      name text not null,
      applied_at timestamptz not null default now()
    )`,
  );
  const from = await appliedVersion(client, schema);
  const latest = migrations.length;
  if (from > latest) {
    throw new ConfigError(
      "config_invalid",
      `the database schema ${schema} is at version ${from}, newer than this Warrant's ${latest}: run a newer Warrant`,
    );
  }
  const applied: number[] = [];
  for (const migration of migrations.slice(from)) {
    await client.query("begin");
    try {
      for (const statement of migration.statements(schema)) await client.query(statement);
      await client.query(`insert into ${s}.${VERSION_TABLE} (version, name) values ($1, $2)`, [
        migration.version,
        migration.name,
      ]);
      await client.query("commit");
    } catch (error) {
      await client.query("rollback").catch(() => undefined);
      throw error;
    }
    applied.push(migration.version);
  }
  return { from, applied };
}

function checkSequence(migrations: readonly Migration[]): void {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new ConfigError(
        "config_invalid",
        `migration ${JSON.stringify(migration.name)} has version ${migration.version}, expected ${index + 1}`,
      );
    }
  });
}

async function connectOrExplain(pool: pg.Pool, target: string): Promise<pg.PoolClient> {
  try {
    return await pool.connect();
  } catch (error) {
    throw new ConfigError("database_unreachable", `cannot connect to Postgres at ${target}: ${oneLine(error)}`, {
      cause: error,
    });
  }
}
