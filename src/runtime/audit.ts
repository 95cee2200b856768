/**
 * Audit events (DESIGN §9): what a node decided that a reader of the run
 * must be able to find later without opening checkpoints: each denied
 * proposal (authorize) and how each run ended (observe). Effects are in the
 * ledger, review decisions in the approval record. One event per
 * (thread, run, kind, subject): a node that runs again after a crash does
 * not add a second one.
 */
import type { Denial } from "../policy/decision.js";

export const AUDIT_KINDS = ["denied", "run_ended"] as const;
export type AuditKind = (typeof AUDIT_KINDS)[number];

export interface AuditEvent {
  thread_id: string;
  run_id: string;
  kind: AuditKind;
  /** The call_id for a denial; "" for run-level events. */
  subject: string;
  /** The node that wrote it. */
  node: "authorize" | "human_review" | "execute" | "observe";
  /** The principal the run acts for. */
  actor: string;
  /** A denial's error code, or the termination reason's code. */
  code: string;
  tool: string | null;
  detail: string;
  at: string;
}

export interface AuditStore {
  record(events: readonly AuditEvent[]): Promise<void>;
  list(threadId: string): Promise<AuditEvent[]>;
}

/** Each denial of a step as an audit event (idempotent per thread, run, kind and call). */
export async function recordDenials(
  store: AuditStore,
  denied: readonly Denial[],
  at: { thread_id: string; run_id: string; actor: string; at: string; node?: "authorize" | "human_review" | "execute" },
): Promise<void> {
  if (denied.length === 0) return;
  await store.record(
    denied.map((denial) => ({
      thread_id: at.thread_id,
      run_id: at.run_id,
      kind: "denied" as const,
      subject: denial.call_id,
      node: at.node ?? "authorize",
      actor: at.actor,
      code: denial.code,
      tool: denial.tool,
      detail: `${denial.check}${denial.withheld ? ` (${denial.withheld})` : ""}: ${denial.message}`,
      at: at.at,
    })),
  );
}
