/**
 * The audit chain's pure half: start-record and link hashes, and what
 * verifyChains reports for a chain built here (no database).
 */
import { describe, expect, it } from "vitest";
import {
  genesisHash,
  lengthPrefixed,
  linkHash,
  runStartOf,
  verifyChains,
  type ChainEvent,
  type ChainRun,
  type CoveredRow,
} from "../../src/audit/chain.js";

const start = runStartOf("t1", {
  run_id: "r1",
  owner: "alice",
  request: "plan my week",
  started_at: "2026-01-01T10:00:00.000Z",
});
if (!start) throw new Error("no start record");

const row: CoveredRow = {
  table: "ledger",
  columns: {
    thread_id: "t1",
    run_id: "r1",
    call_id: "c1",
    attempt: "1",
    tool: "list_events",
    server: "calendar",
    risk: "read",
    fingerprint: "f".repeat(64),
    idempotency_key: null,
    status: "succeeded",
    error_code: null,
    started_at: "2026-01-01T10:00:01.000000Z",
    finished_at: "2026-01-01T10:00:02.000000Z",
    elapsed_ms: "1000",
    reconciles: null,
    reconciled_by: null,
  },
};

/** A chain of: a denial, the ledger row's begin and finish links, the run's end. */
function chain(): { run: ChainRun; events: ChainEvent[] } {
  const bodies = [
    {
      kind: "denied",
      subject: "c0",
      node: "authorize",
      actor: "alice",
      code: "tool_not_permitted",
      tool: "nope",
      detail: "not offered",
    },
    {
      kind: "ledger",
      subject: "c1/1#2",
      node: "execute",
      actor: "alice",
      code: "running",
      tool: "list_events",
      detail: JSON.stringify({ ...row.columns, status: "running", finished_at: null, elapsed_ms: null }),
    },
    {
      kind: "ledger",
      subject: "c1/1#3",
      node: "execute",
      actor: "alice",
      code: "succeeded",
      tool: "list_events",
      detail: JSON.stringify(row.columns),
    },
    {
      kind: "run_ended",
      subject: "",
      node: "observe",
      actor: "alice",
      code: "final_answer",
      tool: null,
      detail: "done",
    },
  ];
  const genesis = genesisHash(start!);
  let previous = genesis;
  const events = bodies.map((body, index) => {
    const event = { thread_id: "t1", run_id: "r1", ...body, at: `2026-01-01T10:00:0${index}.000000Z`, seq: index + 1 };
    const hash = linkHash(previous, event);
    const stored: ChainEvent = { ...event, prev_hash: previous, hash };
    previous = hash;
    return stored;
  });
  return { run: { ...start!, genesis, seq: events.length, hash: previous }, events };
}

describe("the audit chain", () => {
  it("prefixes each field with its UTF-8 length, so field boundaries cannot shift", () => {
    expect(lengthPrefixed("é")).toBe("2:é");
    expect(lengthPrefixed(null)).toBe("~");
    expect(
      linkHash("p", {
        thread_id: "ab",
        run_id: "c",
        seq: 1,
        kind: "k",
        subject: "",
        node: "n",
        actor: "a",
        code: "c",
        tool: null,
        detail: "",
        at: "t",
      }),
    ).not.toBe(
      linkHash("p", {
        thread_id: "a",
        run_id: "bc",
        seq: 1,
        kind: "k",
        subject: "",
        node: "n",
        actor: "a",
        code: "c",
        tool: null,
        detail: "",
        at: "t",
      }),
    );
  });

  it("commits to the request without holding its text", () => {
    expect(start.request_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(start)).not.toContain("plan my week");
  });

  it("verifies an intact chain", () => {
    const { run, events } = chain();
    expect(verifyChains({ runs: [run], events, rows: [row] })).toEqual({ breaks: [], runs: 1, events: 4, rows: 1 });
  });

  it("names a changed row column, a changed event, a missing link, a changed start record and a deleted row", () => {
    const { run, events } = chain();
    expect(
      verifyChains({ runs: [run], events, rows: [{ ...row, columns: { ...row.columns, status: "failed" } }] }).breaks,
    ).toEqual([
      expect.objectContaining({
        table: "ledger",
        key: { thread_id: "t1", call_id: "c1", attempt: "1" },
        column: "status",
      }),
    ]);
    const changed = events.map((event) => (event.kind === "denied" ? { ...event, code: "access_denied" } : event));
    expect(verifyChains({ runs: [run], events: changed, rows: [row] }).breaks).toEqual([
      expect.objectContaining({ table: "audit_events", key: expect.objectContaining({ kind: "denied" }) }),
    ]);
    expect(
      verifyChains({ runs: [run], events: events.filter((event) => event.seq !== 2), rows: [row] }).breaks[0],
    ).toMatchObject({ table: "audit_events", column: "seq" });
    expect(verifyChains({ runs: [{ ...run, owner: "mallory" }], events, rows: [row] }).breaks[0]).toMatchObject({
      table: "audit_runs",
      key: { run_id: "r1" },
    });
    expect(verifyChains({ runs: [run], events, rows: [] }).breaks[0]).toMatchObject({
      table: "ledger",
      problem: expect.stringMatching(/deleted/),
    });
    expect(verifyChains({ runs: [run], events: events.slice(0, -1), rows: [row] }).breaks[0]).toMatchObject({
      table: "audit_runs",
      column: "seq",
    });
  });
});
