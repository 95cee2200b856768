/**
 * The ledger's statements, built with their parameters: a row's insert, an
 * attempt's outcome update, and either one as a chained write (the row and
 * its audit-chain link in one statement: audit-chain-store.ts). Pure text;
 * ledger-store.ts sends them.
 */
import { Params } from "../db/sql-params.js";
import { InvariantError } from "../errors.js";
import type { RunStart } from "../audit/chain.js";
import { type LedgerOutcome, type LedgerRow, LedgerRowSchema } from "../state/ledger.js";
import { type ChainedWrite, chainedStatement, rowLink } from "./audit-chain-store.js";
import { LEDGER_COLUMN_LIST, LEDGER_COLUMNS } from "./ledger-columns.js";

/** What `finish` may change of a row (built once: zod compiles a schema's validator on first use). */
export const OutcomeSchema = LedgerRowSchema.pick({
  status: true,
  error_code: true,
  finished_at: true,
  elapsed_ms: true,
  reconciled_by: true,
});

/** An attempt's outcome update (its values in `params`) and the check of how many rows it changed. */
export interface FinishStatement {
  sql: string;
  params: Params;
  check(changed: number | null): void;
}

export function requireThreadId(threadId: string): void {
  if (threadId.length === 0) throw new InvariantError("illegal_transition", "ledger thread id must not be empty");
}

/** A ledger write as a chained write: its CTE (`name as (… returning *)`) and its row's link. */
export function ledgerChainedWrite(params: Params, run: RunStart, name: string, write: string): ChainedWrite {
  return {
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
  };
}

/** `write` with its audit link, as one statement (`schema`'s chain tables). */
export function chainedLedgerWrite(schema: string, params: Params, run: RunStart, write: string): string {
  return chainedStatement(schema, params, run, ledgerChainedWrite(params, run, "written", write));
}

/** The INSERT of `row` (with `onlyFirst`: unless the call already has one), its values added to `params`. */
export function insertSql(
  table: string,
  params: Params,
  threadId: string,
  valid: LedgerRow,
  run: RunStart | undefined,
  onlyFirst: boolean,
): string {
  const thread = params.add(threadId);
  const values = [thread];
  let call = "";
  for (const column of LEDGER_COLUMNS) {
    // A row without a run id takes the run's; every other absent value is null.
    const value = column.name === "run_id" ? (valid.run_id ?? run?.run_id) : valid[column.name];
    const placeholder = params.add(value ?? null, column.type);
    if (column.name === "call_id") call = placeholder;
    values.push(placeholder);
  }
  const guard = onlyFirst
    ? ` where not exists (select 1 from ${table} where thread_id = ${thread} and call_id = ${call})`
    : "";
  return `insert into ${table} (thread_id, ${LEDGER_COLUMN_LIST}) select ${values.join(", ")}${guard}`;
}

/** The outcome update of one attempt (its values added to `params`) and the check of what it changed. */
export function finishStatement(
  table: string,
  key: { threadId: string; callId: string; attempt: number },
  outcome: LedgerOutcome,
  params = new Params(),
  validated = false,
): FinishStatement {
  const { threadId, callId, attempt } = key;
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
    check: (changed) => {
      if (changed !== 1)
        throw new InvariantError(
          "illegal_transition",
          `ledger has no attempt ${attempt} of call ${callId} in thread ${threadId}`,
        );
    },
  };
}
