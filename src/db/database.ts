/**
 * Connects to Warrant's Postgres: a real server when `DATABASE_URL` is set,
 * else an embedded PGlite served over a local socket so both modes share one
 * code path (a `pg.Pool`). Plumbing only: which tables exist is the migration
 * sequence's business (src/stores/migrations.ts, run by migrate.ts), and the
 * stores over the pool are built by src/stores/open-database.ts.
 *
 * Embedded-mode facts this module is built around (read from
 * `@electric-sql/pglite-socket` 0.2.17 and measured):
 * - PGlite is ONE single-user Postgres backend. The socket server can accept
 *   more connections (`maxConnections`), but they all share that one session:
 *   advisory locks, prepared statements and `SET`s are shared, and only
 *   explicit transaction blocks are kept apart by its query queue, so an
 *   extended-protocol message sequence from one socket can interleave with
 *   another's. Concurrent connections are therefore not safe, so the
 *   embedded pool has `max: 1` whatever `pool.max` says; callers queue for
 *   the one client, for at most `pool.waitMs` like in server mode.
 * - The server's slot limit is 2, not its default 1, and that is headroom,
 *   not concurrency: `pg.Pool#query` destroys its client on ANY query error
 *   (even a unique violation) and the next query connects a replacement at
 *   once, while the old socket is still closing. With one slot that
 *   replacement is refused ("Connection terminated unexpectedly"); measured:
 *   every other query failed after an error. With two, the pool (still at
 *   most one live client) always gets in. No idle timeout either, so the
 *   pool does not churn connections for nothing.
 * - Prepared statements (prepared.ts) outlive the client that prepared
 *   them; its replacement would fail preparing one again ("already
 *   exists"), so a new client runs `DEALLOCATE ALL` before it is used.
 * - PGlite starts Postgres with `-F` (fsync off), but its Node filesystem
 *   writes straight through to the host files, and commits still write the
 *   WAL (synchronous_commit stays on). Committed data therefore survives the
 *   process being SIGKILLed (see the crash test); it is not guaranteed to
 *   survive an OS crash or power loss.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import type pg from "pg";
import { ConfigError } from "../errors.js";
import { createBoundedPool, DEFAULT_POOL_BOUNDS, type PoolBounds, splitConnections } from "./pool.js";
import { describeTarget, oneLine, withoutSecret } from "./database-url.js";

/** An open connection to the database: the pools, before any store is built over them. */
export interface Connection {
  mode: "server" | "embedded";
  /**
   * In embedded mode this pool has exactly ONE connection: never hold a
   * client (`pool.connect()`) while awaiting anything else that needs the
   * pool, or the process deadlocks.
   */
  pool: pg.Pool;
  /**
   * Background work's connections (the run queue's poll, webhook deliveries,
   * cron ticks): a small pool of their own within `WARRANT_PG_POOL_MAX`
   * (`WARRANT_PG_BACKGROUND_POOL_MAX`), so a stalled poll never holds a
   * connection a request needs to report the database's state. `pool` itself
   * when there is none (embedded mode, or a pool too small to split).
   */
  background: pg.Pool;
  /** Ends the pools, then (embedded) stops the socket server and closes PGlite. */
  shutdown(): Promise<void>;
}

export interface ConnectOptions {
  /** `postgres://user[:password]@host[:port]/database`; unset means embedded PGlite. */
  databaseUrl?: string;
  /** Embedded mode keeps its files in `<dataDir>/pglite`. Unused in server mode. */
  dataDir: string;
  /** The process's one pool: its size (server mode) and how long a query may queue for a connection. */
  pool?: Partial<PoolBounds>;
  /** Called with the pool as soon as it exists, before setup (the benchmark counts its queries). */
  observePool?: (pool: pg.Pool) => void;
  /**
   * Runs once the pool exists, before the connection is returned (the migrations). `target`
   * names the database for error messages. On a failure everything opened is released, and in
   * server mode the password is taken out of the error.
   */
  setUp(pool: pg.Pool, target: string): Promise<void>;
}

/** One live pool client plus one slot for a replacement while the old socket closes (see the header). */
const EMBEDDED_SOCKET_SLOTS = 2;

/**
 * Connects and runs `options.setUp`. Throws `ConfigError` `config_invalid`
 * for a malformed URL, `database_unreachable` when the server cannot be
 * reached or the embedded files cannot be opened.
 */
export async function connectDatabase(options: ConnectOptions): Promise<Connection> {
  const bounds = { ...DEFAULT_POOL_BOUNDS, ...options.pool };
  if (options.databaseUrl !== undefined) return openServer(options.databaseUrl, bounds, options);
  return openEmbedded(options.dataDir, bounds.waitMs, options);
}

async function openServer(databaseUrl: string, bounds: PoolBounds, options: ConnectOptions): Promise<Connection> {
  const target = describeTarget(databaseUrl);
  const split = splitConnections(bounds);
  const pool = createBoundedPool({ connectionString: databaseUrl }, { ...bounds, max: split.requests });
  watchIdleErrors(pool);
  options.observePool?.(pool);
  const background =
    split.background > 0
      ? createBoundedPool({ connectionString: databaseUrl }, { ...bounds, max: split.background })
      : pool;
  if (background !== pool) watchIdleErrors(background);
  const end = async () => {
    try {
      await pool.end();
    } finally {
      if (background !== pool) await background.end();
    }
  };
  try {
    return await setUpOrRelease({ mode: "server", pool, background, shutdown: end }, target.label, options);
  } catch (error) {
    throw withoutSecret(error, target.password);
  }
}

async function openEmbedded(dataDir: string, waitMs: number, options: ConnectOptions): Promise<Connection> {
  const directory = path.resolve(dataDir, "pglite");
  // PGlite is single-process: a second opener (say `npm run chat` beside `npm start`) would corrupt it.
  const unlock = await lockDataDir(dataDir);
  let pglite: PGlite;
  try {
    pglite = await startPglite(directory);
  } catch (error) {
    await unlock();
    throw error;
  }
  const server = new PGLiteSocketServer({
    db: pglite,
    host: "127.0.0.1",
    port: 0,
    maxConnections: EMBEDDED_SOCKET_SLOTS,
  });
  try {
    await server.start();
  } catch (error) {
    await pglite.close();
    await unlock();
    throw new ConfigError(
      "database_unreachable",
      `cannot serve the embedded database in ${directory}: ${oneLine(error)}`,
      { cause: error },
    );
  }
  const onConnect = (client: pg.ClientBase) => client.query("deallocate all").then(() => undefined);
  // getServerConn() is "127.0.0.1:<port>" once start() has bound port 0.
  const pool = createBoundedPool(
    { connectionString: `postgres://postgres@${server.getServerConn()}/postgres`, idleTimeoutMillis: 0, onConnect },
    { max: 1, waitMs },
  );
  watchIdleErrors(pool);
  options.observePool?.(pool);
  const shutdown = async (): Promise<void> => {
    try {
      await pool.end();
    } finally {
      try {
        await server.stop();
      } finally {
        try {
          await pglite.close();
        } finally {
          await unlock();
        }
      }
    }
  };
  const target = `embedded PGlite in ${directory}`;
  return setUpOrRelease({ mode: "embedded", pool, background: pool, shutdown }, target, options);
}

/**
 * The live process (other than this one) that holds the embedded database
 * in `dataDir`, if any: what `npm run dev` checks before it starts, so that
 * Studio beside `npm start` refuses in one line instead of failing every run.
 */
export async function embeddedDatabaseHolder(dataDir: string): Promise<number | undefined> {
  const holder = Number((await fs.readFile(path.join(dataDir, "pglite.lock"), "utf8").catch(() => "")).trim());
  return Number.isSafeInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder) ? holder : undefined;
}

/**
 * Takes `<dataDir>/pglite.lock` (created exclusively, holding our pid). A
 * lock whose process is gone (killed) is stale and taken over. Returns the
 * release function.
 */
async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  await fs.mkdir(dataDir, { recursive: true });
  const lockPath = path.join(dataDir, "pglite.lock");
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      await fs.writeFile(lockPath, `${process.pid}\n`, { flag: "wx", mode: 0o600 });
      return async () => {
        await fs.rm(lockPath, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
        throw new ConfigError(
          "database_unreachable",
          `cannot lock the embedded database in ${dataDir}: ${oneLine(error)}`,
          { cause: error },
        );
      }
    }
    const holder = Number((await fs.readFile(lockPath, "utf8").catch(() => "")).trim());
    if (Number.isSafeInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
      throw new ConfigError(
        "database_unreachable",
        `the embedded database in ${dataDir} is in use by process ${holder}; stop it, or set DATABASE_URL to share a Postgres server`,
      );
    }
    // Stale (its process is gone) or unreadable: remove it and try once more.
    await fs.rm(lockPath, { force: true });
  }
  throw new ConfigError("database_unreachable", `cannot lock the embedded database in ${dataDir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function startPglite(directory: string): Promise<PGlite> {
  try {
    await fs.mkdir(directory, { recursive: true });
    return await PGlite.create({ dataDir: directory });
  } catch (error) {
    throw new ConfigError(
      "database_unreachable",
      `cannot open the embedded database in ${directory}: ${oneLine(error)}`,
      { cause: error },
    );
  }
}

/** Runs setup; on a failure releases everything the connection holds. */
async function setUpOrRelease(connection: Connection, target: string, options: ConnectOptions): Promise<Connection> {
  try {
    await options.setUp(connection.pool, target);
  } catch (error) {
    await connection.shutdown().catch(() => undefined);
    throw error;
  }
  return connection;
}

/**
 * An idle pooled client whose connection dies (server restart, embedded
 * socket closed) makes the pool emit `error`; without a listener Node would
 * crash the process. The pool already discards that client and the next
 * query reconnects, so there is nothing more to do here.
 */
function watchIdleErrors(pool: pg.Pool): void {
  pool.on("error", () => undefined);
}
