/**
 * The ports of the control plane: the interfaces the nodes and the host use
 * and other rooms implement (the stores in Postgres or in memory, a domain's
 * context provider). Types only, beside `host.ts`, which hands them out; no
 * implementation lives here.
 *
 * - `LedgerStore`: the effect ledger's rows, durably (DESIGN §6, §9).
 * - `ApprovalStore`: the approval record (DESIGN §8, §9).
 * - `RunOrigin`: a run's start as the trace store finds it (the trace reads it).
 * - `ContextProvider`: the seam through which a domain adds context to a run
 *   without the control plane knowing the domain.
 */
import type { Principal } from "./auth/principal.js";
import type { ToolHost } from "./mcp/tool-host.js";
import type { CatalogTool } from "./policy/contracts.js";
import type { ApprovalOutcome } from "./policy/decision.js";
import type { RunStart } from "./audit/chain.js";
import type { DomainContext, PendingQuestion } from "./state/domain-context.js";
import type { LedgerOutcome, LedgerRow } from "./state/ledger.js";

/** Durable ledger, keyed by thread. Implemented in the ledger store (`createLedgerStore`). */
export interface LedgerStore {
  /** Inserts a `running` row. Fails if (thread, call_id, attempt) exists. With `run`, the row is hashed into its audit chain. */
  begin(threadId: string, row: LedgerRow, run?: RunStart): Promise<void>;
  /**
   * Inserts the `running` (or `denied`) row of a call's FIRST attempt unless
   * the thread already has a row for that call, in one statement: false means
   * an earlier execution left rows (a crash, a replay), and the caller must
   * read them (`list`) and recover instead. So a fresh call costs no read.
   */
  beginFirst(threadId: string, row: LedgerRow, run?: RunStart): Promise<boolean>;
  /** Records how an attempt ended; again when a status check settles an `outcome_unknown` write. With `run`, as for `begin`. */
  finish(threadId: string, callId: string, attempt: number, outcome: LedgerOutcome, run?: RunStart): Promise<void>;
  /**
   * `finish` for a READ attempt's outcome, which commits after this
   * returns: it is held for the thread's next statement (its next intent row
   * carries it; a checkpoint save, audit record or ledger read (`list`,
   * `latest`) sends it first; with none of these, the write-ahead unit's idle
   * sweep does), and that statement fails if it did. Until it
   * commits the row reads `running`, as a crash right after the call leaves
   * it, and recovery re-runs a read found so. A store without it is finished with `finish`.
   */
  finishSoon?(threadId: string, callId: string, attempt: number, outcome: LedgerOutcome, run?: RunStart): Promise<void>;
  /**
   * Marks a write attempt as sent (`sent = true`), durably, just before its
   * request leaves: one statement, repeatable. A store without it leaves
   * writes as possibly sent (recovery then asks the status tool).
   */
  markSent?(threadId: string, callId: string, attempt: number): Promise<void>;
  /** Records the task id a write's server answered with (`task_id`), durably, before the task is polled. */
  markTask?(threadId: string, callId: string, attempt: number, taskId: string): Promise<void>;
  /** Every row of a thread, oldest first. */
  list(threadId: string): Promise<LedgerRow[]>;
  /** The newest attempt for a call, if any. */
  latest(threadId: string, callId: string): Promise<LedgerRow | undefined>;
}

/**
 * The approval record: one row per decided review, bound to the action
 * (`action_id`, version, fingerprint), the run, and the authenticated
 * approver. Written by human_review before it returns, so the record exists
 * before any approved effect starts. Replays of the same decision (a resumed
 * node re-running) do not add rows.
 */
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

/**
 * A domain's context provider: at the start of a run, plan asks each provider
 * once, as the run's owner, and keeps what it returns in `state.run.context`
 * under the provider's name. Planners read it (the rules planner by name; the
 * model planner only the fenced `model_note`). A provider reads through the
 * tool host, so servers check the caller again; it never widens what the run
 * may do.
 */
export interface ContextProvider {
  /** Key in `state.run.context`, e.g. `notes.course`. */
  name: string;
  /** Undefined when the request is not one this provider serves. */
  load(input: ContextProviderInput): Promise<DomainContext | undefined>;
  /** When a run on `request` ended `needs_human`: the missing facts this domain asked for, or undefined when it asked for none. */
  pendingQuestion?(input: {
    request: string;
    reason: string;
  }): Pick<PendingQuestion, "missing" | "request"> | undefined;
  /** The next message read as the answer to `pending`: the completed request, or undefined when it answers nothing (a new request). */
  readAnswer?(pending: PendingQuestion, message: string): string | undefined;
}

export interface ContextProviderInput {
  tools: ToolHost;
  /** This step's effective set: a provider may read only through tools offered to the owner. */
  offered: readonly CatalogTool[];
  request: string;
  principal: Principal;
  threadId: string;
  /** The run's clock at its start (milliseconds since the epoch): what "today" means for the request. */
  now: number;
  signal?: AbortSignal | undefined;
}

/** Where the run was started, and by whom (the audit chain's start record, or the API's run row). */
export interface RunOrigin {
  run_id: string;
  thread_id: string;
  owner: string;
  started_at: string;
  /** API runs that worked on this run (a start and its resumes), oldest first. */
  api_runs: string[];
  /** The graph that ran it, when the API recorded one. */
  graph_id: string | null;
  /** The client's labels of its API runs (`config.tags`, `config.run_name`, metadata), when the API recorded them. */
  labels?: RunLabels | undefined;
}

/** A run's labels as its client set them: tags, a name and metadata (the server's keys already dropped). */
export interface RunLabels {
  tags: string[];
  run_name: string | null;
  metadata: Record<string, unknown>;
}
