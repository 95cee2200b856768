/**
 * The tamper-evident audit chain (issue 11, item 3), its pure half: how links
 * are hashed and how a stored chain is checked. The Postgres half
 * (src/stores/audit-chain-store.ts) appends links in the same statement
 * as the row they cover, hashing with the SQL twin of `linkHash`; `verify`
 * here recomputes every hash in TypeScript from the stored column text, so a
 * changed SQL function cannot vouch for itself.
 *
 * Per run: link 0 is the hash of the run's start record (`genesisHash`);
 * each audit event carries its run-sequence number, the previous link's hash
 * and its own. Ledger and approval writes append an event of kind `ledger` /
 * `approval` whose detail is the row as written (a snapshot, column by column),
 * so a row changed afterwards differs from its latest snapshot, and a deleted
 * row leaves a snapshot without a row. The run's head (last seq and hash) is
 * kept beside the start record, so a deleted last event is caught too.
 *
 * What it does not catch: someone who rewrites a whole run consistently (every
 * hash recomputed) or deletes a run with all its rows. That needs the heads
 * anchored outside the database.
 */
import { createHash } from "node:crypto";

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** One field of hashed text: its UTF-8 length, a colon and itself; null is `~`. Unambiguous when joined. */
export function lengthPrefixed(value: string | null): string {
  return value === null ? "~" : `${Buffer.byteLength(value, "utf8")}:${value}`;
}

/** A run's start record: the first link of its chain hashes it. */
export interface RunStart {
  thread_id: string;
  run_id: string;
  /** user_id of the principal who started the run. */
  owner: string;
  /** SHA-256 (hex) of the request text: the chain commits to it without copying it. */
  request_sha256: string;
  started_at: string;
}

/** The last request hashed by {@link runStartOf}: every node of a run asks for the same one. */
let lastRequest: { text: string; sha256: string } | undefined;

function requestSha256(request: string): string {
  if (lastRequest?.text !== request) lastRequest = { text: request, sha256: sha256Hex(request) };
  return lastRequest.sha256;
}

/** The start record of a run as plan recorded it in state; undefined before a run exists. */
export function runStartOf(
  threadId: string,
  run: { run_id: string; owner: string; request: string; started_at: string } | null | undefined,
): RunStart | undefined {
  if (!run || run.run_id.length === 0) return undefined;
  return {
    thread_id: threadId,
    run_id: run.run_id,
    owner: run.owner,
    request_sha256: requestSha256(run.request),
    started_at: run.started_at,
  };
}

export function genesisHash(start: RunStart): string {
  const fields = [start.thread_id, start.run_id, start.owner, start.request_sha256, start.started_at];
  const text = `warrant-run-start|${fields.map(lengthPrefixed).join("")}`;
  // Every chained write of a run hashes the same start, as with the request above.
  if (lastGenesis?.text !== text) lastGenesis = { text, sha256: sha256Hex(text) };
  return lastGenesis.sha256;
}
let lastGenesis: { text: string; sha256: string } | undefined;

/** Kinds of audit events that are chain links for rows of another table. */
export const LINK_KINDS = { ledger: "ledger", approval: "approvals" } as const;
export type CoveredTable = (typeof LINK_KINDS)[keyof typeof LINK_KINDS];

/** Columns of a covered table, in snapshot order, and its primary key. */
export const COVERED_COLUMNS: Record<CoveredTable, { key: readonly string[]; columns: readonly string[] }> = {
  ledger: {
    key: ["thread_id", "call_id", "attempt"],
    columns: [
      "thread_id",
      "run_id",
      "call_id",
      "attempt",
      "tool",
      "server",
      "risk",
      "fingerprint",
      "idempotency_key",
      "status",
      "error_code",
      "started_at",
      "finished_at",
      "elapsed_ms",
      "reconciles",
      "reconciled_by",
      "owner",
      "approved_by",
    ],
  },
  approvals: {
    key: ["thread_id", "action_id", "version"],
    columns: [
      "thread_id",
      "action_id",
      "version",
      "run_id",
      "call_id",
      "tool",
      "fingerprint",
      "outcome",
      "edited_fingerprint",
      "approver",
      "approver_tenant",
      "owner",
      "decided_at",
      "expires_at",
    ],
  },
};

/** An audit event as hashed: every field as text (timestamps as UTC ISO with microseconds). */
export interface ChainEvent {
  thread_id: string;
  run_id: string;
  seq: number | null;
  prev_hash: string | null;
  hash: string | null;
  kind: string;
  subject: string;
  node: string;
  actor: string;
  code: string;
  tool: string | null;
  detail: string;
  at: string;
}

/** SHA-256 of the previous link and the event's fields; `audit_link_hash` in SQL computes the same. */
export function linkHash(
  prev: string,
  event: Omit<ChainEvent, "seq" | "prev_hash" | "hash"> & { seq: number },
): string {
  const fields = [
    event.thread_id,
    event.run_id,
    String(event.seq),
    event.kind,
    event.subject,
    event.node,
    event.actor,
    event.code,
    event.tool,
    event.detail,
    event.at,
  ];
  return sha256Hex(`${prev}|${fields.map(lengthPrefixed).join("")}`);
}

/** A run's stored start record and head. */
export interface ChainRun extends RunStart {
  genesis: string;
  seq: number;
  hash: string;
}

/** A row of a covered table, every column as text. */
export interface CoveredRow {
  table: CoveredTable;
  columns: Record<string, string | null>;
}

/** Where the chain is broken: the table and primary key, the column when it can be told. */
export interface ChainBreak {
  table: "audit_runs" | "audit_events" | CoveredTable;
  key: Record<string, string>;
  column?: string;
  problem: string;
}

export interface VerifyInput {
  runs: readonly ChainRun[];
  /** Events of the runs checked, and every link event of their threads (for the rows' latest snapshots). */
  events: readonly ChainEvent[];
  rows: readonly CoveredRow[];
  /** Check this run only (its chain, and the rows it wrote or last linked). */
  runId?: string | undefined;
}

export interface VerifyReport {
  breaks: ChainBreak[];
  runs: number;
  events: number;
  rows: number;
}

function keyOf(table: CoveredTable, columns: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(COVERED_COLUMNS[table].key.map((column) => [column, String(columns[column] ?? "")]));
}

function keyText(table: CoveredTable, columns: Record<string, unknown>): string {
  return `${table}\u0000${COVERED_COLUMNS[table].key.map((column) => String(columns[column] ?? "")).join("\u0000")}`;
}

function tableOfLink(kind: string): CoveredTable | undefined {
  return Object.hasOwn(LINK_KINDS, kind) ? LINK_KINDS[kind as keyof typeof LINK_KINDS] : undefined;
}

/** A link event's snapshot; undefined when its detail is not one (the hash check names that event). */
function snapshotOf(event: ChainEvent): Record<string, string | null> | undefined {
  try {
    const parsed: unknown = JSON.parse(event.detail);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
    return parsed as Record<string, string | null>;
  } catch {
    return undefined;
  }
}

function eventKey(event: ChainEvent): Record<string, string> {
  return { thread_id: event.thread_id, run_id: event.run_id, kind: event.kind, subject: event.subject };
}

/** Checks one run's chain: start record, every link in order, the head. */
function verifyRun(run: ChainRun, events: readonly ChainEvent[], breaks: ChainBreak[]): void {
  const runKey = { run_id: run.run_id };
  if (genesisHash(run) !== run.genesis) {
    breaks.push({
      table: "audit_runs",
      key: runKey,
      problem: "the start record (thread_id, owner, request_sha256, started_at) does not match its genesis hash",
    });
  }
  let previous = run.genesis;
  let expectedSeq = 1;
  for (const event of events) {
    if (event.seq === null || event.prev_hash === null || event.hash === null) {
      breaks.push({ table: "audit_events", key: eventKey(event), column: "seq", problem: "event is in no chain" });
      continue;
    }
    if (event.seq !== expectedSeq) {
      breaks.push({
        table: "audit_events",
        key: eventKey(event),
        column: "seq",
        problem: `link ${expectedSeq}${event.seq > expectedSeq + 1 ? `..${event.seq - 1}` : ""} of run ${run.run_id} is missing (deleted)`,
      });
    } else if (event.prev_hash !== previous) {
      breaks.push({
        table: "audit_events",
        key: eventKey(event),
        column: "prev_hash",
        problem: `does not name the hash of link ${event.seq - 1}`,
      });
    }
    if (linkHash(event.prev_hash, { ...event, seq: event.seq }) !== event.hash) {
      breaks.push({
        table: "audit_events",
        key: eventKey(event),
        problem: `link ${event.seq}: content does not match its hash (a column was changed)`,
      });
    }
    previous = event.hash;
    expectedSeq = event.seq + 1;
  }
  if (run.seq !== expectedSeq - 1 || run.hash !== previous) {
    const deleted = run.seq > expectedSeq - 1 ? " (events deleted)" : "";
    breaks.push({
      table: "audit_runs",
      key: runKey,
      column: run.seq !== expectedSeq - 1 ? "seq" : "hash",
      problem: `the head names link ${run.seq}, the chain ends at link ${expectedSeq - 1}${deleted}`,
    });
  }
}

/** Every row must equal its latest snapshot; every latest snapshot must still have its row. */
function verifyRows(input: VerifyInput, breaks: ChainBreak[]): number {
  const latest = new Map<string, { table: CoveredTable; event: ChainEvent; snapshot: Record<string, string | null> }>();
  for (const event of input.events) {
    const table = tableOfLink(event.kind);
    const snapshot = table ? snapshotOf(event) : undefined;
    if (!table || !snapshot) continue;
    const key = keyText(table, snapshot);
    const known = latest.get(key);
    const later =
      !known || event.at > known.event.at || (event.at === known.event.at && (event.seq ?? 0) > (known.event.seq ?? 0));
    if (later) latest.set(key, { table, event, snapshot });
  }
  const inScope = (runId: string | null | undefined, linkRun: string | undefined) =>
    input.runId === undefined || runId === input.runId || linkRun === input.runId;
  const seen = new Set<string>();
  let checked = 0;
  for (const row of input.rows) {
    const key = keyText(row.table, row.columns);
    seen.add(key);
    const link = latest.get(key);
    if (!inScope(row.columns["run_id"], link?.event.run_id)) continue;
    checked += 1;
    if (!link) {
      breaks.push({
        table: row.table,
        key: keyOf(row.table, row.columns),
        problem: "row is in no chain (no link event covers it)",
      });
      continue;
    }
    const changed = COVERED_COLUMNS[row.table].columns.find(
      (column) => (row.columns[column] ?? null) !== (link.snapshot[column] ?? null),
    );
    if (changed) {
      breaks.push({
        table: row.table,
        key: keyOf(row.table, row.columns),
        column: changed,
        problem: `differs from its chain link (run ${link.event.run_id}, link ${link.event.seq ?? "?"})`,
      });
    }
  }
  for (const [key, link] of latest) {
    if (seen.has(key) || !inScope(link.snapshot["run_id"], link.event.run_id)) continue;
    breaks.push({
      table: link.table,
      key: keyOf(link.table, link.snapshot),
      problem: `row is missing (deleted); run ${link.event.run_id}, link ${link.event.seq ?? "?"} covers it`,
    });
  }
  return checked;
}

/** Recomputes the chains and lists every break, the first (in run start order, then link order, then rows) first. */
export function verifyChains(input: VerifyInput): VerifyReport {
  const breaks: ChainBreak[] = [];
  const runs = input.runs.filter((run) => input.runId === undefined || run.run_id === input.runId);
  const byRun = new Map<string, ChainEvent[]>();
  for (const event of input.events) {
    const list = byRun.get(event.run_id) ?? [];
    list.push(event);
    byRun.set(event.run_id, list);
  }
  let events = 0;
  for (const run of [...runs].sort((a, b) =>
    a.started_at < b.started_at ? -1 : a.started_at > b.started_at ? 1 : a.run_id < b.run_id ? -1 : 1,
  )) {
    const chain = (byRun.get(run.run_id) ?? []).sort(
      (a, b) => (a.seq ?? Number.MAX_SAFE_INTEGER) - (b.seq ?? Number.MAX_SAFE_INTEGER),
    );
    events += chain.length;
    verifyRun(run, chain, breaks);
  }
  // Events of a run whose start record is gone.
  const known = new Set(input.runs.map((run) => run.run_id));
  for (const [runId, chain] of byRun) {
    if (known.has(runId) || (input.runId !== undefined && runId !== input.runId)) continue;
    const first = chain[0];
    if (first)
      breaks.push({
        table: "audit_events",
        key: eventKey(first),
        column: "run_id",
        problem: `run ${runId} has events but no start record (audit_runs row deleted, or events written outside the chain)`,
      });
  }
  const rows = verifyRows(input, breaks);
  return { breaks, runs: runs.length, events, rows };
}
