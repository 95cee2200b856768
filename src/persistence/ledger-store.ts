/**
 * The Postgres side of the effect ledger (`<schema>.ledger`). Every statement
 * is parameterized; the only interpolated identifier is the schema name,
 * which is validated against a strict pattern and then double-quoted.
 */
import type pg from "pg";
import { InvariantError } from "../errors.js";
import { IDEMPOTENT } from "./retry.js";
import { quoteSchemaName } from "../sql-names.js";
import type { RunStart } from "../audit/chain.js";
import { LedgerRowSchema, type LedgerOutcome, type LedgerRow, type LedgerStore } from "../runtime/ledger.js";
import {
  chainedStatement,
  chainedWrites,
  Params,
  rowLink,
  runChained,
  type ChainedWrite,
} from "./audit-chain-store.js";
import type { Statement } from "./checkpoint-sql.js";
import type { WarrantSaver } from "./checkpointer.js";
import {
  threadStatementsOf,
  type DeferredStatement,
  type MergedStatement,
  type ThreadStatements,
} from "./write-ahead.js";

export type { DeferredStatement, MergedStatement, ThreadStatements };

export { quoteSchemaName };

/**
 * Idempotent DDL for the ledger, in order. The caller runs it under the setup
 * advisory lock because `create ... if not exists` still races on the catalog
 * when two processes run it at the same moment.
 */
export function ledgerMigrations(schema: string): string[] {
  const quoted = quoteSchemaName(schema);
  return [
    `create schema if not exists ${quoted}`,
    `create table if not exists ${quoted}.ledger (
      thread_id text not null,
      call_id text not null,
      attempt integer not null,
      tool text not null,
      server text not null,
      risk text not null,
      fingerprint text not null,
      idempotency_key text,
      status text not null,
      error_code text,
      started_at timestamptz not null,
      finished_at timestamptz,
      elapsed_ms integer,
      primary key (thread_id, call_id, attempt)
    )`,
    `create index if not exists ledger_thread_id_idx on ${quoted}.ledger (thread_id)`,
    // Reconciliation of unknown write outcomes (added after the first release, hence not in the create).
    `alter table ${quoted}.ledger add column if not exists reconciles integer`,
    `alter table ${quoted}.ledger add column if not exists reconciled_by integer`,
    // One run id across tables; the owner every effect acts for, and who approved it.
    `alter table ${quoted}.ledger add column if not exists run_id text`,
    `alter table ${quoted}.ledger add column if not exists owner text`,
    `alter table ${quoted}.ledger add column if not exists approved_by text`,
    `create index if not exists ledger_run_id_idx on ${quoted}.ledger (run_id)`,
    // Whether a write's request left the process (issue 46): null on reads and on rows older than the column.
    `alter table ${quoted}.ledger add column if not exists sent boolean`,
  ];
}

/** What `finish` may change of a row (built once: zod compiles a schema's validator on first use). */
const OutcomeSchema = LedgerRowSchema.pick({
  status: true,
  error_code: true,
  finished_at: true,
  elapsed_ms: true,
  reconciled_by: true,
});

const COLUMNS = [
  "call_id",
  "attempt",
  "tool",
  "server",
  "risk",
  "fingerprint",
  "idempotency_key",
  "status",
  "error_code",
  "started_at",
  "finished_at",
  "elapsed_ms",
  "reconciles",
  "reconciled_by",
  "run_id",
  "owner",
  "approved_by",
  "sent",
].join(", ");

/** A row as `pg` returns it: timestamps arrive as `Date` (default parser) or text (if someone changed the parser). */
type StoredRow = Record<string, unknown>;

/** A read's outcome held back by `finishSoon`, as `insertRow` folds it into the next intent row. */
interface DeferredOutcome {
  kind: "ledger_outcome";
  threadId: string;
  callId: string;
  attempt: number;
  outcome: LedgerOutcome;
  run: RunStart | undefined;
}

function isDeferredOutcome(value: unknown): value is DeferredOutcome {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "ledger_outcome";
}

/**
 * A `LedgerStore` over `pool`, in `schema` (default layout from `ledgerMigrations`).
 * Intent rows go through `thread`'s `transact` (the write-ahead unit), which
 * commits them with the thread's held checkpoint saves.
 * Uses only `pool.query` (and whatever `transact` holds for an intent row), so it
 * never holds a client while waiting for another: safe with the one-connection embedded pool.
 */
export function createLedgerStore(
  pool: pg.Pool,
  schema: string,
  options: { thread?: ThreadStatements | WarrantSaver; namedStatements?: boolean } = {},
): LedgerStore {
  const { namedStatements = false } = options;
  // A checkpointer given as `thread`: its write-ahead unit (write-ahead.ts).
  const threadStatements = threadStatementsOf(options.thread);
  const table = `${quoteSchemaName(schema)}.ledger`;
  /** A ledger write as a chained write: its CTE (`name as (… returning *)`) and its row's link. */
  const chainedWrite = (params: Params, run: RunStart, name: string, write: string): ChainedWrite => ({
    ctes: [`${name} as (${write} returning *)`],
    link: rowLink(
      params,
      "ledger",
      run,
      {
        kind: "ledger",
        key: "w.call_id || '/' || w.attempt::text",
        node: "execute",
        actor: params.add(run.owner),
        code: "w.status",
      },
      name,
    ),
  });
  const chained = (params: Params, run: RunStart, write: string) =>
    chainedStatement(schema, params, run, chainedWrite(params, run, "written", write));

  /** The INSERT of `row` (with `onlyFirst`: unless the call already has one), its values added to `params`. */
  const insertSql = (
    params: Params,
    threadId: string,
    valid: LedgerRow,
    run: RunStart | undefined,
    onlyFirst: boolean,
  ): string => {
    const thread = params.add(threadId);
    const call = params.add(valid.call_id);
    const values = [
      thread,
      call,
      params.add(valid.attempt, "integer"),
      params.add(valid.tool),
      params.add(valid.server),
      params.add(valid.risk),
      params.add(valid.fingerprint),
      params.add(valid.idempotency_key),
      params.add(valid.status),
      params.add(valid.error_code),
      params.add(valid.started_at, "timestamptz"),
      params.add(valid.finished_at, "timestamptz"),
      params.add(valid.elapsed_ms, "integer"),
      params.add(valid.reconciles ?? null, "integer"),
      params.add(valid.reconciled_by ?? null, "integer"),
      params.add(valid.run_id ?? run?.run_id ?? null),
      params.add(valid.owner ?? null),
      params.add(valid.approved_by ?? null),
      params.add(valid.sent ?? null, "boolean"),
    ].join(", ");
    const guard = onlyFirst
      ? ` where not exists (select 1 from ${table} where thread_id = ${thread} and call_id = ${call})`
      : "";
    return `insert into ${table} (thread_id, ${COLUMNS}) select ${values}${guard}`;
  };

  /**
   * Inserts a row (with `onlyFirst`: unless the call already has one) and,
   * with `run`, its audit link, in one statement run through `transact`, so it
   * commits with the thread's pending checkpoint saves and with a read's
   * outcome still waiting to be written (`finishSoon`). Returns the rows inserted.
   */
  const insertRow = async (
    threadId: string,
    row: LedgerRow,
    run: RunStart | undefined,
    onlyFirst: boolean,
  ): Promise<number> => {
    requireThreadId(threadId);
    // Validate before writing so a malformed row never reaches the durable record.
    const valid = LedgerRowSchema.parse(row);
    const params = new Params();
    const insert = insertSql(params, threadId, valid, run, onlyFirst);
    // With `run`: the row and its audit-chain link in one statement (see audit-chain-store.ts).
    const alone = (): Statement => ({ text: run ? chained(params, run, insert) : insert, values: params.values });
    if (!threadStatements) {
      const statement = alone();
      return (await pool.query(statement.text, statement.values)).rowCount ?? 0;
    }
    const merge = (waiting: readonly DeferredStatement[]): MergedStatement | undefined => {
      const outcome = waiting.length === 1 ? waiting[0]?.payload : undefined;
      if (!isDeferredOutcome(outcome) || outcome.run?.run_id !== run?.run_id) return undefined;
      // The waiting outcome first, then this row: one statement, one commit, links in that order.
      const merged = new Params();
      // Validated when it was held (finishSoon).
      const update = finishStatement(outcome.threadId, outcome.callId, outcome.attempt, outcome.outcome, merged, true);
      const again = insertSql(merged, threadId, valid, run, onlyFirst);
      const mergedText = run
        ? chainedWrites(schema, merged, run, [
            chainedWrite(merged, run, "outcome", update.sql),
            chainedWrite(merged, run, "intent", again),
          ])
        : `with outcome as (${update.sql} returning 1), intent as (${again} returning 1)
          select (select count(*) from outcome)::integer as w1, (select count(*) from intent)::integer as w2`;
      return {
        statement: { text: mergedText, values: merged.values },
        read: (result) => {
          const counts = result.rows[0] as { w1?: number; w2?: number } | undefined;
          update.check(counts?.w1 ?? 0);
          return counts?.w2 ?? 0;
        },
      };
    };
    return threadStatements.transact(threadId, alone, merge);
  };

  /** The outcome update of one attempt (its values added to `params`) and the check of what it changed. */
  const finishStatement = (
    threadId: string,
    callId: string,
    attempt: number,
    outcome: LedgerOutcome,
    params = new Params(),
    validated = false,
  ) => {
    requireThreadId(threadId);
    const valid = validated ? outcome : OutcomeSchema.parse(outcome);
    // An absent reconciled_by keeps the stored one (coalesce), so finishing never erases a reconciliation.
    const sql = `update ${table}
          set status = ${params.add(valid.status)}, error_code = ${params.add(valid.error_code)},
              finished_at = ${params.add(valid.finished_at, "timestamptz")},
              elapsed_ms = ${params.add(valid.elapsed_ms, "integer")},
              reconciled_by = coalesce(${params.add(valid.reconciled_by ?? null, "integer")}, reconciled_by)
        where thread_id = ${params.add(threadId)} and call_id = ${params.add(callId)} and attempt = ${params.add(attempt, "integer")}`;
    return {
      sql,
      params,
      // Finishing an attempt that was never begun means the caller lost track of its own effects.
      check: (changed: number | null) => {
        if (changed !== 1)
          throw new InvariantError(
            "illegal_transition",
            `ledger has no attempt ${attempt} of call ${callId} in thread ${threadId}`,
          );
      },
    };
  };
  /** The outcome update alone, as its own statement (with `run`, chained). */
  const finishAlone = (
    threadId: string,
    callId: string,
    attempt: number,
    outcome: LedgerOutcome,
    run: RunStart | undefined,
  ) => {
    const update = finishStatement(threadId, callId, attempt, outcome);
    return { ...update, text: run ? chained(update.params, run, update.sql) : update.sql };
  };

  return {
    async begin(threadId: string, row: LedgerRow, run?: RunStart): Promise<void> {
      await insertRow(threadId, row, run, false);
    },

    async beginFirst(threadId: string, row: LedgerRow, run?: RunStart): Promise<boolean> {
      return (await insertRow(threadId, row, run, true)) === 1;
    },

    async finish(
      threadId: string,
      callId: string,
      attempt: number,
      outcome: LedgerOutcome,
      run?: RunStart,
    ): Promise<void> {
      const update = finishAlone(threadId, callId, attempt, outcome, run);
      update.check(
        run
          ? await runChained(pool, update.text, update.params, namedStatements)
          : (await pool.query(update.text, update.params.values)).rowCount,
      );
    },

    async finishSoon(
      threadId: string,
      callId: string,
      attempt: number,
      outcome: LedgerOutcome,
      run?: RunStart,
    ): Promise<void> {
      if (!threadStatements) return this.finish(threadId, callId, attempt, outcome, run);
      requireThreadId(threadId);
      // Validated now, so a malformed outcome fails here; the statement is built when it is sent (mostly inside the next intent's).
      const valid = OutcomeSchema.parse(outcome);
      const payload: DeferredOutcome = { kind: "ledger_outcome", threadId, callId, attempt, outcome: valid, run };
      let alone: ReturnType<typeof finishAlone> | undefined;
      threadStatements.defer(threadId, {
        statement: () => {
          alone = finishAlone(threadId, callId, attempt, valid, run);
          return { text: alone.text, values: alone.params.values };
        },
        check: (result) => alone?.check(result.rowCount),
        payload,
      });
    },

    async markSent(threadId: string, callId: string, attempt: number): Promise<void> {
      requireThreadId(threadId);
      const result = await pool.query(
        `${IDEMPOTENT}update ${table} set sent = true where thread_id = $1 and call_id = $2 and attempt = $3`,
        [threadId, callId, attempt],
      );
      if (result.rowCount !== 1)
        throw new InvariantError("illegal_transition", `ledger has no attempt ${attempt} of call ${callId}`);
    },

    async list(threadId: string): Promise<LedgerRow[]> {
      await threadStatements?.settle(threadId);
      const result = await pool.query<StoredRow>(
        `select ${COLUMNS} from ${table} where thread_id = $1 order by started_at, call_id, attempt`,
        [threadId],
      );
      return result.rows.map(toLedgerRow);
    },

    async latest(threadId: string, callId: string): Promise<LedgerRow | undefined> {
      await threadStatements?.settle(threadId);
      const result = await pool.query<StoredRow>(
        `select ${COLUMNS} from ${table} where thread_id = $1 and call_id = $2 order by attempt desc limit 1`,
        [threadId, callId],
      );
      const first = result.rows[0];
      return first === undefined ? undefined : toLedgerRow(first);
    },
  };
}

function requireThreadId(threadId: string): void {
  if (threadId.length === 0) throw new InvariantError("illegal_transition", "ledger thread id must not be empty");
}

/** Normalizes timestamps to ISO strings, leaves out unset reconciliation links, then validates the whole row. */
function toLedgerRow(stored: StoredRow): LedgerRow {
  const {
    reconciles,
    reconciled_by: reconciledBy,
    run_id: runId,
    owner,
    approved_by: approvedBy,
    sent,
    ...rest
  } = stored;
  return LedgerRowSchema.parse({
    ...rest,
    ...(typeof runId === "string" ? { run_id: runId } : {}),
    ...(typeof owner === "string" ? { owner } : {}),
    ...(typeof approvedBy === "string" ? { approved_by: approvedBy } : {}),
    ...(typeof sent === "boolean" ? { sent } : {}),
    started_at: toIsoString(stored.started_at),
    finished_at: stored.finished_at === null ? null : toIsoString(stored.finished_at),
    ...(reconciles === null || reconciles === undefined ? {} : { reconciles }),
    ...(reconciledBy === null || reconciledBy === undefined ? {} : { reconciled_by: reconciledBy }),
  });
}

function toIsoString(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "string") {
    const parsed = new Date(value);
    return Number.isNaN(parsed.getTime()) ? value : parsed.toISOString();
  }
  // Anything else is left for the schema to reject with a clear message.
  return value;
}
