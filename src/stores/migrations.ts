/**
 * The one migration sequence of Warrant's database, applied at start by
 * src/db/migrate.ts (version table, advisory lock) on the server Postgres
 * and on embedded PGlite alike. Append a migration for every change of a
 * table; never edit one that has been released.
 *
 * Migration 1 is the schema as it stood before versions: each store's
 * `create ... if not exists` list, in the order they ran at every start, so
 * a database created then takes it as a no-op. The checkpointer's tables
 * (schema `public`, src/checkpoint/checkpoint-tables.ts) are in it too,
 * with their own step counter (`checkpoint_migrations`) filled in, so a stock
 * `PostgresSaver` still finds nothing to migrate. Those tables are shared by
 * every Warrant schema in the database, so a later step on them must stay
 * safe to run once per schema (`if not exists`, as theirs are).
 */
import type { Migration } from "../db/migrate.js";
import { CHECKPOINT_MIGRATIONS, CHECKPOINT_SCHEMA, TABLES } from "../checkpoint/checkpoint-tables.js";
import { approvalTables } from "./approval-store.js";
import { auditChainTables } from "./audit-chain-store.js";
import { auditTables } from "./audit-store.js";
import { cronTables } from "./cron-store.js";
import { elicitationTables, elicitationUrlColumns } from "./elicitation-store.js";
import { ledgerTables, ledgerTaskColumn } from "./ledger-columns.js";
import { oauthCredentialTables } from "./oauth-token-store.js";
import { pinTables } from "./pin-store.js";
import { revocationTables } from "./revocation-store.js";
import { admissionFunction, admissionTables } from "./run-admission.js";
import { runEventTables } from "./run-events-store.js";
import { runKeyTables } from "./run-keys.js";
import { runQueueTables } from "./run-queue-store.js";
import { storeItemTables } from "./store-item-table.js";
import { taskWaitTables } from "./task-wait-store.js";
import { threadTables } from "./thread-tables.js";
import { webhookTables } from "./webhook-store.js";

/** The checkpointer's tables with its step counter, as its own setup leaves them. */
function checkpointTables(): string[] {
  return [
    `create schema if not exists "${CHECKPOINT_SCHEMA}"`,
    ...CHECKPOINT_MIGRATIONS,
    `insert into ${TABLES.migrations} (v) select generate_series(0, ${CHECKPOINT_MIGRATIONS.length - 1})
      on conflict (v) do nothing`,
  ];
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "tables as created before versions",
    statements: (schema) => [
      ...checkpointTables(),
      ...ledgerTables(schema),
      ...threadTables(schema),
      ...runKeyTables(schema),
      ...admissionTables(schema),
      ...runEventTables(schema),
      ...approvalTables(schema),
      ...auditTables(schema),
      ...auditChainTables(schema),
      ...pinTables(schema),
      ...revocationTables(schema),
      ...storeItemTables(schema),
      ...cronTables(schema),
      ...webhookTables(schema),
      ...elicitationTables(schema),
      ...runQueueTables(schema),
      ...oauthCredentialTables(schema),
    ],
  },
  { version: 2, name: "ledger task ids", statements: ledgerTaskColumn },
  { version: 3, name: "elicitation url mode", statements: elicitationUrlColumns },
  { version: 4, name: "task waits", statements: taskWaitTables },
  { version: 5, name: "run admission in one statement", statements: admissionFunction },
];
