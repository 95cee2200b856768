/**
 * Elicitation as a human step (issue 25, item 3), against a real server
 * process on real Postgres with the model planner on the fake endpoint: the
 * tests' own stdio MCP server asks for a date during `book_review_slot`.
 * - the run's stream carries a `custom` `elicitation` event (message, form,
 *   defaults); a reviewer's answer is refused (403 `elicitation_forbidden`),
 *   malformed and hostile answers are 422 naming field and problem; alice's
 *   answer reaches the server and the call completes with the date and the
 *   default note, although the answer went to another server instance on
 *   the same Postgres; the row and the `elicited` audit event record the outcome
 *   and who answered, never the content;
 * - with a short elicitation timeout and no answer, the server is told
 *   `decline` and the row says `timeout`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./support/fake-openai.js";
import { finalReply } from "../support/scripted-model.js";
import { proposeBooking, writeElicitingConfig, type ElicitationEventData } from "./support/elicitation.js";
import { createServerSandbox, type ServerProcess, type ServerSandbox } from "./support/server-process.js";
import {
  answerAs,
  customOf,
  elicitationOf,
  ledgerRowsOf,
  queryRows,
  startRun,
  toolTextOf,
  type Streamed,
} from "./support/elicitation-run.js";

let sandbox: ServerSandbox | undefined;
let fake: FakeOpenAI | undefined;
let directory: string;
let server: ServerProcess;
let quick: ServerProcess;

beforeAll(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), "warrant-elicitation-"));
  fake = await startFakeOpenAI();
  sandbox = await createServerSandbox();
  const model = { WARRANT_PLANNER: "model", WARRANT_MODEL: "fake-model", OPENAI_BASE_URL: fake.baseUrl };
  server = await sandbox.start({ ...model, WARRANT_CONFIG: await writeElicitingConfig(directory, 120_000) });
  quick = await sandbox.start({ ...model, WARRANT_CONFIG: await writeElicitingConfig(directory, 1_000, "quick") });
}, 180_000);

afterAll(async () => {
  try {
    await sandbox?.cleanup();
  } finally {
    await fake?.close();
    await rm(directory, { recursive: true, force: true });
  }
});

const ledgerOf = (streamed: Streamed) => ledgerRowsOf(streamed, "book_review_slot");
const answer = (target: ServerProcess, user: string, event: ElicitationEventData, body: unknown) =>
  answerAs(sandbox!, target, user, event, body);
const query = <T>(sql: string, params: unknown[]) => queryRows<T>(sandbox!.databaseUrl, sql, params);

describe("elicitation through the API", () => {
  it("the owner answers a date; a reviewer and malformed answers are refused; nothing of the content is kept", async () => {
    fake!.enqueue(proposeBooking("attention"), finalReply("Booked."));
    const alice = await sandbox!.client(server, "alice");
    const { threadId, streamed } = await startRun(alice, "Book a review slot for attention");
    const event = await elicitationOf(streamed);
    expect(event).toMatchObject({
      thread_id: threadId,
      server: "booking",
      tool: "book_review_slot",
      call_id: "call_booking_1",
      message: "Which day should the review of attention be on?",
      defaults: { note: "none" },
      requested_schema: { properties: { date: { type: "string", format: "date" } }, required: ["date"] },
    });
    // The model never saw the question: no model request carries it.
    expect(JSON.stringify(fake!.requests)).not.toContain("Which day should the review");

    // Another user of the tenant, a reviewer, may not answer.
    const rita = await answer(server, "rita", event, { action: "accept", content: { date: "2026-12-24" } });
    expect(rita).toEqual({ status: 403, body: expect.objectContaining({ error: "elicitation_forbidden" }) });
    // A user of another tenant sees no such question.
    expect((await answer(server, "dana", event, { action: "decline" })).status).toBe(404);

    // Malformed and hostile answers from the owner: typed 422s naming the field and the problem.
    const refusals: [unknown, number, string, { field: string; problem: string }[] | undefined][] = [
      [
        { action: "accept", content: { date: "2026-02-30" } },
        422,
        "invalid_elicitation_answer",
        [{ field: "date", problem: "bad_format" }],
      ],
      [
        { action: "accept", content: { date: 20261224 } },
        422,
        "invalid_elicitation_answer",
        [{ field: "date", problem: "wrong_type" }],
      ],
      [{ action: "accept", content: {} }, 422, "invalid_elicitation_answer", [{ field: "date", problem: "missing" }]],
      [
        { action: "accept", content: { date: "2026-12-24", note: "x".repeat(101) } },
        422,
        "invalid_elicitation_answer",
        [{ field: "note", problem: "too_long" }],
      ],
      [
        { action: "accept", content: { date: "2026-12-24", note: "a\u0000b" } },
        422,
        "invalid_elicitation_answer",
        [{ field: "note", problem: "control_characters" }],
      ],
      [
        { action: "accept", content: { date: { nested: { deeper: ["2026-12-24"] } } } },
        422,
        "invalid_elicitation_answer",
        [{ field: "date", problem: "wrong_type" }],
      ],
      [
        { action: "accept", content: { date: "2026-12-24", admin: true } },
        422,
        "invalid_elicitation_answer",
        [{ field: "admin", problem: "unknown_field" }],
      ],
      [
        { action: "accept", content: ["2026-12-24"] },
        422,
        "invalid_elicitation_answer",
        [{ field: "", problem: "wrong_type" }],
      ],
      [{ action: "accept", content: { date: "2026-12-24" }, user_id: "alice" }, 422, "invalid_request", undefined],
      [{ action: "approve" }, 422, "invalid_request", undefined],
      ['{"action": "accept", "content": {"__proto__": {"date": "2026-12-24"}}}', 422, "invalid_request", undefined],
      ["{not json", 400, "invalid_json", undefined],
    ];
    for (const [body, status, code, problems] of refusals) {
      const refused = await answer(server, "alice", event, body);
      expect({ body: JSON.stringify(body).slice(0, 80), status: refused.status, code: refused.body["error"] }).toEqual({
        body: JSON.stringify(body).slice(0, 80),
        status,
        code,
      });
      if (problems) expect(refused.body["problems"]).toEqual(problems);
    }
    // A body past the server's limit.
    const oversized = await answer(server, "alice", event, {
      action: "accept",
      content: { date: "2026-12-24", note: "y".repeat(2_000_000) },
    });
    expect(oversized.status).toBe(413);

    // The owner's answer, sent to the other instance on the same Postgres (not the one holding the call):
    // the call completes with the date and the default note (SEP-1034).
    const accepted = await answer(quick, "alice", event, { action: "accept", content: { date: "2026-12-24" } });
    expect(accepted).toEqual({ status: 200, body: { elicitation_id: event.elicitation_id, status: "accept" } });
    // Answered once only.
    const again = await answer(server, "alice", event, { action: "decline" });
    expect(again).toEqual({ status: 409, body: expect.objectContaining({ error: "elicitation_closed" }) });
    await streamed.done;
    expect(toolTextOf(streamed)).toBe("booked attention on 2026-12-24 (note: none)");
    // The call's ledger row: elicited, with the question's id and outcome, and nothing of the answer.
    const ledger = ledgerOf(streamed);
    expect(ledger.map((row) => [row["status"], row["elicitation"]])).toEqual([
      ["succeeded", [{ id: event.elicitation_id, outcome: "accept" }]],
    ]);
    expect(JSON.stringify(ledger)).not.toContain("2026-12-24");
    expect(customOf(streamed, "elicitation_closed")).toEqual([
      { type: "elicitation_closed", elicitation_id: event.elicitation_id, outcome: "accept" },
    ]);

    // The record: outcome and who answered, no content anywhere in our tables.
    const rows = await query<Record<string, unknown>>(
      "select status, answered_by, content, owner from warrant.elicitations where elicitation_id = $1",
      [event.elicitation_id],
    );
    expect(rows).toEqual([{ status: "accept", answered_by: "alice", content: null, owner: "alice" }]);
    const audit = await query<Record<string, unknown>>(
      "select kind, code, tool, actor, detail from warrant.audit_events where thread_id = $1 and kind = 'elicited'",
      [threadId],
    );
    expect(audit).toEqual([
      expect.objectContaining({ kind: "elicited", code: "accept", tool: "book_review_slot", actor: "alice" }),
    ]);
    expect(String(audit[0]?.["detail"])).toContain("answered by alice");
    const dump = await query<{ dump: string }>(
      "select (select coalesce(string_agg(row_to_json(e)::text, ''), '') from warrant.elicitations e) || " +
        "(select coalesce(string_agg(row_to_json(a)::text, ''), '') from warrant.audit_events a) as dump",
      [],
    );
    expect(dump[0]?.dump).not.toContain("2026-12-24");
    expect(fake!.pending()).toBe(0);
  }, 180_000);

  it("no answer within the elicitation timeout: the server is told decline, the row says timeout", async () => {
    fake!.enqueue(proposeBooking("memory"), finalReply("Not booked."));
    const alice = await sandbox!.client(quick, "alice");
    const { threadId, streamed } = await startRun(alice, "Book a review slot for memory");
    const event = await elicitationOf(streamed);
    await streamed.done;
    expect(toolTextOf(streamed)).toBe("not booked: decline");
    expect(ledgerOf(streamed).map((row) => row["elicitation"])).toEqual([
      [{ id: event.elicitation_id, outcome: "timeout" }],
    ]);
    expect(customOf(streamed, "elicitation_closed")).toEqual([
      { type: "elicitation_closed", elicitation_id: event.elicitation_id, outcome: "timeout" },
    ]);
    const late = await answer(quick, "alice", event, { action: "accept", content: { date: "2026-12-24" } });
    expect(late).toEqual({ status: 409, body: expect.objectContaining({ error: "elicitation_closed" }) });
    const audit = await query<{ code: string }>(
      "select code from warrant.audit_events where thread_id = $1 and kind = 'elicited'",
      [threadId],
    );
    expect(audit).toEqual([{ code: "timeout" }]);
    expect(fake!.pending()).toBe(0);
  }, 180_000);
});
