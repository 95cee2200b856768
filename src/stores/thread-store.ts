/**
 * What the API server keeps beside the checkpoints: who owns each thread
 * (thread-queries.ts), its runs (run-store.ts), the one-run-at-a-time lease
 * (thread-lease.ts), the run keys (run-keys.ts) and the per-owner run limit
 * (run-admission.ts), as one store over one pool. The rows and column lists
 * they share are thread-rows.ts.
 */
import type pg from "pg";
import { createRunAdmission, type RunAdmission } from "./run-admission.js";
import { createRunKeyStore, type RunKeyStore } from "./run-keys.js";
import { createRunQueries, type RunQueries } from "./run-store.js";
import { createThreadLease, type ThreadLease } from "./thread-lease.js";
import { createThreadQueries, type ThreadQueries } from "./thread-queries.js";

export interface ThreadStore extends ThreadQueries, ThreadLease, RunQueries {
  /** Run-level idempotency keys (API `Idempotency-Key`, CLI `--idempotency-key`). */
  readonly runKeys: RunKeyStore;
  /** Takes a thread's lease only while its owner is under the run limit, in one atomic step. */
  readonly admission: RunAdmission;
}

export function createThreadStore(pool: pg.Pool, schema: string): ThreadStore {
  return {
    ...createThreadQueries(pool, schema),
    ...createThreadLease(pool, schema),
    ...createRunQueries(pool, schema),
    runKeys: createRunKeyStore(pool, schema),
    admission: createRunAdmission(pool, schema),
  };
}
