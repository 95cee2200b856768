/**
 * The reducers of the DeltaChannel fields (src/state.ts) and the statement
 * that carries checkpoint saves (checkpoint-sql.ts). A DeltaChannel rebuilds
 * a value by replaying a thread's writes in one call, where the live run
 * applied them step by step: each reducer must give the same either way.
 */
import { AIMessage, HumanMessage, RemoveMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { REMOVE_ALL_MESSAGES } from "@langchain/langgraph";
import { describe, expect, test } from "vitest";
import { saveCtes, savesStatement, withSaves, type PendingSaves } from "../../src/checkpoint/checkpoint-sql.js";
import { Params } from "../../src/db/sql-params.js";
import { appendTranscript, type TranscriptWrite } from "../../src/state/transcript.js";
import {
  mergeProgress,
  mergeRepeatCounts,
  mergeRun,
  repeatCountsUpdate,
  type Progress,
  type RepeatCounts,
  type RunInfo,
  type RunUpdate,
} from "../../src/state.js";

/** Applies `writes` one step at a time, and all at once; both results. */
function bothWays<V, W>(reducer: (current: V, writes: W[]) => V, initial: V, steps: W[][]): [V, V] {
  const stepwise = steps.reduce((value, writes) => reducer(value, writes), initial);
  return [stepwise, reducer(initial, steps.flat())];
}

const view = (messages: BaseMessage[]) => messages.map((message) => [message.getType(), message.id, message.content]);

describe("appendTranscript", () => {
  const steps = (): TranscriptWrite[][] => [
    [new HumanMessage({ content: "hi", id: "h1" })],
    [[new AIMessage("no id"), new AIMessage("no id")]],
    [new ToolMessage({ content: "result", tool_call_id: "c1" })],
    [new AIMessage({ content: "replaced", id: "h1" })],
    [new RemoveMessage({ id: "h1" }), new HumanMessage("hi again")],
    [{ role: "user", content: "plain object" } as TranscriptWrite],
    [new AIMessage("no id")],
  ];

  test("gives the same transcript step by step as all at once, derived ids included", () => {
    const [stepwise, atOnce] = bothWays(appendTranscript, [], steps());
    expect(view(stepwise)).toEqual(view(atOnce));
    expect(stepwise).toHaveLength(6);
  });

  test("every message gets an id, the same one on every replay, distinct for equal messages", () => {
    const first = appendTranscript([], steps().flat());
    const second = appendTranscript([], steps().flat());
    expect(first.map((message) => message.id)).toEqual(second.map((message) => message.id));
    expect(first.every((message) => typeof message.id === "string" && message.id.length > 0)).toBe(true);
    expect(new Set(first.map((message) => message.id)).size).toBe(first.length);
    // The id is also in what the message serializes (lc_kwargs), as messagesStateReducer does.
    expect(first.every((message) => message.lc_kwargs["id"] === message.id)).toBe(true);
  });

  test("replaces by id, removes by id, and clears on REMOVE_ALL_MESSAGES", () => {
    const kept = appendTranscript(
      [new HumanMessage({ content: "a", id: "a" }), new AIMessage({ content: "b", id: "b" })],
      [new AIMessage({ content: "b2", id: "b" }), new RemoveMessage({ id: "a" }), new RemoveMessage({ id: "unknown" })],
    );
    expect(view(kept)).toEqual([["ai", "b", "b2"]]);
    const cleared = appendTranscript(kept, [
      new RemoveMessage({ id: REMOVE_ALL_MESSAGES }),
      new HumanMessage({ content: "fresh", id: "f" }),
    ]);
    expect(view(cleared)).toEqual([["human", "f", "fresh"]]);
  });

  test("does not change the list it is given", () => {
    const current = [new HumanMessage({ content: "a", id: "a" })];
    appendTranscript(current, [new AIMessage("b")]);
    expect(current).toHaveLength(1);
  });
});

describe("repeats", () => {
  test("an update carries only what changed, and applying it gives the counts it was made from", () => {
    const before = { a: 1, b: 2 };
    const after = { a: 1, b: 3, c: 1 };
    const update = repeatCountsUpdate("run-1", before, after);
    expect(update).toEqual({ run_id: "run-1", counts: { b: 3, c: 1 } });
    expect(mergeRepeatCounts({ run_id: "run-1", counts: before }, [update])).toEqual({
      run_id: "run-1",
      counts: after,
    });
  });

  test("a fingerprint taken out is written as 0 and leaves the counts", () => {
    const update = repeatCountsUpdate("run-1", { a: 1, b: 1 }, { b: 1 });
    expect(update.counts).toEqual({ a: 0 });
    expect(mergeRepeatCounts({ run_id: "run-1", counts: { a: 1, b: 1 } }, [update])).toEqual({
      run_id: "run-1",
      counts: { b: 1 },
    });
  });

  test("another run's write starts afresh; step by step equals all at once", () => {
    const writes: RepeatCounts[][] = [
      [{ run_id: "r1", counts: { a: 1 } }],
      [{ run_id: "r1", counts: { a: 2, b: 1 } }],
      [{ run_id: "r2", counts: { c: 1 } }],
      [{ run_id: "r2", counts: { c: 0, d: 1 } }],
    ];
    const [stepwise, atOnce] = bothWays(mergeRepeatCounts, null, writes);
    expect(stepwise).toEqual({ run_id: "r2", counts: { d: 1 } });
    expect(atOnce).toEqual(stepwise);
  });
});

describe("progress", () => {
  test("appends each turn's new hashes within a run, starts afresh for another; step by step equals all at once", () => {
    const writes: Progress[][] = [
      [{ run_id: "r1", steps_without_progress: 0, seen_results: ["h1"] }],
      [{ run_id: "r1", steps_without_progress: 1, seen_results: [] }],
      [{ run_id: "r1", steps_without_progress: 0, seen_results: ["h2", "h3"] }],
    ];
    const [stepwise, atOnce] = bothWays(mergeProgress, null, writes);
    expect(stepwise).toEqual({ run_id: "r1", steps_without_progress: 0, seen_results: ["h1", "h2", "h3"] });
    expect(atOnce).toEqual(stepwise);
    expect(mergeProgress(stepwise, [{ run_id: "r2", steps_without_progress: 0, seen_results: ["h9"] }])).toEqual({
      run_id: "r2",
      steps_without_progress: 0,
      seen_results: ["h9"],
    });
  });
});

describe("run", () => {
  const record = (runId: string): RunInfo => ({
    run_id: runId,
    request: "q",
    started_at: "2026-01-01T00:00:00.000Z",
    turn: 1,
    owner: "alice",
  });

  test("a whole record replaces, a turn applies to its run; step by step equals all at once", () => {
    const writes: RunUpdate[][] = [
      [record("r1")],
      [{ run_id: "r1", turn: 2 }],
      [{ run_id: "r1", turn: 3 }],
      [record("r2")],
      [{ run_id: "r2", turn: 2 }],
    ];
    const [stepwise, atOnce] = bothWays(mergeRun, null, writes);
    expect(stepwise).toEqual({ ...record("r2"), turn: 2 });
    expect(atOnce).toEqual(stepwise);
    expect(mergeRun(stepwise, [null])).toBeNull();
  });

  test("a turn of another run is refused loudly", () => {
    expect(() => mergeRun(record("r1"), [{ run_id: "r2", turn: 2 }])).toThrow(/run r2/);
    expect(() => mergeRun(null, [{ run_id: "r2", turn: 2 }])).toThrow(/no run/);
  });
});

describe("checkpoint saves as CTEs of one statement", () => {
  const saves: PendingSaves = {
    checkpoints: [
      {
        thread_id: "t",
        checkpoint_ns: "",
        checkpoint_id: "c1",
        parent_checkpoint_id: undefined,
        checkpoint: { v: 4 },
        metadata_json: JSON.stringify({ step: 1 }),
        blobs: [["t", "", "status", "1", "json", new Uint8Array([1])]],
      },
    ],
    writes: [{ rows: [["t", "", "c1", "task", 0, "status", "json", new Uint8Array([2])]], upsert: false }],
  };

  test("numbers the saves' parameters after the statement's own", () => {
    const combined = withSaves({ text: "insert into x (a, b) select $1::text, $2::text", values: ["a", "b"] }, saves);
    expect(combined.values.slice(0, 2)).toEqual(["a", "b"]);
    // A thread's id and namespace go once per insert (scalars), the other columns as arrays.
    expect(combined.values).toHaveLength(2 + 6 + 6 + 8);
    expect(combined.values.slice(2, 4)).toEqual(["t", ""]);
    expect(combined.values[4]).toEqual(["status"]);
    expect(combined.text).toMatch(/^with saved_blobs as/);
    expect(combined.text).toContain("select $3::text, $4::text, s.c1");
    expect(combined.text).toContain(`$${combined.values.length}::text[]`);
    // Blobs travel as base64 text and are decoded by Postgres.
    expect(combined.values.at(-1)).toEqual([Buffer.from([2]).toString("base64")]);
    expect(combined.text).toContain("decode(s.c6, 'base64')");
    expect(combined.text.trimEnd()).toMatch(/insert into x \(a, b\) select \$1::text, \$2::text$/);
  });

  test("joins a statement that starts with WITH, refuses a recursive one, and leaves a statement alone without saves", () => {
    const combined = withSaves({ text: "with w as (select 1) insert into x select * from w", values: [] }, saves);
    expect(combined.text).toMatch(/^with saved_blobs as[\s\S]*\),\nw as \(select 1\) insert into x select \* from w$/);
    expect(() => withSaves({ text: "WITH RECURSIVE r as (select 1) select * from r", values: [] }, saves)).toThrow(
      /recursive/,
    );
    const alone = { text: "select 1", values: [] };
    expect(withSaves(alone, { checkpoints: [], writes: [] })).toBe(alone);
    expect(savesStatement({ checkpoints: [], writes: [] })).toBeUndefined();
    expect(savesStatement(saves)?.text).toMatch(/select 1$/);
  });

  test("replacing and new writes go to separate CTEs", () => {
    const params = new Params();
    const ctes = saveCtes(
      {
        checkpoints: [],
        writes: [
          ...saves.writes,
          { rows: [["t", "", "c1", "task", -1, "__interrupt__", "json", new Uint8Array([3])]], upsert: true },
        ],
      },
      params,
    );
    expect(ctes.map((cte) => cte.split(" ")[0])).toEqual(["saved_replacing_writes", "saved_new_writes"]);
  });
});
