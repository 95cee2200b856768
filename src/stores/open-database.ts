/**
 * Opens Warrant's database with its stores: connects (src/db/database.ts),
 * brings the schema to the last version of the migration sequence
 * (migrations.ts, under the setup lock), then builds the checkpointer and
 * the stores over the one pool.
 */
import type pg from "pg";
import { type ConnectOptions, connectDatabase } from "../db/database.js";
import { migrate } from "../db/migrate.js";
import type { PinStore } from "../mcp/pins.js";
import { WarrantSaver } from "../checkpoint/checkpointer.js";
import { WriteAhead } from "../checkpoint/write-ahead.js";
import type { ApprovalStore, LedgerStore } from "../ports.js";
import type { AuditStore } from "../audit/events.js";
import { type VerifyReport, verifyChains } from "../audit/chain.js";
import { quoteSchemaName } from "../sql-names.js";
import { createApprovalStore } from "./approval-store.js";
import { loadChain } from "./audit-chain-store.js";
import { createAuditStore } from "./audit-store.js";
import { createLedgerStore } from "./ledger-store.js";
import { MIGRATIONS } from "./migrations.js";
import { createPinStore } from "./pin-store.js";
import { listenForRunEvents, type RunEventListener } from "./run-events-listener.js";
import { createRunEventStore, type RunEventStore } from "./run-events-store.js";
import { createTaskWaitStore, type TaskWaitStore } from "./task-wait-store.js";
import { createThreadStore, type ThreadStore } from "./thread-store.js";

/** An open database. Everything shares `pool`. */
export interface Database {
  mode: "server" | "embedded";
  /**
   * In embedded mode this pool has exactly ONE connection: never hold a
   * client (`pool.connect()`) while awaiting anything else that needs the
   * pool, or the process deadlocks.
   */
  pool: pg.Pool;
  /** Background work's connections (src/db/database.ts); `pool` itself when there is none. */
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
  /** Tasks paused threads wait for (src/server/crons/task-waits.ts polls them). */
  taskWaits: TaskWaitStore;
  /** Recomputes the audit chains (one run's, or all) and lists where they are broken. */
  verifyAudit(runId?: string): Promise<VerifyReport>;
  /** Ends the pool, then (embedded) stops the socket server and closes PGlite. Idempotent. */
  close(): Promise<void>;
}

export interface OpenDatabaseOptions extends Omit<ConnectOptions, "setUp"> {
  /** Schema for Warrant's own tables; default `warrant`. */
  schema?: string;
}

const DEFAULT_SCHEMA = "warrant";

/**
 * Opens the database and applies the migrations not yet applied, once, under
 * an advisory lock. Throws `ConfigError` `config_invalid` for a malformed URL
 * or schema name, `database_unreachable` when the server cannot be reached or
 * the embedded files cannot be opened.
 */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const schema = options.schema ?? DEFAULT_SCHEMA;
  quoteSchemaName(schema); // validates the name before any connection is made
  const connection = await connectDatabase({
    ...options,
    setUp: async (pool, target) => {
      await migrate(pool, target, schema, MIGRATIONS);
    },
  });
  const { mode, pool, background } = connection;
  let closing: Promise<void> | undefined;
  // The per-step writes are prepared statements (prepared.ts); pending saves are written before the pool ends.
  const saver = new WarrantSaver(pool, undefined, { namedStatements: true });
  // The write-ahead step: intent rows commit with the thread's held checkpoint saves and a read's outcome held for them.
  const writeAhead = new WriteAhead(saver);
  const close = async () => {
    try {
      await saver.close();
    } finally {
      await connection.shutdown();
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
    taskWaits: createTaskWaitStore(pool, schema),
    verifyAudit: async (runId) => verifyChains({ ...(await loadChain(pool, schema, runId)), runId }),
    close: () => (closing ??= close()),
  };
}
