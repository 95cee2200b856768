/**
 * What the nodes need from the outside world, behind one interface so tests
 * and entry points can supply their own. Resources are obtained lazily on
 * first use, never at import time.
 */
import type { Principal } from "./auth/principal.js";
import type { Budgets } from "./env.js";
import type { ToolHost } from "./mcp/tool-host.js";
import type { Planner } from "./planners/planner.js";
import type { ReviewPolicy } from "./policy/config.js";
import type { PolicyEngine } from "./policy/engine.js";
import type { ApprovalStore, ContextProvider, LedgerStore } from "./ports.js";
import type { AuditStore } from "./audit/events.js";
import type { SaveHolding } from "./checkpoint/checkpointer.js";
import type { TaskWaitStore } from "./stores/task-wait-store.js";

export interface Host {
  budgets: Budgets;
  tools(): Promise<ToolHost>;
  planner(): Promise<Planner>;
  ledger(): Promise<LedgerStore>;
  approvals(): Promise<ApprovalStore>;
  audit(): Promise<AuditStore>;
  /**
   * The checkpointer the graphs run on, to declare which saves may be held
   * (src/graph/save-holding.ts). Absent: nothing is declared, every save is written at once.
   */
  saveHolding?(): Promise<SaveHolding>;
  /**
   * Where a task write's wait goes when the run does not hold a worker for it (a poller on every instance finishes
   * it: src/server/crons/task-waits.ts). Absent (no poller runs, e.g. the CLI): the run polls the task itself.
   */
  taskWaits?(): Promise<TaskWaitStore>;
  /** Who decides reviews, per risk (from the config). */
  reviewPolicy(): Promise<ReviewPolicy>;
  /** The engine behind the `authorized` check (config `policy.engine`); the built-in one when absent. */
  policyEngine?(): Promise<PolicyEngine>;
  /**
   * A principal's permissions as they are now: the principal directory is
   * read again, so a scope revoked while an approval waited is gone at
   * execution. A user the directory does not list keeps what was verified.
   */
  currentPrincipal(principal: Principal): Promise<Principal>;
  /** Domain context read once at the start of a run (e.g. a course outline), by name. */
  contextProviders: readonly ContextProvider[];
  /** Milliseconds since the epoch; injectable for deadline tests. */
  now(): number;
}

/** Memoizes an async factory so concurrent first calls share one result; a failure is not cached. */
export function lazy<T>(factory: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= factory().catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}
