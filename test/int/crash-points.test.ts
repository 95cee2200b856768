/**
 * No crash point leaves a thread busy for ever (issue 29, item 5). A server
 * started with `WARRANT_TEST_CRASH_AT=<point>` SIGKILLs itself at that point
 * of a run's start: after it took the thread's lease, after it recorded the
 * run, after the run's first event was stored (all before the run's first
 * checkpoint). The run here is the approval of a pending review, the case the
 * issue found stuck. A server started afterwards must let the client resume
 * the review as soon as the dead server's lease ran out (a request sent after
 * it is never refused; time is taken when a request is sent, so a slow answer
 * on a loaded machine does not count against the server); the approved write
 * happens exactly once. On the server Postgres and on the
 * embedded database (one process at a time on its data directory).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { finalReply } from "../support/scripted-model.js";
import { startFakeOpenAI, type FakeOpenAI, type ScriptedCompletion } from "./support/fake-openai.js";
import { createServerSandbox, type ServerProcess, type ServerSandbox } from "./support/server-process.js";
import { BOOKING_REQUEST } from "./support/server.js";

type Values = { status?: string; ledger?: { tool: string; status: string }[]; __interrupt__?: unknown[] };

const POINTS = ["after_lease", "after_run_row", "after_first_event"] as const;
/** The crashing server's lease: long enough for the next server to start on a loaded machine. */
const LEASE_MS = 8_000;
const APPROVE = { decisions: [{ type: "approve" }] };
const USAGE = { prompt_tokens: 50, completion_tokens: 20 };
const BOOKING_ARGS = {
  title: "Attention study block",
  start: "2026-12-01T18:00:00+01:00",
  end: "2026-12-01T19:00:00+01:00",
  timezone: "Europe/Berlin",
  calendar: "study",
};
const proposal = (id: string): ScriptedCompletion => ({
  kind: "completion",
  tool_calls: [{ id, name: "create_study_event", arguments: JSON.stringify(BOOKING_ARGS) }],
  finish_reason: "tool_calls",
  usage: USAGE,
});

let sandbox: ServerSandbox | undefined;
let fake: FakeOpenAI | undefined;
const fixture = useSandbox("each");

const stopped = async (server: ServerProcess) => {
  await server.exited;
  // Its MCP children outlive a SIGKILL: remove the whole group.
  await server.kill();
};

describe.each([
  ["server Postgres", {}],
  ["embedded database", { DATABASE_URL: "" }],
])("a crash between a run request and its first checkpoint (%s)", (_name, databaseEnv: Record<string, string>) => {
  it("leaves every thread resumable once the lease ran out; the approved write happens once", async () => {
    const model = fixture.add(await startFakeOpenAI());
    fake = model;
    const box = fixture.add(await createServerSandbox());
    sandbox = box;
    const env = (extra: Record<string, string> = {}) => ({
      ...databaseEnv,
      WARRANT_PLANNER: "model",
      // A priced model name (the config check refuses an unpriced one); the fake server answers for any.
      WARRANT_MODEL: "gpt-4o-mini",
      OPENAI_BASE_URL: model.baseUrl,
      WARRANT_RUN_LEASE_MS: String(LEASE_MS),
      ...extra,
    });
    const resume = (server: ServerProcess, threadId: string) =>
      box.fetch(server, `/threads/${threadId}/runs/wait`, {
        method: "POST",
        user: "alice",
        body: JSON.stringify({ assistant_id: "agent", command: { resume: APPROVE } }),
      });

    // A review pending on a fresh thread per crash point.
    const preparing = await sandbox.start(env());
    const alice = await sandbox.client(preparing, "alice");
    const threads: Record<string, string> = {};
    for (const point of POINTS) {
      const thread = await alice.threads.create();
      fake.enqueue(proposal(`call_${point}`));
      const asked = (await alice.runs.wait(thread.thread_id, "agent", {
        input: { messages: [{ role: "user", content: BOOKING_REQUEST }] },
      })) as Values;
      expect(asked.__interrupt__, point).toHaveLength(1);
      threads[point] = thread.thread_id;
    }
    preparing.signal("SIGTERM");
    await stopped(preparing);

    for (const point of POINTS) {
      const thread = { thread_id: String(threads[point]) };
      // The approval reaches a server that dies at `point`.
      const crashing = await sandbox.start(env({ WARRANT_TEST_CRASH_AT: point }));
      const answer = await resume(crashing, thread.thread_id).then(
        (response) => response.status,
        () => "connection lost",
      );
      const killedAt = Date.now();
      expect(answer, point).toBe("connection lost");
      expect(await crashing.exited, point).toEqual({ code: null, signal: "SIGKILL" });
      await stopped(crashing);

      // The next server lets the review be answered as soon as the dead server's lease has run out. The lease was
      // taken (and last renewed) before the connection was lost, so it ran out by `leaseOver`: a request sent
      // before then may be refused as busy, one sent after it may not. No margin on the client's clock: a request
      // answered late (a loaded machine) is judged by when it was sent, not by when its answer came.
      const recovering = await sandbox.start(env());
      fake.enqueue(finalReply("Booked."));
      const leaseOver = killedAt + LEASE_MS;
      let sentAt = Date.now();
      let response = await resume(recovering, thread.thread_id);
      const refusals: string[] = [];
      while (response.status === 409 && sentAt <= leaseOver) {
        refusals.push(((await response.json()) as { error: string }).error);
        await sleep(200);
        sentAt = Date.now();
        response = await resume(recovering, thread.thread_id);
      }
      // Refused only while the dead run's lease is live, and only as busy.
      expect(
        refusals.every((code) => code === "thread_busy"),
        `${point}: ${refusals.join(", ")}`,
      ).toBe(true);
      expect(
        response.status,
        `${point}: sent ${sentAt - leaseOver} ms after the lease: ${await response.clone().text()}`,
      ).toBe(200);
      const values = (await response.json()) as Values;
      expect(values.status, point).toBe("completed");
      expect(values.ledger?.filter((row) => row.tool === "create_study_event").map((row) => row.status)).toEqual([
        "succeeded",
      ]);
      const recovered = await sandbox.client(recovering, "alice");
      expect((await recovered.threads.get(thread.thread_id)).status, point).toBe("idle");
      recovering.signal("SIGTERM");
      await stopped(recovering);
    }
    // One event per approved write, none repeated.
    expect(await sandbox.calendarEvents()).toHaveLength(POINTS.length);
    expect(fake.pending()).toBe(0);
  }, 600_000);
});
