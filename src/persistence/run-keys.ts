/**
 * Run-level idempotency keys (`Idempotency-Key` on run creation, the CLI's
 * `--idempotency-key`): one row per (tenant, owner, key) naming the thread
 * and run that key started and a hash of the request, so a repeat returns
 * that run and starts nothing, and a repeat with another request is refused.
 *
 * The row is claimed *before* the run starts (an insert that either wins or
 * finds the winner), so two concurrent requests with one key start one run.
 * A claim whose run then fails to start is given back, so the client may
 * retry with the same key. No foreign key to `runs`: the CLI's runs have no
 * API run row, and the row must outlive nothing else.
 */
import { createHash } from "node:crypto";
import type pg from "pg";
import { canonicalJson } from "../policy/fingerprint.js";
import { quoteSchemaName } from "../sql-names.js";
import type { Owner } from "./thread-store.js";

/** Keys are 1–255 printable ASCII characters (space to tilde), as HTTP header values can carry them. */
export const RUN_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** True when `key` is an acceptable idempotency key. */
export function isRunKey(key: string): boolean {
  return RUN_KEY_PATTERN.test(key) && key.trim() === key && key.length > 0;
}

/** What a key was first used for. */
export interface RunKeyRow {
  idempotency_key: string;
  request_hash: string;
  thread_id: string;
  run_id: string;
  created_at: Date;
}

export type RunKeyClaim = { claimed: true } | { claimed: false; existing: RunKeyRow };

export interface RunKeyStore {
  find(owner: Owner, key: string): Promise<RunKeyRow | undefined>;
  /** Records the key for this thread and run unless the owner already used it; then returns what it was used for. */
  claim(
    owner: Owner,
    key: string,
    claim: { request_hash: string; thread_id: string; run_id: string },
  ): Promise<RunKeyClaim>;
  /** Gives a claim back (its run did not start); only the claim of `runId` is removed. */
  release(owner: Owner, key: string, runId: string): Promise<void>;
}

/** The hash a repeated request is compared by: SHA-256 of the canonical JSON of what was asked. */
export function requestHash(request: unknown): string {
  return createHash("sha256").update(canonicalJson(request)).digest("hex");
}

export function runKeyMigrations(schema: string): string[] {
  const s = quoteSchemaName(schema);
  return [
    `create table if not exists ${s}.run_idempotency (
      tenant text not null,
      owner text not null,
      idempotency_key text not null,
      request_hash text not null,
      thread_id uuid not null,
      run_id uuid not null,
      created_at timestamptz not null default now(),
      primary key (tenant, owner, idempotency_key)
    )`,
  ];
}

const COLUMNS = "idempotency_key, request_hash, thread_id::text as thread_id, run_id::text as run_id, created_at";

export function createRunKeyStore(pool: pg.Pool, schema: string): RunKeyStore {
  const s = quoteSchemaName(schema);
  const find = async (owner: Owner, key: string) =>
    (
      await pool.query<RunKeyRow>(
        `select ${COLUMNS} from ${s}.run_idempotency where tenant = $1 and owner = $2 and idempotency_key = $3`,
        [owner.tenant, owner.user_id, key],
      )
    ).rows[0];
  return {
    find,
    async claim(owner, key, claim) {
      const inserted = await pool.query(
        `insert into ${s}.run_idempotency (tenant, owner, idempotency_key, request_hash, thread_id, run_id) values ($1, $2, $3, $4, $5, $6)
         on conflict (tenant, owner, idempotency_key) do nothing returning run_id`,
        [owner.tenant, owner.user_id, key, claim.request_hash, claim.thread_id, claim.run_id],
      );
      if ((inserted.rowCount ?? 0) > 0) return { claimed: true };
      const existing = await find(owner, key);
      // Released between our insert and this read: the other request failed; claim again.
      if (!existing) return this.claim(owner, key, claim);
      return { claimed: false, existing };
    },
    async release(owner, key, runId) {
      await pool.query(
        `delete from ${s}.run_idempotency where tenant = $1 and owner = $2 and idempotency_key = $3 and run_id = $4`,
        [owner.tenant, owner.user_id, key, runId],
      );
    },
  };
}
