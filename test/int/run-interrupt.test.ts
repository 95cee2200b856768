/**
 * `multitask_strategy: "interrupt"` during a write (issue 26): the approved
 * calendar write is in flight (applied, its answer late) when a new message
 * interrupts the run. The run stops only once the write has an outcome, the
 * new run starts after it, and the calendar holds exactly one event.
 */
import pg from "pg";
import { beforeAll, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { finalReply, startModelServer } from "../support/scripted-model.js";
import type { FakeOpenAI } from "./support/fake-openai.js";
import { waitUntil, type ServerProcess, type ServerSandbox } from "./support/server-process.js";
import { BOOKING_REQUEST } from "./support/server.js";

type Values = { status?: string; __interrupt__?: unknown[] };
const ask = (content: string) => ({ input: { messages: [{ role: "user" as const, content }] } });
const USAGE = { prompt_tokens: 50, completion_tokens: 20 };
const BOOKING_ARGS = {
  title: "Attention study block",
  start: "2026-12-01T18:00:00+01:00",
  end: "2026-12-01T19:00:00+01:00",
  timezone: "Europe/Berlin",
  calendar: "study",
};

let sandbox: ServerSandbox;
let fake: FakeOpenAI;
let server: ServerProcess;
const fixture = useSandbox();
beforeAll(async () => {
  // The calendar applies the first write and answers it late (at the call's timeout): the write is in flight meanwhile.
  ({
    fake,
    servers: sandbox,
    server,
  } = await startModelServer(fixture, {
    WARRANT_CALENDAR_FAIL: "timeout_after_apply",
    WARRANT_CALENDAR_FAIL_COUNT: "1",
  }));
}, 180_000);

it("an interrupt during a write leaves exactly one effect, and the new run starts after the write's outcome", async () => {
  const alice = await sandbox.client(server, "alice");
  fake.enqueue({
    kind: "completion",
    tool_calls: [{ id: "call_book_1", name: "create_study_event", arguments: JSON.stringify(BOOKING_ARGS) }],
    finish_reason: "tool_calls",
    usage: USAGE,
  });
  const thread = await alice.threads.create();
  expect(
    ((await alice.runs.wait(thread.thread_id, "agent", ask(BOOKING_REQUEST))) as Values).__interrupt__,
  ).toHaveLength(1);
  const approved = await alice.runs.create(thread.thread_id, "agent", {
    command: { resume: { decisions: [{ type: "approve" }] } },
  });
  await waitUntil(
    async () => (await sandbox.calendarEvents()).length === 1,
    "the calendar write to be applied",
    60_000,
  );
  // Answers for whatever plans next: the approved run after its write, the new message.
  fake.enqueue(finalReply("Booked."), finalReply("You're welcome."), finalReply("You're welcome."));
  const next = await alice.runs.create(thread.thread_id, "agent", {
    ...ask("Thanks, that's all"),
    multitaskStrategy: "interrupt",
  });
  expect([next.status, next.multitask_strategy]).toEqual(["pending", "interrupt"]);
  await alice.runs.join(thread.thread_id, next.run_id).catch(() => undefined);

  const first = await alice.runs.get(thread.thread_id, approved.run_id);
  const second = await alice.runs.get(thread.thread_id, next.run_id);
  expect(["interrupted", "success"]).toContain(first.status);
  expect(second.status).toBe("success");
  expect(await sandbox.calendarEvents()).toHaveLength(1);
  // The write's ledger row has its outcome: it was never left running by the interrupt.
  const client = new pg.Client({ connectionString: sandbox.databaseUrl });
  await client.connect();
  try {
    const rows = await client.query<{ status: string }>(
      "select status from warrant.ledger where thread_id = $1 and tool = 'create_study_event'",
      [thread.thread_id],
    );
    expect(rows.rows.map((row) => row.status)).not.toContain("running");
    expect(rows.rows).toHaveLength(1);
  } finally {
    await client.end();
  }
}, 180_000);
