/**
 * The Postgres side of the effect ledger (`<schema>.ledger`). Every statement
 * is parameterized; the only interpolated identifier is the schema name,
 * which is validated against a strict pattern and then double-quoted. The
 * table and its column list are ledger-columns.ts, the statements
 * ledger-statements.ts; this module sends them.
 */
import { countToolCall } from "../metrics.js";
import type pg from "pg";
import { Params } from "../db/sql-params.js";
import { InvariantError } from "../errors.js";
import type { Statement } from "../checkpoint/checkpoint-sql.js";
import { IDEMPOTENT } from "../db/retry.js";
import type { DeferredStatement, MergedStatement, ThreadStatements } from "../checkpoint/write-ahead.js";
import type { RunStart } from "../audit/chain.js";
import type { LedgerStore } from "../ports.js";
import { type LedgerOutcome, type LedgerRow, LedgerRowSchema } from "../state/ledger.js";
import { quoteSchemaName } from "../sql-names.js";
import { chainedWrites, runChained } from "./audit-chain-store.js";
import { LEDGER_COLUMN_LIST, type StoredRow, toLedgerRow } from "./ledger-columns.js";
import {
  chainedLedgerWrite,
  type FinishStatement,
  finishStatement,
  insertSql,
  ledgerChainedWrite,
  OutcomeSchema,
  requireThreadId,
} from "./ledger-statements.js";

export type { DeferredStatement, MergedStatement, ThreadStatements };

/** One attempt of one call in one thread. */
interface AttemptKey {
  threadId: string;
  callId: string;
  attempt: number;
}

/** A read's outcome held back by `finishSoon`, as `insertRow` folds it into the next intent row. */
interface DeferredOutcome extends AttemptKey {
  kind: "ledger_outcome";
  outcome: LedgerOutcome;
  run: RunStart | undefined;
}

function isDeferredOutcome(value: unknown): value is DeferredOutcome {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "ledger_outcome";
}

/** A new row: where, what, its run, and whether only the call's first row is written. */
interface NewRow {
  table: string;
  schema: string;
  threadId: string;
  valid: LedgerRow;
  run: RunStart | undefined;
  onlyFirst: boolean;
}

/**
 * The waiting outcome first, then the new row: one statement, one commit,
 * links in that order. Undefined (each alone) unless exactly one outcome of
 * the same run waits.
 */
function mergeOutcome(row: NewRow, waiting: readonly DeferredStatement[]): MergedStatement | undefined {
  const { table, schema, threadId, valid, run, onlyFirst } = row;
  const outcome = waiting.length === 1 ? waiting[0]?.payload : undefined;
  if (!isDeferredOutcome(outcome) || outcome.run?.run_id !== run?.run_id) return undefined;
  const merged = new Params();
  // Validated when it was held (finishSoon).
  const update = finishStatement(table, outcome, outcome.outcome, merged, true);
  const again = insertSql(table, merged, threadId, valid, run, onlyFirst);
  const mergedText = run
    ? chainedWrites(schema, merged, run, [
        ledgerChainedWrite(merged, run, "outcome", update.sql),
        ledgerChainedWrite(merged, run, "intent", again),
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
}

/**
 * A `LedgerStore` over `pool`, in `schema` (the table: ledger-columns.ts).
 * Intent rows go through `thread`'s `transact` (the write-ahead unit), which
 * commits them with the thread's held checkpoint saves.
 * Uses only `pool.query` (and whatever `transact` holds for an intent row), so it
 * never holds a client while waiting for another: safe with the one-connection embedded pool.
 */
export function createLedgerStore(
  pool: pg.Pool,
  schema: string,
  options: { thread?: ThreadStatements; namedStatements?: boolean } = {},
): LedgerStore {
  const { namedStatements = false } = options;
  const threadStatements = options.thread;
  const table = `${quoteSchemaName(schema)}.ledger`;

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
    const insert = insertSql(table, params, threadId, valid, run, onlyFirst);
    // With `run`: the row and its audit-chain link in one statement (see audit-chain-store.ts).
    const alone = (): Statement => ({
      text: run ? chainedLedgerWrite(schema, params, run, insert) : insert,
      values: params.values,
    });
    if (!threadStatements) {
      const statement = alone();
      return (await pool.query(statement.text, statement.values)).rowCount ?? 0;
    }
    const newRow: NewRow = { table, schema, threadId, valid, run, onlyFirst };
    return threadStatements.transact(threadId, alone, (waiting) => mergeOutcome(newRow, waiting));
  };

  /** The outcome update alone, as its own statement (with `run`, chained). */
  const finishAlone = (
    attempt: AttemptKey,
    outcome: LedgerOutcome,
    run: RunStart | undefined,
  ): FinishStatement & { text: string } => {
    const update = finishStatement(table, attempt, outcome);
    return { ...update, text: run ? chainedLedgerWrite(schema, update.params, run, update.sql) : update.sql };
  };

  return {
    async begin(threadId: string, row: LedgerRow, run?: RunStart): Promise<void> {
      await insertRow(threadId, row, run, false);
      if (row.status !== "running") countToolCall(row.status);
    },

    async beginFirst(threadId: string, row: LedgerRow, run?: RunStart): Promise<boolean> {
      const inserted = (await insertRow(threadId, row, run, true)) === 1;
      if (inserted && row.status !== "running") countToolCall(row.status);
      return inserted;
    },

    async finish(
      threadId: string,
      callId: string,
      attempt: number,
      outcome: LedgerOutcome,
      run?: RunStart,
    ): Promise<void> {
      const update = finishAlone({ threadId, callId, attempt }, outcome, run);
      update.check(
        run
          ? await runChained(pool, update.text, update.params, namedStatements)
          : (await pool.query(update.text, update.params.values)).rowCount,
      );
      countToolCall(outcome.status);
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
          alone = finishAlone({ threadId, callId, attempt }, valid, run);
          return { text: alone.text, values: alone.params.values };
        },
        check: (result) => alone?.check(result.rowCount),
        payload,
      });
      countToolCall(valid.status);
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

    async markTask(threadId: string, callId: string, attempt: number, taskId: string): Promise<void> {
      requireThreadId(threadId);
      const result = await pool.query(
        `${IDEMPOTENT}update ${table} set task_id = $4 where thread_id = $1 and call_id = $2 and attempt = $3`,
        [threadId, callId, attempt, taskId],
      );
      if (result.rowCount !== 1)
        throw new InvariantError("illegal_transition", `ledger has no attempt ${attempt} of call ${callId}`);
    },

    async list(threadId: string): Promise<LedgerRow[]> {
      await threadStatements?.settle(threadId);
      const result = await pool.query<StoredRow>(
        `select ${LEDGER_COLUMN_LIST} from ${table} where thread_id = $1 order by started_at, call_id, attempt`,
        [threadId],
      );
      return result.rows.map(toLedgerRow);
    },

    async latest(threadId: string, callId: string): Promise<LedgerRow | undefined> {
      await threadStatements?.settle(threadId);
      const result = await pool.query<StoredRow>(
        `select ${LEDGER_COLUMN_LIST} from ${table} where thread_id = $1 and call_id = $2 order by attempt desc limit 1`,
        [threadId, callId],
      );
      const first = result.rows[0];
      return first === undefined ? undefined : toLedgerRow(first);
    },
  };
}
