/**
 * Running one allowed call (DESIGN §6, §9): its first settlement assumes the
 * ledger holds no rows for it (no read; the first insert checks), and a call
 * an earlier execution left rows for (a crash, a replay) is recovered from
 * them: rows still `running` are closed (`outcome_unknown` for a write that
 * may have been sent, else `abandoned`), the execute stage checks the call
 * again (a write already sent only for being still listed), and a read runs
 * (src/execution/run-read.ts) or a write is sent or reconciled
 * (src/execution/run-write.ts).
 */
import { InvariantError } from "../errors.js";
import { decideExecution } from "../policy/decide.js";
import type { Denial } from "../policy/decision.js";
import type { CallResult } from "../state.js";
import type { LedgerRow } from "../state/ledger.js";
import { type Allowed, CallJournal } from "./call-journal.js";
import { type ExecuteContext, failure, idempotencyKeyOf, type Settled, settled, success } from "./call-outcome.js";
import { runRead } from "./run-read.js";
import { runWrite } from "./run-write.js";

/** Runs one allowed call with its retries and reconciliation; returns its result and the ledger rows it wrote. */
export async function runCall(
  action: Allowed,
  context: ExecuteContext,
): Promise<{ result: CallResult; denial?: Denial; rows: LedgerRow[] }> {
  // Almost always the call has no rows yet: settle it as such, with no read; its first insert checks.
  const fresh = new CallJournal(context, action, [], true);
  const first = await settleCall(action, context, fresh, []);
  if (first.kind === "settled") return { ...withoutKind(first), rows: fresh.list() };
  // An earlier execution of this call left rows (it crashed, or was replayed): recover from them.
  const history = (await context.ledger.list(context.threadId)).filter((row) => row.call_id === action.call_id);
  const journal = new CallJournal(context, action, history);
  const recovered = await settleCall(action, context, journal, history);
  if (recovered.kind !== "settled")
    throw new InvariantError("ledger_order", "a journal that read its history found more history");
  return { ...withoutKind(recovered), rows: journal.list() };
}

function withoutKind(outcome: Extract<Settled, { kind: "settled" }>): { result: CallResult; denial?: Denial } {
  return outcome.denial ? { result: outcome.result, denial: outcome.denial } : { result: outcome.result };
}

async function settleCall(
  action: Allowed,
  context: ExecuteContext,
  journal: CallJournal,
  history: readonly LedgerRow[],
): Promise<Settled> {
  // A row still `running` belongs to an execution that died mid-call: we never saw its outcome.
  const recovered: LedgerRow[] = [];
  const taskTool = context.decide.catalog.find(action.tool);
  for (const row of history) {
    if (row.status !== "running") continue;
    // A write its server runs as a task, whose id was recorded: ask the task, do not reconcile blind.
    if (row.task_id !== undefined && taskTool?.contract.task) {
      // Its send was counted by an execution that never returned its usage (it paused on the task, or died).
      context.started.count += 1;
      const resumed = await journal.resumeTask(taskTool, row);
      if (resumed.outcome.ok) return settled(success(action, resumed.outcome.text, resumed.outcome.structured));
      if (resumed.row.status === "failed")
        return settled(failure(action, resumed.outcome.code, resumed.outcome.message));
      recovered.push(resumed.row);
      continue;
    }
    // A write whose request never left (its row still says `sent: false`) has no unknown effect: it was not a send.
    const unknown = row.risk !== "read" && row.sent !== false;
    recovered.push(
      await journal.finish(row, {
        status: unknown ? "outcome_unknown" : "abandoned",
        error_code: unknown ? "outcome_unknown" : null,
        finished_at: new Date(context.now()).toISOString(),
        elapsed_ms: null,
      }),
    );
  }
  // Sends are the attempts that may have reached the server: not a refusal, not an intent row that never left.
  const sends = history.filter(
    (row) => row.reconciles == null && row.tool === action.tool && row.status !== "denied" && row.sent !== false,
  );
  // A write already sent is settled by reconciliation whatever changed since; anything else is checked again.
  const writeSent = action.risk !== "read" && sends.length > 0;
  const checked = decideExecution(action, context.decide, writeSent ? "still_listed" : "execute");
  if (!checked.ok) {
    const { denial } = checked;
    const tool = context.decide.catalog.find(action.tool);
    if (tool) {
      const refused = await journal.refuse(tool, action.fingerprint, idempotencyKeyOf(tool, action), denial);
      if (refused.kind === "history_found") return refused;
    }
    return settled(failure(action, denial.code, denial.message), denial);
  }
  const tool = checked.tool;
  if (action.risk === "read") return runRead(action, tool, journal);

  const key = idempotencyKeyOf(tool, action);
  // An earlier execution sent this write and its result never reached the state: ask, do not resend.
  const lastSend = sends.at(-1);
  const unknown = lastSend ? (recovered.find((row) => row.attempt === lastSend.attempt) ?? lastSend) : undefined;
  return runWrite(action, tool, context, journal, key, unknown, sends.length);
}
