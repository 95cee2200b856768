/**
 * The ledger side of executing one call: the context a call runs in, and the
 * journal that writes each attempt's row before anything external starts and
 * updates it after. Used by the execute node (src/nodes/execute.ts).
 */
import type { Principal } from "../auth/principal.js";
import type { CatalogTool } from "../policy/contracts.js";
import type { NormalizedResult } from "../mcp/normalize.js";
import type { ElicitationRecord } from "../elicitation/client.js";
import type { ToolHost } from "../mcp/tool-host.js";
import type { Decision, Denial } from "../policy/decision.js";
import type { LedgerOutcome, LedgerRow } from "../state/ledger.js";
import type { LedgerStore } from "../ports.js";
import type { RunStart } from "../audit/chain.js";
import { effectUnknown } from "./reconcile.js";
import { isTaskWaiting, waitedTask } from "./task-wait.js";

export type Allowed = Extract<Decision, { type: "allow" }>;

/** The least time a resumed task gets (past its deadline): one `tasks/get` still settles a task that ended. */
const RESUMED_LOOK_MS = 5_000;

export interface CallContext {
  /** The host's clock (milliseconds since the epoch; injectable for deadline tests). */
  now: () => number;
  tools: ToolHost;
  ledger: LedgerStore;
  threadId: string;
  runId: string;
  /** The run's start record: each ledger write is a link of its audit chain. */
  run: RunStart | undefined;
  /** The run's owner with current permissions: the principal of every call. */
  principal: Principal;
  signal: AbortSignal | undefined;
  /** Attempts this node may still start (the run's tool-call budget); status checks count too. */
  budget: { left: number };
  /** Attempts this node started (what usage.tool_calls adds). */
  started: { count: number };
  /** A task still working after its first poll is left to the poller of task waits (task-wait.ts). */
  detachTasks?: boolean | undefined;
}

/**
 * What a journal that assumed a call had no ledger rows yet says at its first
 * insert when the ledger had some: nothing was written and nothing external
 * has happened, and the call is settled again from the rows it has (runCall).
 */
export const HISTORY_FOUND = { kind: "history_found" } as const;
export type HistoryFound = typeof HISTORY_FOUND;

/** How starting an attempt ended: its ledger row written (and the call made), no budget left, or history found. */
export type Started<T> = T | { kind: "no_budget" } | HistoryFound;

/**
 * The ledger rows of one call as this node leaves them: every attempt it began
 * or finished, each in its latest version, in first-touched order.
 */
export class CallJournal {
  private readonly rows = new Map<number, LedgerRow>();
  next: number;

  /** `assumedFresh`: no history was read; the first insert checks that there is none. */
  constructor(
    private readonly context: CallContext,
    readonly action: Allowed,
    history: readonly LedgerRow[],
    private readonly assumedFresh = false,
  ) {
    this.next = history.reduce((highest, row) => Math.max(highest, row.attempt), 0) + 1;
  }

  /** Writes a new attempt's first row (before anything external); false when the fresh-call assumption failed. */
  private async insert(row: LedgerRow): Promise<boolean> {
    const { ledger, threadId, run } = this.context;
    if (!this.assumedFresh || row.attempt !== 1) {
      await ledger.begin(threadId, row, run);
      return true;
    }
    return ledger.beginFirst(threadId, row, run);
  }

  /** Starts an attempt: reserves budget, writes the `running` row before the external call. */
  async begin(
    fields: Pick<LedgerRow, "tool" | "server" | "risk" | "fingerprint" | "idempotency_key"> & {
      reconciles?: number;
      sent?: boolean;
    },
  ): Promise<Started<{ kind: "row"; row: LedgerRow }>> {
    if (this.context.budget.left <= 0) return { kind: "no_budget" };
    this.context.budget.left -= 1;
    this.context.started.count += 1;
    const row: LedgerRow = {
      call_id: this.action.call_id,
      attempt: this.next,
      ...fields,
      ...this.identity(),
      status: "running",
      error_code: null,
      started_at: new Date(this.context.now()).toISOString(),
      finished_at: null,
      elapsed_ms: null,
    };
    let inserted = false;
    try {
      inserted = await this.insert(row);
    } finally {
      // Nothing was started: give the reservation back.
      if (!inserted) {
        this.context.budget.left += 1;
        this.context.started.count -= 1;
      }
    }
    if (!inserted) return HISTORY_FOUND;
    this.next += 1;
    this.rows.set(row.attempt, row);
    return { kind: "row", row };
  }

  /** The run, owner and approver every row of this call carries. */
  identity(): Pick<LedgerRow, "run_id" | "owner" | "approved_by"> {
    const approver = this.action.review?.approver;
    return {
      ...(this.context.runId ? { run_id: this.context.runId } : {}),
      owner: this.context.principal.user_id,
      ...(approver ? { approved_by: approver } : {}),
    };
  }

  /** Records a call refused at execution (its denial's code): one row, nothing called, no budget spent. */
  async refuse(
    tool: CatalogTool,
    fingerprint: string,
    idempotencyKey: string | null,
    denial: Denial,
  ): Promise<Started<{ kind: "refused" }>> {
    const now = new Date(this.context.now()).toISOString();
    const row: LedgerRow = {
      call_id: this.action.call_id,
      attempt: this.next,
      tool: tool.name,
      server: tool.server,
      risk: tool.contract.risk,
      fingerprint,
      idempotency_key: idempotencyKey,
      status: "denied",
      error_code: denial.code,
      started_at: now,
      finished_at: now,
      elapsed_ms: 0,
      ...this.identity(),
    };
    if (!(await this.insert(row))) return HISTORY_FOUND;
    this.next += 1;
    this.rows.set(row.attempt, row);
    return { kind: "refused" };
  }

  /**
   * Records how an attempt ended (or how a status check settled it). A read's
   * outcome with `soon` may commit after this returns (LedgerStore.finishSoon).
   */
  async finish(
    row: LedgerRow,
    outcome: Partial<LedgerOutcome> & Pick<LedgerOutcome, "status" | "error_code">,
    soon = false,
  ): Promise<LedgerRow> {
    // A settled `outcome_unknown` keeps its original finish time and duration: only status, code and the link change.
    const done: LedgerRow = { ...row, ...outcome };
    const { status, error_code, finished_at, elapsed_ms } = done;
    const stored: LedgerOutcome = {
      status,
      error_code,
      finished_at,
      elapsed_ms,
      ...(done.reconciled_by ? { reconciled_by: done.reconciled_by } : {}),
    };
    const ledger = this.context.ledger;
    if (soon && row.risk === "read" && ledger.finishSoon)
      await ledger.finishSoon(this.context.threadId, row.call_id, row.attempt, stored, this.context.run);
    else await ledger.finish(this.context.threadId, row.call_id, row.attempt, stored, this.context.run);
    this.rows.set(done.attempt, done);
    return done;
  }

  /** Runs one external call inside a ledger row. */
  async attempt(
    tool: CatalogTool,
    args: Record<string, unknown>,
    fields: Pick<LedgerRow, "risk" | "fingerprint" | "idempotency_key"> & { reconciles?: number },
  ): Promise<Started<{ kind: "ran"; row: LedgerRow; outcome: NormalizedResult }>> {
    // A cancelled run starts no new external call (its node may outlive the graph's stream by a moment).
    this.context.signal?.throwIfAborted();
    // A write's row says whether its request left (LedgerRow.sent): false now, true just before the call.
    const tracked = fields.risk !== "read" && this.context.ledger.markSent !== undefined;
    const begun = await this.begin({
      tool: tool.name,
      server: tool.server,
      ...fields,
      ...(tracked ? { sent: false } : {}),
    });
    if (begun.kind !== "row") return begun;
    let row = begun.row;
    if (tracked) {
      // Durable before anything leaves: a crash up to here is a send never made (execute does not count it).
      await this.context.ledger.markSent?.(this.context.threadId, row.call_id, row.attempt);
      row = { ...row, sent: true };
      this.rows.set(row.attempt, row);
    }
    return this.call(tool, args, row);
  }

  /**
   * Settles a write its server runs as a task, found `running` with its task id after a crash: the task is
   * polled (nothing is sent) and the row finished with what it became (`outcome_unknown` when the server no
   * longer knows the task: reconciled then as any unknown outcome).
   */
  async resumeTask(tool: CatalogTool, row: LedgerRow): Promise<{ row: LedgerRow; outcome: NormalizedResult }> {
    this.rows.set(row.attempt, row);
    return this.call(tool, this.action.args, row, row.task_id);
  }

  /** Makes the external call of an attempt whose row is written, and finishes the row. */
  private async call(
    tool: CatalogTool,
    args: Record<string, unknown>,
    begun: LedgerRow,
    resume?: string,
  ): Promise<{ kind: "ran"; row: LedgerRow; outcome: NormalizedResult }> {
    let row = begun;
    const started = Date.parse(row.started_at);
    const elicited: ElicitationRecord[] = [];
    const { ledger, threadId } = this.context;
    // The task id is durable on the row before the task is polled (the same rule as the intent row).
    const recordTask = async (taskId: string): Promise<void> => {
      await ledger.markTask?.(threadId, row.call_id, row.attempt, taskId);
      row = { ...row, task_id: taskId };
      this.rows.set(row.attempt, row);
    };
    // A resumed task keeps its contract's deadline (from the send), with time for one look at it.
    const deadline = Date.parse(row.started_at) + tool.contract.timeout_ms;
    // A task still working is left to the poller (fresh, or resumed after a crash) until its deadline; past it the
    // run settles it here (a timeout, reconciled as today). The poller resumes a thread only once its task ended.
    const detach = this.context.detachTasks === true && this.context.now() < deadline;
    const timeoutMs =
      resume === undefined ? tool.contract.timeout_ms : Math.max(RESUMED_LOOK_MS, deadline - this.context.now());
    const outcome = await this.context.tools
      .call(tool, args, {
        timeoutMs,
        signal: this.context.signal,
        principal: this.context.principal,
        threadId,
        record: {
          call_id: this.action.call_id,
          run_id: this.context.runId,
          attempt: row.attempt,
          run: this.context.run,
        },
        elicited,
        ...(tool.contract.task && row.risk !== "read" ? { task: { resume, started: recordTask, detach } } : {}),
      })
      .catch((error: unknown) => {
        if (!isTaskWaiting(error)) throw error;
        throw waitedTask(row, error.taskId, error.pollAfterMs, tool.contract.timeout_ms, this.context.now());
      });
    const finished = this.context.now();
    // A write whose answer never arrived may still have been applied: that is not a failure we know of.
    const unknown = !outcome.ok && row.risk !== "read" && effectUnknown(outcome.code);
    const done = await this.finish(
      elicited.length > 0 ? { ...row, elicitation: elicited.slice(0, 64) } : row,
      {
        status: outcome.ok ? "succeeded" : unknown ? "outcome_unknown" : "failed",
        error_code: outcome.ok ? null : outcome.code,
        finished_at: new Date(finished).toISOString(),
        elapsed_ms: Math.max(0, finished - started),
      },
      true,
    );
    return { kind: "ran", row: done, outcome };
  }

  list(): LedgerRow[] {
    return [...this.rows.values()];
  }
}
