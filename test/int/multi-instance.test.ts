/**
 * Two `npm start` processes on one Postgres (issue 10, items 1–2): a run
 * started through one is streamed through the other with the same event ids
 * and data, in every mode the SDK asks for; `Last-Event-ID` reconnects land on
 * either; and a process SIGKILLed mid-write has its run marked and its thread
 * continued through the other as soon as its lease expires, with one effect
 * for the approved write. Real processes, real HTTP through the SDK's Client,
 * real Postgres; the model is the fake OpenAI server where a scripted proposal
 * is needed, the rules planner elsewhere.
 */
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { startFakeOpenAI, type FakeOpenAI, type ScriptedCompletion } from "./support/fake-openai.js";
import { createServerSandbox, waitUntil, type ServerSandbox } from "./support/server-process.js";
import { BOOKING_REQUEST, NOTES_QUESTION } from "./support/server.js";
import { collect } from "../support/streams.js";

type Part = { id?: string | undefined; event: string; data: unknown };
type Values = {
  status?: string;
  ledger?: { tool: string; status: string; call_id: string }[];
  __interrupt__?: unknown[];
};

const ask = (content: string) => ({ input: { messages: [{ role: "user" as const, content }] } });
const APPROVE = { decisions: [{ type: "approve" }] };
const BOOKING_ARGS = {
  title: "Attention study block",
  start: "2026-12-01T18:00:00+01:00",
  end: "2026-12-01T19:00:00+01:00",
  timezone: "Europe/Berlin",
  calendar: "study",
};
const USAGE = { prompt_tokens: 50, completion_tokens: 20 };
const STREAM_MODES = ["values", "updates", "messages-tuple", "messages"] as const;

let sandbox: ServerSandbox | undefined;
let fake: FakeOpenAI | undefined;
const fixture = useSandbox("each");

/** Collects a stream's parts (id, event, data) until it ends, or until `stopAfter` says so. */
/** A stream's parts as the tests compare them: id, event and data. */
const partsOf = (stream: AsyncIterable<Part>, stopAfter?: (part: Part) => boolean) =>
  collect(stream, { pick: (part): Part => ({ id: part.id, event: part.event, data: part.data }), stopAfter });

const ids = (parts: Part[]) => parts.map((part) => (part.id === undefined ? undefined : Number(part.id)));
const eventsAfter = (parts: Part[], id: number) =>
  parts.filter((part) => part.id !== undefined && Number(part.id) > id);

/** Rows of one table of Warrant's schema in the sandbox database. */
async function count(databaseUrl: string, sql: string, params: unknown[]): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return Number((await client.query(sql, params)).rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

describe("two instances on one Postgres", () => {
  it("streams a run executing on A through B with the same ids and data, and Last-Event-ID reconnects land on either", async () => {
    sandbox = fixture.add(await createServerSandbox());
    // read_note is slow on A, so the run is still going while B streams it.
    const [a, b] = await Promise.all([sandbox.start({ WARRANT_NOTES_DELAY_MS: "800" }), sandbox.start()]);
    const [onA, onB] = await Promise.all([sandbox.client(a, "alice"), sandbox.client(b, "alice")]);
    const thread = await onA.threads.create();
    const run = await onA.runs.create(thread.thread_id, "agent", {
      ...ask(NOTES_QUESTION),
      streamMode: [...STREAM_MODES],
    });

    // During the run: a client reads from A until the first node update, then reconnects to B with its last id.
    const firstPart = await partsOf(
      onA.runs.joinStream(thread.thread_id, run.run_id) as AsyncIterable<Part>,
      (part) => part.event === "updates",
    );
    const lastSeen = firstPart.at(-1)!.id!;
    const [rest, throughB] = await Promise.all([
      partsOf(onB.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: lastSeen }) as AsyncIterable<Part>),
      // Another client of B follows the whole run from its start, while it executes on A.
      partsOf(onB.runs.joinStream(thread.thread_id, run.run_id) as AsyncIterable<Part>),
    ]);
    expect((await onB.runs.get(thread.thread_id, run.run_id)).status).toBe("success");

    // After the run: the executing instance's own log (memory) and B's (Postgres) are the same events.
    const fromA = await partsOf(onA.runs.joinStream(thread.thread_id, run.run_id) as AsyncIterable<Part>);
    expect(throughB).toEqual(fromA);
    expect(ids(fromA)).toEqual(fromA.map((_part, index) => index));
    const events = new Set(fromA.map((part) => part.event));
    for (const event of ["metadata", "values", "updates", "messages", "messages/partial", "messages/complete"])
      expect(events, event).toContain(event);
    expect(
      fromA.filter((part) => part.event === "updates").flatMap((part) => Object.keys(part.data as object)),
    ).toContain("execute");
    // No gap and no duplicate across the reconnect from A to B.
    expect([...firstPart, ...rest]).toEqual(fromA);

    // Reconnects after the run, from any id, on either instance.
    for (const id of [0, Math.floor(fromA.length / 2), fromA.length - 2]) {
      const [tailA, tailB] = await Promise.all([
        partsOf(onA.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: String(id) }) as AsyncIterable<Part>),
        partsOf(onB.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: String(id) }) as AsyncIterable<Part>),
      ]);
      expect(tailA).toEqual(eventsAfter(fromA, id));
      expect(tailB).toEqual(eventsAfter(fromA, id));
    }
    // A join that asks for some modes gets those (and the run's metadata), from either instance.
    const updatesOnly = fromA.filter((part) => part.event === "updates" || part.event === "metadata");
    expect(
      await partsOf(
        onB.runs.joinStream(thread.thread_id, run.run_id, { streamMode: ["updates"] }) as AsyncIterable<Part>,
      ),
    ).toEqual(updatesOnly);
    expect(
      await partsOf(
        onA.runs.joinStream(thread.thread_id, run.run_id, { streamMode: ["updates"] }) as AsyncIterable<Part>,
      ),
    ).toEqual(updatesOnly);

    // Stored once: the values snapshots are deltas, not copies of the state.
    const sent = fromA
      .filter((part) => part.event === "values")
      .reduce((sum, part) => sum + JSON.stringify(part.data).length, 0);
    const stored = await count(
      sandbox.databaseUrl,
      "select sum(length(data)) as n from warrant.run_events where run_id = $1 and event = 'values'",
      [run.run_id],
    );
    expect(stored).toBeLessThan(sent / 2);
  }, 120_000);

  it("continues a thread whose instance was SIGKILLed mid-write through the other at lease expiry: one event, one write row", async () => {
    fake = fixture.add(await startFakeOpenAI());
    sandbox = fixture.add(await createServerSandbox());
    const modelEnv = { WARRANT_PLANNER: "model", WARRANT_MODEL: "fake-model", OPENAI_BASE_URL: fake.baseUrl };
    const leaseMs = 6_000;
    // A applies the calendar write and then never answers, so the run is mid-write when A dies.
    // B's own lease (and so its orphan sweep) is long: only a request can take the thread over in time.
    const [a, b] = await Promise.all([
      sandbox.start({
        ...modelEnv,
        WARRANT_RUN_LEASE_MS: String(leaseMs),
        WARRANT_CALENDAR_FAIL: "timeout_after_apply",
      }),
      sandbox.start({ ...modelEnv, WARRANT_RUN_LEASE_MS: "60000" }),
    ]);
    const [onA, onB] = await Promise.all([sandbox.client(a, "alice"), sandbox.client(b, "alice")]);

    const proposal: ScriptedCompletion = {
      kind: "completion",
      tool_calls: [{ id: "call_book_1", name: "create_study_event", arguments: JSON.stringify(BOOKING_ARGS) }],
      finish_reason: "tool_calls",
      usage: USAGE,
    };
    fake.enqueue(proposal);
    const thread = await onA.threads.create();
    expect(
      ((await onA.runs.wait(thread.thread_id, "agent", ask(BOOKING_REQUEST))) as Values).__interrupt__,
    ).toHaveLength(1);

    // The approval streams through A; A dies while the write is in flight.
    const throughA: Part[] = [];
    let streamError: unknown;
    const streaming = (async () => {
      try {
        for await (const part of onA.runs.stream(thread.thread_id, "agent", {
          command: { resume: APPROVE },
          streamMode: ["updates", "values"],
        }) as AsyncIterable<Part>) {
          throughA.push({ id: part.id, event: part.event, data: part.data });
        }
      } catch (error) {
        streamError = error;
      }
    })();
    await waitUntil(
      async () => (await sandbox!.calendarEvents()).length === 1,
      "the calendar write to be applied",
      30_000,
    );
    await waitUntil(
      () => throughA.some((part) => part.event === "updates" && Object.hasOwn(part.data as object, "human_review")),
      "the review's update through A",
      10_000,
    );
    const runId = (throughA.find((part) => part.event === "metadata")!.data as { run_id: string }).run_id;
    a.signal("SIGKILL");
    const killedAt = Date.now();
    // Its MCP children go too (the whole group), as with a machine that died.
    await a.kill();
    await streaming;
    expect(streamError).toBeDefined();
    const lastSeen = throughA.at(-1)!.id!;

    // Before the lease runs out (its last renewal was at most a third of a lease before the kill) the thread is still A's.
    expect(Date.now() - killedAt).toBeLessThan((leaseMs * 2) / 3);
    const early = await sandbox.fetch(b, `/threads/${thread.thread_id}/runs/wait`, {
      method: "POST",
      user: "alice",
      body: JSON.stringify({ assistant_id: "agent", input: null }),
    });
    expect(early.status).toBe(409);
    expect(((await early.json()) as { error: string }).error).toBe("thread_busy");

    // The client reconnects to B with its last id: the events A stored after it (none: A died), then the run's end.
    await sleep(Math.max(0, killedAt + leaseMs + 300 - Date.now()));
    const reconnectedAt = Date.now();
    const rest = await partsOf(
      onB.runs.joinStream(thread.thread_id, runId, { lastEventId: lastSeen }) as AsyncIterable<Part>,
    );
    // Taken over by the request, long before B's sweep (60 s) would have looked.
    expect(Date.now() - reconnectedAt).toBeLessThan(5_000);
    expect(rest).toEqual([
      { id: undefined, event: "error", data: { error: "server_restarted", message: expect.any(String) } },
    ]);
    const stored = await partsOf(onB.runs.joinStream(thread.thread_id, runId) as AsyncIterable<Part>);
    // The ending is not one of the run's events and carries no id of its own (SSE repeats the last one seen).
    const ending = stored.at(-1)!;
    expect(ending.event).toBe("error");
    expect(ids(stored.slice(0, -1))).toEqual(stored.slice(0, -1).map((_part, index) => index));
    expect([...throughA, ...rest]).toEqual([...stored.slice(0, -1), { ...ending, id: undefined }]);
    expect(await onB.runs.get(thread.thread_id, runId)).toMatchObject({
      status: "error",
      error: { error: "server_restarted" },
    });

    // Continued through B: the write in doubt is reconciled by its key, not sent again.
    fake.enqueue({
      kind: "completion",
      content: JSON.stringify({ answer: "Booked.", citations: [], abstained: false }),
      finish_reason: "stop",
      usage: USAGE,
    });
    const values = (await onB.runs.wait(thread.thread_id, "agent", { input: null })) as Values;
    expect(values.status).toBe("completed");
    expect(await sandbox.calendarEvents()).toHaveLength(1);
    expect(values.ledger?.filter((row) => row.tool === "create_study_event").map((row) => row.status)).toEqual([
      "succeeded",
    ]);
    expect(
      await count(
        sandbox.databaseUrl,
        "select count(*) as n from warrant.ledger where thread_id = $1 and tool = 'create_study_event'",
        [thread.thread_id],
      ),
    ).toBe(1);
    expect(fake.pending()).toBe(0);
    expect((await onB.threads.get(thread.thread_id)).status).toBe("idle");
  }, 150_000);
});
