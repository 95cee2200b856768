/**
 * Opens Warrant's Postgres: a real server when `DATABASE_URL` is set, else an
 * embedded PGlite served over a local socket so both modes share one code
 * path (`pg.Pool` → checkpointer + ledger store).
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
import type { LedgerStore } from "../runtime/ledger.js";
import { WarrantSaver } from "./checkpointer.js";
import { setUpCheckpointTables } from "./checkpoint-tables.js";
import { WriteAhead } from "./write-ahead.js";
import { createLedgerStore, ledgerMigrations, quoteSchemaName } from "./ledger-store.js";
import { createThreadStore, threadMigrations, type ThreadStore } from "./thread-store.js";
import { approvalMigrations, createApprovalStore } from "./approval-store.js";
import { auditMigrations, createAuditStore } from "./audit-store.js";
import { chainMigrations, loadChain } from "./audit-chain-store.js";
import { createPinStore, pinMigrations } from "./pin-store.js";
import { revocationMigrations } from "../auth/revocations.js";
import { storeMigrations } from "./store-item-table.js";
import { cronMigrations } from "./cron-store.js";
import { webhookMigrations } from "./webhook-store.js";
import { elicitationMigrations } from "./elicitation-store.js";
import { runQueueMigrations } from "./run-queue-store.js";
import { oauthCredentialMigrations } from "../auth/oauth-token-store.js";
import { createRunEventStore, runEventMigrations, type RunEventStore } from "./run-events-store.js";
import { listenForRunEvents, type RunEventListener } from "./run-events-listener.js";
import type { PinStore } from "../mcp/pins.js";
import { verifyChains, type VerifyReport } from "../audit/chain.js";
import type { AuditStore } from "../audit/events.js";
import type { ApprovalStore } from "../runtime/approvals.js";
import { createBoundedPool, DEFAULT_POOL_BOUNDS, type PoolBounds, splitConnections } from "./pool.js";
import { describeTarget, oneLine, withoutSecret } from "./database-url.js";

/** An open database. Everything shares `pool`. */
export interface Database {
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
  /** The schema of Warrant's own tables (for readers that query them directly, e.g. the trace). */
  schema: string;
  /** LangGraph checkpointer (PostgresSaver's table layout, fewer writes: see checkpointer.ts); set up already (schema `public`). */
  saver: WarrantSaver;
  /** Thread ownership, runs and the per-thread run lease (the API server). */
  threads: ThreadStore;
  /** API runs' stream events, for every instance (the API server). */
  runEvents: RunEventStore;
  /** Opens this instance's LISTEN connection for other instances' run events (server mode). */
  listenForRunEvents(log: (line: string) => void): Promise<RunEventListener>;
  ledger: LedgerStore;
  /** Decided reviews (human_review). */
  approvals: ApprovalStore;
  /** Denials (authorize) and run endings (observe). */
  audit: AuditStore;
  /** Pinned tool definitions (src/mcp/pins.ts). */
  pins: PinStore;
  /** Recomputes the audit chains (one run's, or all) and lists where they are broken. */
  verifyAudit(runId?: string): Promise<VerifyReport>;
  /** Ends the pool, then (embedded) stops the socket server and closes PGlite. Idempotent. */
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** `postgres://user[:password]@host[:port]/database`; unset means embedded PGlite. */
  databaseUrl?: string;
  /** Embedded mode keeps its files in `<dataDir>/pglite`. Unused in server mode. */
  dataDir: string;
  /** Schema for Warrant's own tables; default `warrant`. */
  schema?: string;
  /** The process's one pool: its size (server mode) and how long a query may queue for a connection. */
  pool?: Partial<PoolBounds>;
  /** Called with the pool as soon as it exists, before setup (the benchmark counts its queries). */
  observePool?: (pool: pg.Pool) => void;
}

const DEFAULT_SCHEMA = "warrant";

/** One live pool client plus one slot for a replacement while the old socket closes (see the header). */
const EMBEDDED_SOCKET_SLOTS = 2;

/** Fixed key for the setup lock: the ASCII bytes of "WARRANT" read as a bigint. Text, so JS never rounds it. */
const SETUP_LOCK_KEY = "24560144796962388";

/**
 * Opens the database and runs setup (checkpointer tables + ledger migrations)
 * once, under an advisory lock. Throws `ConfigError` `config_invalid` for a
 * malformed URL or schema name, `database_unreachable` when the server cannot
 * be reached or the embedded files cannot be opened.
 */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const schema = options.schema ?? DEFAULT_SCHEMA;
  quoteSchemaName(schema); // validates the name before any connection is made
  const bounds = { ...DEFAULT_POOL_BOUNDS, ...options.pool };
  if (options.databaseUrl !== undefined) return openServer(options.databaseUrl, schema, bounds, options.observePool);
  return openEmbedded(options.dataDir, schema, bounds.waitMs, options.observePool);
}

async function openServer(
  databaseUrl: string,
  schema: string,
  bounds: PoolBounds,
  observePool?: (pool: pg.Pool) => void,
): Promise<Database> {
  const target = describeTarget(databaseUrl);
  const split = splitConnections(bounds);
  const pool = createBoundedPool({ connectionString: databaseUrl }, { ...bounds, max: split.requests });
  watchIdleErrors(pool);
  observePool?.(pool);
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
    return await assemble("server", pool, schema, target.label, end, background);
  } catch (error) {
    throw withoutSecret(error, target.password);
  }
}

async function openEmbedded(
  dataDir: string,
  schema: string,
  waitMs: number,
  observePool?: (pool: pg.Pool) => void,
): Promise<Database> {
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
  observePool?.(pool);
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
  return assemble("embedded", pool, schema, `embedded PGlite in ${directory}`, shutdown);
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

/** Runs setup, then builds the handle; on a setup failure releases everything it was given. */
async function assemble(
  mode: Database["mode"],
  pool: pg.Pool,
  schema: string,
  target: string,
  shutdown: () => Promise<void>,
  background: pg.Pool = pool,
): Promise<Database> {
  try {
    await setUp(pool, schema, target);
  } catch (error) {
    await shutdown().catch(() => undefined);
    throw error;
  }
  let closing: Promise<void> | undefined;
  // The per-step writes are prepared statements (prepared.ts); pending saves are written before the pool ends.
  const saver = new WarrantSaver(pool, undefined, { namedStatements: true });
  // The write-ahead step: intent rows commit with the thread's held checkpoint saves and a read's outcome held for them.
  const writeAhead = new WriteAhead(saver);
  const close = async () => {
    try {
      await saver.close();
    } finally {
      await shutdown();
    }
  };
  return {
    mode,
    pool,
    background,
    schema,
    saver,
    ledger: createLedgerStore(pool, schema, { thread: writeAhead, namedStatements: true }),
    threads: createThreadStore(pool, schema),
    runEvents: createRunEventStore(pool, schema),
    listenForRunEvents: (log) => listenForRunEvents(pool, schema, log),
    approvals: createApprovalStore(pool, schema, writeAhead),
    audit: createAuditStore(pool, schema, writeAhead),
    pins: createPinStore(pool, schema),
    verifyAudit: async (runId) => verifyChains({ ...(await loadChain(pool, schema, runId)), runId }),
    close: () => (closing ??= close()),
  };
}

/**
 * Setup on ONE client that holds the advisory lock for the whole time: the
 * checkpoint tables' migrations read their last step, then apply the rest
 * (checkpoint-tables.ts), and `create ... if not exists` races on the
 * catalog, so concurrent openers must serialize. Everything runs on that
 * client, so the one-connection embedded pool never waits for a second one.
 * In embedded mode the lock is redundant (one process owns the data
 * directory) but harmless.
 */
async function setUp(pool: pg.Pool, schema: string, target: string): Promise<void> {
  const client = await connectOrExplain(pool, target);
  let broken: Error | undefined;
  try {
    await client.query("select pg_advisory_lock($1::bigint)", [SETUP_LOCK_KEY]);
    try {
      await setUpCheckpointTables(client);
      for (const statement of [
        ...ledgerMigrations(schema),
        ...threadMigrations(schema),
        ...runEventMigrations(schema),
        ...approvalMigrations(schema),
        ...auditMigrations(schema),
        ...chainMigrations(schema),
        ...pinMigrations(schema),
        ...revocationMigrations(schema),
        ...storeMigrations(schema),
        ...cronMigrations(schema),
        ...webhookMigrations(schema),
        ...elicitationMigrations(schema),
        ...runQueueMigrations(schema),
        ...oauthCredentialMigrations(schema),
      ])
        await client.query(statement);
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

async function connectOrExplain(pool: pg.Pool, target: string): Promise<pg.PoolClient> {
  try {
    return await pool.connect();
  } catch (error) {
    throw new ConfigError("database_unreachable", `cannot connect to Postgres at ${target}: ${oneLine(error)}`, {
      cause: error,
    });
  }
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
