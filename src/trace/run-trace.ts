/**
 * One run's timeline, assembled from what Postgres holds: the checkpoint
 * history (each node's writes, in order, with the checkpoint's time), the
 * ledger (every execution attempt), the approval records and the run's start
 * record. Pure: the reader (`read-trace.ts`) does the I/O, this file only
 * orders and summarizes, so it is tested on recorded inputs.
 *
 * Nothing here re-derives a decision: every entry quotes what a node wrote
 * (its check, code, offer) or what a store recorded.
 */
import type { ApprovalRecord } from "../ports.js";
import type { LedgerRow } from "../state/ledger.js";
import { errorClassOf, isToolErrorCode } from "../errors.js";
import { sumUsage, ZERO_USAGE, type Usage, type UsageUpdate } from "../policy/usage.js";
import type {
  NodeStep,
  TraceInputs,
  PlanEntry,
  DecisionEntry,
  ApprovalEntry,
  ExecutionEntry,
  ObserveEntry,
  TraceEntry,
  RunTrace,
} from "./trace-entries.js";

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const text = (value: unknown): string | null => (typeof value === "string" ? value : null);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const count = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0);

/** The run id a step worked for: the run it wrote (plan starts a run), else the run in the state it started from. */
function runOfStep(step: NodeStep, previousRun: string | null): string | null {
  const written = isObject(step.writes?.["run"]) ? text(step.writes["run"]["run_id"]) : null;
  return written ?? previousRun;
}

/** The steps of one run, each with the run id it belongs to decided by the state it ran in. */
export function stepsOfRun(steps: readonly NodeStep[], runId: string, initialRun: string | null = null): NodeStep[] {
  const mine: NodeStep[] = [];
  let current = initialRun;
  for (const step of steps) {
    current = runOfStep(step, current);
    if (current === runId) mine.push(step);
  }
  return mine;
}

/** LangChain's stored message (`{lc, type, id, kwargs}`) or a plain object: its fields. */
function messageFields(message: unknown): Json {
  if (!isObject(message)) return {};
  return isObject(message["kwargs"]) ? message["kwargs"] : message;
}

function modelOf(writes: Json): string | null {
  for (const message of list(writes["messages"])) {
    const metadata = messageFields(message)["response_metadata"];
    if (isObject(metadata)) {
      const name = text(metadata["model_name"]) ?? text(metadata["model"]);
      if (name) return name;
    }
  }
  return null;
}

function verdictOf(value: unknown): string {
  if (!isObject(value)) return "none";
  const type = text(value["type"]) ?? "none";
  return type === "error" ? `error:${text(value["code"]) ?? "unknown"}` : type;
}

function planEntry(step: NodeStep, writes: Json): PlanEntry {
  const usage = isObject(writes["usage"]) ? writes["usage"] : {};
  const offer = isObject(writes["tool_offer"]) ? writes["tool_offer"] : {};
  const run = isObject(writes["run"]) ? writes["run"] : {};
  return {
    kind: "plan",
    node: step.node,
    at: step.started_at,
    ended_at: step.ended_at,
    turn: count(run["turn"]),
    model: modelOf(writes),
    usage: {
      model_calls: count(usage["model_calls"]),
      input_tokens: count(usage["input_tokens"]),
      output_tokens: count(usage["output_tokens"]),
      cost_usd: count(usage["cost_usd"]),
    },
    offered: list(offer["offered"]).filter((name): name is string => typeof name === "string"),
    withheld: list(offer["withheld"])
      .filter(isObject)
      .map((item) => ({ tool: text(item["tool"]) ?? "", reason: text(item["reason"]) ?? "" })),
    proposed: list(writes["proposals"])
      .filter(isObject)
      .map((proposal) => ({ call_id: text(proposal["call_id"]) ?? "", tool: text(proposal["name"]) ?? "" })),
    verdict: verdictOf(writes["verdict"]),
    context: contextOf(offer["context"]),
  };
}

function contextOf(value: unknown): PlanEntry["context"] {
  if (!isObject(value)) return null;
  return {
    tokens: count(value["tokens"]),
    compacted_through: count(value["compacted_through"]),
    compacted_results: count(value["compacted_results"]),
    compactions: count(value["compactions"]),
  };
}

function decisionEntries(step: NodeStep, writes: Json): DecisionEntry[] {
  const node = step.node === "human_review" ? "human_review" : "authorize";
  return list(writes["decisions"])
    .filter(isObject)
    .map((decision) => {
      const type = text(decision["type"]);
      const outcome = type === "deny" ? "deny" : type === "review" ? "review" : "allow";
      return {
        kind: "decision" as const,
        at: step.ended_at ?? step.started_at,
        node,
        call_id: text(decision["call_id"]) ?? "",
        tool: text(decision["tool"]) ?? "",
        outcome,
        check: outcome === "deny" ? text(decision["check"]) : outcome === "review" ? "review" : null,
        code: text(decision["code"]),
        message: text(decision["message"]),
        arguments: isObject(decision["model_args"]) ? decision["model_args"] : null,
        ...policiesOf(decision),
      };
    });
}

function policiesOf(decision: Json): { policies?: string[] } {
  const policies = decision["policies"];
  if (!Array.isArray(policies)) return {};
  return { policies: policies.filter((id): id is string => typeof id === "string") };
}

/** The termination reason observe wrote, if it ended the run. */
function terminationOf(writes: Json): RunTrace["termination"] {
  const reason = writes["termination_reason"];
  if (!isObject(reason)) return null;
  return {
    code: text(reason["code"]) ?? "",
    detail: text(reason["detail"]) ?? "",
    turn: typeof reason["turn"] === "number" ? reason["turn"] : null,
    budget: text(reason["budget"]),
  };
}

function observeEntry(step: NodeStep, writes: Json): ObserveEntry {
  const reason = terminationOf(writes);
  return {
    kind: "observe",
    at: step.started_at,
    ended_at: step.ended_at,
    evidence_refs: list(writes["evidence"])
      .filter(isObject)
      .map((item) => text(item["ref"]) ?? "")
      .filter((ref) => ref !== ""),
    termination: reason ? { code: reason.code, detail: reason.detail } : null,
  };
}

function executionEntry(row: LedgerRow): ExecutionEntry {
  return {
    kind: "execution",
    at: row.started_at,
    ended_at: row.finished_at,
    call_id: row.call_id,
    tool: row.tool,
    server: row.server,
    risk: row.risk,
    attempt: row.attempt,
    status: row.status,
    error_code: row.error_code,
    error_class: row.error_code && isToolErrorCode(row.error_code) ? errorClassOf(row.error_code) : null,
    elapsed_ms: row.elapsed_ms,
    approved_by: row.approved_by ?? null,
    reconciles: row.reconciles ?? null,
    ...(row.task_id ? { task_id: row.task_id } : {}),
  };
}

function approvalEntry(record: ApprovalRecord): ApprovalEntry {
  return {
    kind: "approval",
    at: record.decided_at,
    call_id: record.call_id,
    tool: record.tool,
    outcome: record.outcome,
    approver: record.approver,
    version: record.version,
    fingerprint: record.fingerprint,
  };
}

/** Orders by time; entries at the same instant keep the order they were produced in (plan before its decisions). */
function byTime(entries: TraceEntry[]): TraceEntry[] {
  return entries
    .map((entry, index) => ({ entry, index, at: Date.parse(entry.at) }))
    .sort((a, b) => (a.at === b.at || Number.isNaN(a.at) || Number.isNaN(b.at) ? a.index - b.index : a.at - b.at))
    .map(({ entry }) => entry);
}

/** Nodes that decide, run and observe; every other step plans (the agent's plan, the workflow's steps) and may call a model. */
export const CONTROL_NODES: ReadonlySet<string> = new Set(["authorize", "human_review", "execute", "observe"]);
const PLAN_FIELDS = ["run", "tool_offer", "verdict", "proposals"];

/** A step that wrote what plan owns: the agent's plan node, or a step of the fixed workflow. */
function isPlanStep(node: string, writes: Json): boolean {
  return node === "plan" || (!CONTROL_NODES.has(node) && PLAN_FIELDS.some((field) => field in writes));
}

function earliest(at: string, other: string | undefined): string {
  return other !== undefined && Date.parse(other) < Date.parse(at) ? other : at;
}

export function assembleTrace(inputs: TraceInputs): RunTrace {
  const { origin } = inputs;
  const steps = stepsOfRun(inputs.steps, origin.run_id);
  const entries: TraceEntry[] = [];
  let usage: Usage = ZERO_USAGE;
  let request: string | null = null;
  let status: string | null = null;
  let termination: RunTrace["termination"] = null;
  const evidence = new Set<string>();
  /** The latest outcome per call. */
  const outcomes = new Map<string, DecisionEntry["outcome"]>();
  for (const step of steps) {
    const writes = step.writes;
    if (!writes) continue;
    if (isObject(writes["usage"])) usage = sumUsage(usage, writes["usage"] as UsageUpdate);
    const statuses = list(writes["status"]).concat(typeof writes["status"] === "string" ? [writes["status"]] : []);
    const last = statuses.at(-1);
    if (typeof last === "string") status = last;
    if (isPlanStep(step.node, writes)) {
      const run = isObject(writes["run"]) ? writes["run"] : {};
      request ??= text(run["request"]);
      entries.push(planEntry(step, writes));
    } else if (step.node === "authorize") {
      const decided = decisionEntries(step, writes);
      for (const entry of decided) outcomes.set(entry.call_id, entry.outcome);
      entries.push(...decided);
    } else if (step.node === "human_review") {
      // human_review restates every decision of the step; only those of calls that were waiting for a human are news.
      const decided = decisionEntries(step, writes).filter((entry) => outcomes.get(entry.call_id) === "review");
      for (const entry of decided) outcomes.set(entry.call_id, entry.outcome);
      entries.push(...decided);
    } else if (step.node === "observe") {
      const entry = observeEntry(step, writes);
      for (const ref of entry.evidence_refs) evidence.add(ref);
      termination = terminationOf(writes) ?? termination;
      entries.push(entry);
    }
  }
  const ledger = inputs.ledger.filter((row) => row.run_id === origin.run_id);
  entries.push(...ledger.map(executionEntry));
  entries.push(...inputs.approvals.filter((record) => record.run_id === origin.run_id).map(approvalEntry));
  const last = steps.at(-1);
  return {
    run_id: origin.run_id,
    thread_id: origin.thread_id,
    owner: origin.owner,
    graph_id: origin.graph_id,
    api_runs: origin.api_runs,
    request,
    // plan stamps the run's start record as it begins; the checkpoint it started from can be a few ms older.
    started_at: earliest(origin.started_at, steps[0]?.started_at),
    ended_at: termination ? (last?.ended_at ?? last?.started_at ?? null) : null,
    status,
    timeline: byTime(entries),
    nodes: steps.map((step) => ({ node: step.node, started_at: step.started_at, ended_at: step.ended_at })),
    evidence_refs: [...evidence],
    usage,
    termination,
    ...(origin.labels ? { labels: origin.labels } : {}),
  };
}
