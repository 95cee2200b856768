/**
 * The one state schema. Every field says who owns (writes) it. Fields with a
 * single writer are last-value channels, so a second writer in the same step
 * fails loudly (INVALID_CONCURRENT_GRAPH_UPDATE); shared fields have an
 * explicit reducer. Fields that grow with the thread, or change a little
 * every turn, are delta channels with a reducer (`growing`, below); for
 * those FIELD_OWNERS and its test are what keep to one writer.
 */
import { Annotation, DeltaChannel } from "@langchain/langgraph";
import type { BaseMessage } from "@langchain/core/messages";
import type { Principal } from "./auth/principal.js";
import type { Proposal } from "./policy/contracts.js";
import type { BudgetName, Decision, RecordedDenial } from "./policy/decision.js";
import { sumUsage, ZERO_USAGE, type Usage, type UsageUpdate } from "./policy/usage.js";
import type { DomainContext, PendingQuestion } from "./state/domain-context.js";
import { mergeEvidence, type Evidence } from "./state/evidence.js";
import type { LedgerRow } from "./state/ledger.js";
import { appendTranscript, type TranscriptWrite } from "./state/transcript.js";
import { statusReducer, type RunStatus } from "./state/transitions.js";
import type { ToolErrorCode } from "./errors.js";

/** Ledger reducer: append, a row with the same (call_id, attempt) replaces the earlier one. */
export function appendLedger(current: LedgerRow[], update: LedgerRow[]): LedgerRow[] {
  const key = (row: LedgerRow) => `${row.call_id}#${row.attempt}`;
  const rows = new Map(current.map((row) => [key(row), row]));
  for (const row of update) rows.set(key(row), row);
  return [...rows.values()];
}

/**
 * Denials reducer: append-only by call_id. A call is refused once; a node that
 * runs again after a crash writes the same denial again, and the first stays.
 */
export function appendDenials(current: RecordedDenial[], update: RecordedDenial[]): RecordedDenial[] {
  const known = new Set(current.map((denial) => denial.call_id));
  const added = update.filter((denial) => {
    if (known.has(denial.call_id)) return false;
    known.add(denial.call_id);
    return true;
  });
  return added.length === 0 ? current : [...current, ...added];
}

export type TerminationCode =
  | "final_answer"
  | "abstained"
  | "needs_human"
  | "budget_exhausted"
  | "repeated_action"
  | "no_progress"
  | "planner_error"
  | "unsupported_citation"
  | "tool_failure"
  /** The API stopped the run (a client's cancel, or its server died) and a new request closed it. */
  | "cancelled";

/** Why the run stopped: machine-readable code plus the details a reader needs. */
export interface TerminationReason {
  code: TerminationCode;
  detail: string;
  budget?: BudgetName;
  /** Planner turn at which the run stopped. */
  turn: number;
}

export interface Citation {
  ref: string;
  source_id: string;
  page?: number;
  title?: string;
}

/** The structured final answer. */
export interface RunResult {
  answer: string;
  citations: Citation[];
  abstained: boolean;
}

/** The run currently being processed on this thread. */
export interface RunInfo {
  run_id: string;
  request: string;
  started_at: string;
  /** Planner turns taken in this run. */
  turn: number;
  /** user_id of the principal who started the run: every effect runs on the owner's behalf. */
  owner: string;
  /**
   * The owner as verified when the run started; `graph/owner.ts` refreshes
   * its permissions from the principal directory before use.
   */
  principal?: Principal;
  /** Domain context read once at the run's start, by provider name (see ports.ts). */
  context?: Record<string, DomainContext>;
  /** The run's candidate tools, fixed at its start (policy/effective-tools.ts `candidateTools`): the model's tools block. */
  candidates?: string[];
}

export type PlanVerdict =
  | { type: "tool_calls" }
  | { type: "final"; answer: string; citations: string[]; abstained: boolean }
  | { type: "needs_human"; reason: string }
  | { type: "error"; code: string; message: string }
  /** A code-owned step (the fixed workflow) stopped the run: a citation outside what it retrieved, or a tool that failed for good. */
  | { type: "stop"; code: Extract<TerminationCode, "unsupported_citation" | "tool_failure">; detail: string };

/** Outcome of one executed call (written by execute, read by observe). */
export type CallResult =
  | { call_id: string; tool: string; ok: true; text: string; structured: unknown }
  | {
      call_id: string;
      tool: string;
      ok: false;
      code: ToolErrorCode;
      message: string;
      /** A write whose sends are all spent, each found not applied: it never happened and will not be sent again. */
      unfinished?: true;
    };

/** Tools offered to the planner this turn, and why the others were not. */
export interface ToolOffer {
  offered: string[];
  withheld: { tool: string; reason: string }[];
  /** The planner's context this turn, when old tool results are compacted (planners/context.ts). */
  context?: { tokens: number; compacted_through: number; compacted_results: number; compactions: number };
}

/** A server the run's owner must authorize Warrant for (OAuth) before this step's calls to it can run. */
export interface PendingConnection {
  server: string;
  /** Where the owner authorizes; its `state` is sealed to the thread, the owner and the server. */
  authorization_url: string;
  expires_at: string;
  /** When the owner was first asked (the wait is excluded from the run's deadline, like a review's). */
  requested_at: string;
  /** The step's calls that wait for it. */
  call_ids: string[];
}

/** A refused resume: the same approval request is asked again with this error. */
export interface ReviewFeedback {
  code: "invalid_resume" | "approver_not_permitted";
  message: string;
  /** For `approver_not_permitted` under a policy language engine: the policies that decided (none: default deny). */
  policies?: string[];
}

/** Counters observe keeps to decide no-progress stops, per run. */
export interface Progress {
  run_id: string;
  steps_without_progress: number;
  /** Hashes of successful results seen in this run: a repeat of one is not progress. */
  seen_results: string[];
}

/**
 * Time a run spent waiting for human decisions, per reviewed call: the run's
 * deadline measures the agent's own working time, not the reviewer's.
 */
export interface ReviewWaits {
  run_id: string;
  /** call_id → ms from the approval request to the decision (the latest answer counts). */
  by_call: Record<string, number>;
}

/** Authorized action fingerprints per run, for repeat detection. */
export interface RepeatCounts {
  run_id: string;
  counts: Record<string, number>;
}

/**
 * A write to `repeats`: the counts that changed (0 takes a fingerprint out).
 * A write for another run starts that run's counts afresh.
 */
export type RepeatCountsUpdate = RepeatCounts;

/** The write that takes a run's counts from `before` to `after`. */
export function repeatCountsUpdate(
  runId: string,
  before: Readonly<Record<string, number>>,
  after: Readonly<Record<string, number>>,
): RepeatCountsUpdate {
  const counts: Record<string, number> = {};
  for (const [fingerprint, count] of Object.entries(after))
    if (!Object.hasOwn(before, fingerprint) || before[fingerprint] !== count) counts[fingerprint] = count;
  for (const fingerprint of Object.keys(before)) if (!Object.hasOwn(after, fingerprint)) counts[fingerprint] = 0;
  return { run_id: runId, counts };
}

/** Reducer for `repeats`: each write merges its changed counts into its run's. */
export function mergeRepeatCounts(
  current: RepeatCounts | null,
  writes: readonly RepeatCountsUpdate[],
): RepeatCounts | null {
  let value = current;
  for (const write of writes) {
    const counts = value !== null && value.run_id === write.run_id ? { ...value.counts } : {};
    for (const [fingerprint, count] of Object.entries(write.counts)) {
      if (count === 0) delete counts[fingerprint];
      else counts[fingerprint] = count;
    }
    value = { run_id: write.run_id, counts };
  }
  return value;
}

/** A write to `progress`: the counter, and only the result hashes new this turn. */
export type ProgressUpdate = Progress;

/** Reducer for `progress`: a write for the same run sets the counter and appends its hashes; another run's starts afresh. */
export function mergeProgress(current: Progress | null, writes: readonly ProgressUpdate[]): Progress | null {
  let value = current;
  for (const write of writes) {
    const seen =
      value !== null && value.run_id === write.run_id
        ? [...value.seen_results, ...write.seen_results]
        : [...write.seen_results];
    value = { run_id: write.run_id, steps_without_progress: write.steps_without_progress, seen_results: seen };
  }
  return value;
}

/** A write to `run`: a new run's whole record, or the next turn of the run in progress. */
export type RunUpdate = RunInfo | { run_id: string; turn: number };

/** Reducer for `run`: a whole record replaces; a turn applies to the run it names. */
export function mergeRun(current: RunInfo | null, writes: readonly (RunUpdate | null)[]): RunInfo | null {
  let value = current;
  for (const write of writes) {
    if (write === null || "started_at" in write) value = write;
    else if (value !== null && value.run_id === write.run_id) value = { ...value, turn: write.turn };
    else
      throw new Error(
        `state: turn ${write.turn} of run ${write.run_id} written over ${value === null ? "no run" : `run ${value.run_id}`}`,
      );
  }
  return value;
}

/**
 * Fields that grow with a thread, and those rewritten every turn for a small
 * change (usage, the run's turn), are `DeltaChannel`s: a checkpoint stores
 * what each step wrote, not the whole value again, and a read rebuilds the
 * value from the writes since the last full copy. A full copy is stored every
 * this many writes, which bounds what a read replays (a few hundred small
 * rows) at the price of one full copy per that many steps.
 */
const SNAPSHOT_EVERY = 500;

function growing<Value, Write>(reducer: (current: Value, writes: Write[]) => Value, initial: () => Value) {
  return new DeltaChannel<Value, Write>(reducer, { snapshotFrequency: SNAPSHOT_EVERY, initialValueFactory: initial });
}

export const AgentState = Annotation.Root({
  /** Chat transcript for the UI and the model. Owners: plan (AI turns), observe (tool results, final answer). */
  messages: growing<BaseMessage[], TranscriptWrite>(appendTranscript, () => []),
  /** Run status. Owners: every node, through state/transitions; the reducer rejects illegal transitions. */
  status: Annotation<RunStatus, RunStatus | RunStatus[]>({ reducer: statusReducer, default: () => "created" }),
  /** This turn's proposed calls. Owner: plan. */
  proposals: Annotation<Proposal[]>,
  /** Per proposal: allow / deny / review. Owners: authorize, then human_review. */
  decisions: Annotation<Decision[]>,
  /**
   * Every refused call of the thread with its run and stage, once by call_id (append-only): what the page and
   * the API list as a run's denials. Owners: authorize (proposals), human_review (answers), execute (executions).
   */
  denials: growing<RecordedDenial[], RecordedDenial[]>(
    (current, writes) => writes.reduce(appendDenials, current),
    () => [],
  ),
  /** One row per tool execution attempt. Owner: execute (append by call_id). */
  ledger: growing<LedgerRow[], LedgerRow[]>(
    (current, writes) => writes.reduce(appendLedger, current),
    () => [],
  ),
  /** Sources the run has seen, merged by ref. Owner: observe. */
  evidence: growing<Evidence[], Evidence[]>(
    (current, writes) => writes.reduce(mergeEvidence, current),
    () => [],
  ),
  /** Per-run usage, summed. Owners: plan (model calls, tokens), execute (tool calls). */
  usage: growing<Usage, UsageUpdate>(
    (current, writes) => writes.reduce(sumUsage, current),
    () => ZERO_USAGE,
  ),
  /** Why the run stopped. Owner: observe. */
  termination_reason: Annotation<TerminationReason | null>,
  /** Structured final answer. Owner: observe. */
  result: Annotation<RunResult | null>,
  /** The run in progress (id, request, start, turn); a later turn writes only its number. Owner: plan. */
  run: growing<RunInfo | null, RunUpdate | null>(mergeRun, () => null),
  /** The planner's verdict when it did not propose calls. Owner: plan. */
  verdict: Annotation<PlanVerdict | null>,
  /** Tools offered this turn and why others were withheld. Owner: plan. */
  tool_offer: Annotation<ToolOffer | null>,
  /** Authorized fingerprints per run, each write with the counts it changed. Owners: authorize; human_review (edits). */
  repeats: growing<RepeatCounts | null, RepeatCountsUpdate>(mergeRepeatCounts, () => null),
  /** Results of this turn's executed calls. Owner: execute. */
  call_results: Annotation<CallResult[]>,
  /** Servers the owner must authorize before this step's calls run (an `authorization_required` pause). Owners: authorize, human_review. */
  connect: Annotation<PendingConnection[] | null>,
  /** Why the last resume was refused (shown in the next approval request). Owner: human_review. */
  review_feedback: Annotation<ReviewFeedback | null>,
  /** Time spent waiting for reviewers in this run (excluded from the deadline). Owner: human_review. */
  review_waits: Annotation<ReviewWaits | null>,
  /** No-progress counter per run; each write carries the turn's new result hashes. Owner: observe. */
  progress: growing<Progress | null, ProgressUpdate>(mergeProgress, () => null),
  /** The question the last run ended with, for the next message to answer (graph/follow-up.ts); null when none. Owner: plan. */
  pending: Annotation<PendingQuestion | null>,
});

export type State = typeof AgentState.State;
export type Update = typeof AgentState.Update;

/** The fields each node may write. A unit test checks every node's returned keys against this. */
export const FIELD_OWNERS = {
  plan: ["messages", "status", "proposals", "usage", "run", "verdict", "tool_offer", "pending"],
  authorize: ["status", "decisions", "repeats", "denials", "connect"],
  human_review: ["status", "decisions", "repeats", "review_feedback", "review_waits", "denials", "connect"],
  execute: ["status", "ledger", "usage", "call_results", "denials"],
  observe: ["messages", "status", "evidence", "termination_reason", "result", "progress"],
} as const satisfies Record<string, readonly (keyof Update)[]>;

export type NodeName = keyof typeof FIELD_OWNERS;
/** The slice of the update a node may return. */
export type NodeUpdate<N extends NodeName> = Pick<Update, (typeof FIELD_OWNERS)[N][number]>;

export const NODES = {
  plan: "plan",
  authorize: "authorize",
  human_review: "human_review",
  execute: "execute",
  observe: "observe",
} as const satisfies Record<NodeName, NodeName>;
