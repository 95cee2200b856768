/**
 * Audit events (DESIGN §9): what a node decided that a reader of the run
 * must be able to find later without opening checkpoints: each denied
 * call (authorize, human_review, execute), how each run ended (observe) and where a secret was
 * redacted (secrets/redaction.ts: plan, human_review, the tool host). Effects are in the
 * ledger, review decisions in the approval record. One event per
 * (thread, run, kind, subject): a node that runs again after a crash does
 * not add a second one. Each event is a link of its run's hash chain.
 */
import type { Denial, RecordedDenial, Stage } from "../policy/decision.js";
import type { RunStart } from "./chain.js";

/**
 * Kinds a node records. The chain adds `ledger` and `approval` link events
 * (src/audit/chain.ts), written by the ledger and approval stores.
 */
export const AUDIT_KINDS = ["denied", "run_ended", "secret_redacted", "elicited"] as const;
export type AuditKind = (typeof AUDIT_KINDS)[number];

export interface AuditEvent {
  thread_id: string;
  run_id: string;
  kind: AuditKind;
  /** The call_id for a denial; "" for run-level events. */
  subject: string;
  /** The node that wrote it. */
  node: "plan" | "authorize" | "human_review" | "execute" | "observe";
  /** The principal the run acts for. */
  actor: string;
  /** A denial's error code, or the termination reason's code. */
  code: string;
  tool: string | null;
  detail: string;
  at: string;
}

export interface AuditStore {
  /** With `run`, each event is appended to that run's audit chain. */
  record(events: readonly AuditEvent[], run?: RunStart): Promise<void>;
  list(threadId: string): Promise<AuditEvent[]>;
}

/**
 * The one helper every node records its denials with: each denial becomes a
 * `denied` audit event (idempotent per thread, run, kind and call) and an
 * entry of the state's `denials` field, which the node returns as its write.
 */
export async function recordDenials(
  store: AuditStore,
  denied: readonly Denial[],
  at: {
    thread_id: string;
    run_id: string;
    actor: string;
    at: string;
    node: "authorize" | "human_review" | "execute";
    stage: Stage;
    run?: RunStart | undefined;
  },
): Promise<RecordedDenial[]> {
  if (denied.length === 0) return [];
  await store.record(
    denied.map((denial) => ({
      thread_id: at.thread_id,
      run_id: at.run_id,
      kind: "denied" as const,
      subject: denial.call_id,
      node: at.node,
      actor: at.actor,
      code: denial.code,
      tool: denial.tool,
      detail: `${denial.check}${denial.withheld ? ` (${denial.withheld})` : ""}: ${denial.message}`,
      at: at.at,
    })),
    at.run,
  );
  return denied.map((denial) => ({ ...denial, run_id: at.run_id, stage: at.stage }));
}
