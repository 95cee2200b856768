/**
 * The approval record (DESIGN §8, §9): one row per decided review, bound to
 * the action (`action_id`, version, fingerprint), the run, and the
 * authenticated approver. Written by human_review before it returns, so the
 * record exists before any approved effect starts. Replays of the same
 * decision (a resumed node re-running) do not add rows.
 */
import type { RunStart } from "../audit/chain.js";

import type { ApprovalOutcome } from "../policy/decision.js";

export { APPROVAL_OUTCOMES, type ApprovalOutcome } from "../policy/decision.js";

export interface ApprovalRecord {
  thread_id: string;
  run_id: string;
  call_id: string;
  tool: string;
  action_id: string;
  version: number;
  /** Fingerprint of the action the reviewer was shown. */
  fingerprint: string;
  outcome: ApprovalOutcome;
  /** For an accepted edit: the fingerprint of the edited action that will run. */
  edited_fingerprint: string | null;
  /** The authenticated principal who decided (from the resume request, never its body). */
  approver: string;
  approver_tenant: string;
  /** The run's owner. */
  owner: string;
  decided_at: string;
  expires_at: string;
}

export interface ApprovalStore {
  /**
   * Inserts records; one already stored for the same (thread, action, version) is kept as it is.
   * With `run`, each new record is hashed into that run's audit chain.
   */
  record(rows: readonly ApprovalRecord[], run?: RunStart): Promise<void>;
  list(threadId: string): Promise<ApprovalRecord[]>;
}
