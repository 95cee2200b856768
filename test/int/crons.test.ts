/**
 * Crons (issue 26, item 2) through `@langchain/langgraph-sdk`'s `Client.crons`
 * against `npm start` processes on one Postgres. The occurrence is made due
 * by setting `next_run_at` (instead of waiting for the schedule), and a
 * test-only pause between reading a due cron and claiming it
 * (`WARRANT_TEST_CRON_CLAIM_DELAY_MS`) makes both instances see the same
 * occurrence: exactly one may fire it. The cron's run proposes a calendar
 * write, which waits in the reviewer inbox like any other.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../src/env.js";
import { createServerSandbox, waitUntil, type ServerSandbox } from "./support/server-process.js";

/** A write the rules planner proposes in one turn (it has the duration and the time), so it waits for review. */
const BOOKING_REQUEST = "Put a 40 minute study session for attention on 2027-01-15 at 18:00 UTC in my calendar";

let sandbox: ServerSandbox | undefined;
afterEach(async () => {
  await sandbox?.cleanup();
  sandbox = undefined;
}, 60_000);

const ask = (content: string) => ({ messages: [{ role: "user" as const, content }] });

async function query<T extends pg.QueryResultRow>(databaseUrl: string, sql: string, params: unknown[] = []) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** Makes the cron's next occurrence due now (the test hook instead of waiting for the schedule). */
const makeDue = (databaseUrl: string, cronId: string) =>
  query(databaseUrl, "update warrant.crons set next_run_at = now() where cron_id = $1", [cronId]);

const cronRuns = (databaseUrl: string, cronId: string) =>
  query<{ run_id: string; thread_id: string; status: string; owner: string }>(
    databaseUrl,
    "select run_id, thread_id, status, owner from warrant.runs where metadata->>'cron_id' = $1",
    [cronId],
  );

describe("crons", () => {
  it("a cron fires once across two instances and its write waits for review", async () => {
    sandbox = await createServerSandbox();
    const env = { WARRANT_CRON_INTERVAL_MS: "100", WARRANT_TEST_CRON_CLAIM_DELAY_MS: "1500" };
    const a = await sandbox.start(env);
    const b = await sandbox.start(env);
    const alice = await sandbox.client(a, "alice");
    const cron = await alice.crons.create("agent", {
      schedule: "0 9 * * 1",
      timezone: "Europe/Berlin",
      input: ask(BOOKING_REQUEST),
      onRunCompleted: "keep",
      metadata: { plan: "weekly" },
    });
    expect(cron).toMatchObject({ schedule: "0 9 * * 1", timezone: "Europe/Berlin", enabled: true, user_id: "alice" });
    // Mondays 09:00 in Berlin: 08:00 or 07:00 UTC.
    expect(new Date(String(cron.next_run_date)).getUTCDay()).toBe(1);
    expect([7, 8]).toContain(new Date(String(cron.next_run_date)).getUTCHours());

    await makeDue(sandbox.databaseUrl, cron.cron_id);
    const seen = `cron ${cron.cron_id}: occurrence`;
    // Both instances read the occurrence; one claimed it, the other found it claimed.
    await waitUntil(
      () => a.stderr().includes(seen) && b.stderr().includes(seen),
      "both instances to try the occurrence",
    );
    const claimed = [a, b].filter(
      (server) => server.stderr().includes(`${seen}`) && /claimed; started run/.test(server.stderr()),
    );
    expect(claimed).toHaveLength(1);
    const runs = await cronRuns(sandbox.databaseUrl, cron.cron_id);
    expect(runs).toHaveLength(1);
    const run = runs[0] as { run_id: string; thread_id: string; owner: string };
    expect(run.owner).toBe("alice");

    // The run proposes the calendar write: it waits for a review, in the inbox, with nothing written.
    await waitUntil(
      async () => (await cronRuns(sandbox!.databaseUrl, cron.cron_id))[0]?.status !== "running",
      "the cron's run to end",
      60_000,
    );
    expect((await cronRuns(sandbox.databaseUrl, cron.cron_id))[0]?.status).toBe("success");
    // The run's row is written before its thread is released.
    await waitUntil(async () => (await alice.threads.get(run.thread_id)).status !== "busy", "the thread's release");
    const thread = await alice.threads.get(run.thread_id);
    expect(thread.status).toBe("interrupted");
    const inbox = (await (await sandbox.fetch(b, "/reviews", { user: "rita" })).json()) as {
      reviews: { thread_id: string; owner: string; request: string }[];
    };
    expect(inbox.reviews).toContainEqual(
      expect.objectContaining({ thread_id: run.thread_id, owner: "alice", request: BOOKING_REQUEST }),
    );
    expect(await sandbox.calendarEvents()).toEqual([]);

    // The next occurrence is the schedule's, not "now" again: one run per occurrence.
    const [row] = await query<{ next_run_at: Date; last_run_id: string }>(
      sandbox.databaseUrl,
      "select next_run_at, last_run_id from warrant.crons where cron_id = $1",
      [cron.cron_id],
    );
    expect(row?.last_run_id).toBe(run.run_id);
    expect(row?.next_run_at.getTime()).toBeGreaterThan(Date.now() + 60_000);
    expect(await cronRuns(sandbox.databaseUrl, cron.cron_id)).toHaveLength(1);
  }, 180_000);

  it("refuses hostile cron bodies by name, keeps each user's crons their own, limits them, and skips a revoked owner", async () => {
    sandbox = await createServerSandbox();
    const principalsPath = path.join(sandbox.dataDir, "principals.json");
    const shipped = JSON.parse(await readFile(path.join(REPO_ROOT, "src/domains/dev-principals.json"), "utf8")) as {
      principals: { user_id: string }[];
    };
    await writeFile(principalsPath, JSON.stringify(shipped));
    const server = await sandbox.start({
      WARRANT_CRON_INTERVAL_MS: "100",
      WARRANT_MAX_CRONS: "2",
      WARRANT_PRINCIPALS: principalsPath,
    });
    const post = async (pathname: string, body: unknown, user = "alice", method = "POST") => {
      const response = await sandbox!.fetch(server, pathname, {
        method,
        user,
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
    };
    const valid = { assistant_id: "agent", schedule: "30 7 * * *", input: ask("What is attention?") };
    const cases: [string, Record<string, unknown> | string, number, string][] = [
      ["three fields", { ...valid, schedule: "* * *" }, 422, "invalid_request"],
      ["six fields", { ...valid, schedule: "* * * * * *" }, 422, "invalid_request"],
      ["a minute out of range", { ...valid, schedule: "61 * * * *" }, 422, "invalid_request"],
      ["a day that never comes", { ...valid, schedule: "0 0 30 2 *" }, 422, "invalid_request"],
      ["a macro", { ...valid, schedule: "@daily" }, 422, "invalid_request"],
      ["NUL in the schedule", { ...valid, schedule: "0 0 * * *\u0000" }, 422, "invalid_request"],
      ["a long schedule", { ...valid, schedule: `${"1,".repeat(100)}1 * * * *` }, 422, "invalid_request"],
      ["a schedule that is not a string", { ...valid, schedule: 5 }, 422, "invalid_request"],
      ["an unknown time zone", { ...valid, timezone: "Mars/Olympus" }, 422, "invalid_request"],
      ["a path as a time zone", { ...valid, timezone: "../../etc/passwd" }, 422, "invalid_request"],
      ["NUL in the time zone", { ...valid, timezone: "UTC\u0000" }, 422, "invalid_request"],
      ["a lone surrogate in the time zone", { ...valid, timezone: "Europe/\ud800" }, 422, "invalid_request"],
      ["a time zone that is not a string", { ...valid, timezone: 1 }, 422, "invalid_request"],
      ["an end time in the past", { ...valid, end_time: "2001-01-01T00:00:00Z" }, 422, "invalid_request"],
      ["an end time that is not a date", { ...valid, end_time: "next week" }, 422, "invalid_request"],
      ["config", { ...valid, config: { recursion_limit: 5 } }, 422, "unsupported"],
      ["context", { ...valid, context: { user_id: "bob" } }, 422, "unsupported"],
      ["interrupt_before", { ...valid, interrupt_before: ["execute"] }, 422, "unsupported"],
      ["multitask enqueue", { ...valid, multitask_strategy: "enqueue" }, 422, "unsupported"],
      ["a stream mode", { ...valid, stream_mode: ["values"] }, 422, "unsupported"],
      ["a webhook with none configured", { ...valid, webhook: "http://127.0.0.1:9/hook" }, 422, "unsupported"],
      ["an unknown key", { ...valid, owner: "bob" }, 422, "invalid_request"],
      ["no input", { assistant_id: "agent", schedule: "30 7 * * *" }, 422, "invalid_request"],
      ["a state write in the input", { ...valid, input: { ...ask("hi"), ledger: [] } }, 422, "invalid_request"],
      ["NUL in the input", { ...valid, input: ask("hi\u0000") }, 422, "invalid_request"],
      ["NUL in metadata", { ...valid, metadata: { note: "\u0000" } }, 422, "invalid_request"],
      ["deep metadata", { ...valid, metadata: nested(30) }, 422, "invalid_request"],
      ["an unknown assistant", { ...valid, assistant_id: "nope" }, 404, "not_found"],
      ["a body that is not JSON", "{", 400, "invalid_json"],
      ["a body that is an array", "[]", 422, "invalid_request"],
    ];
    for (const [name, body, status, code] of cases) {
      const answer = await post("/runs/crons", body);
      expect([name, answer.status, answer.body["error"]]).toEqual([name, status, code]);
    }
    const thread = (await post("/threads", {})).body as { thread_id: string };
    expect(
      (await post(`/threads/${thread.thread_id}/runs/crons`, { ...valid, on_run_completed: "delete" })).body["error"],
    ).toBe("unsupported");
    // Bob cannot hang a cron on alice's thread.
    expect((await post(`/threads/${thread.thread_id}/runs/crons`, valid, "bob")).status).toBe(404);
    const search = await post("/runs/crons/search", { limit: 5000 });
    expect([search.status, search.body["error"]]).toEqual([422, "invalid_request"]);

    const alice = await sandbox.client(server, "alice");
    const bob = await sandbox.client(server, "bob");
    const first = await alice.crons.create("agent", { schedule: "30 7 * * *", input: ask("What is attention?") });
    const second = await alice.crons.createForThread(thread.thread_id, "agent", {
      schedule: "0 8 * * 1-5",
      timezone: "America/New_York",
      input: ask("What is attention?"),
    });
    expect(second.thread_id).toBe(thread.thread_id);
    // The per-user limit (WARRANT_MAX_CRONS=2).
    const third = await post("/runs/crons", valid);
    expect([third.status, third.body["error"]]).toEqual([429, "too_many_crons"]);

    // Each user sees, changes and deletes only their own.
    expect((await alice.crons.search()).map((cron) => cron.cron_id).sort()).toEqual(
      [first.cron_id, second.cron_id].sort(),
    );
    expect(await bob.crons.search()).toEqual([]);
    expect(await bob.crons.count()).toBe(0);
    expect(await alice.crons.count()).toBe(2);
    expect((await post(`/runs/crons/${first.cron_id}`, {}, "bob", "DELETE")).status).toBe(404);
    expect((await post(`/runs/crons/${first.cron_id}`, { enabled: false }, "bob", "PATCH")).status).toBe(404);
    expect((await post(`/runs/crons/${first.cron_id}`, { schedule: "* *" }, "alice", "PATCH")).status).toBe(422);
    const updated = await alice.crons.update(first.cron_id, { schedule: "15 6 * * *", timezone: "Asia/Tokyo" });
    expect(updated).toMatchObject({ schedule: "15 6 * * *", timezone: "Asia/Tokyo" });
    await alice.crons.delete(second.cron_id);
    expect((await alice.crons.search()).map((cron) => cron.cron_id)).toEqual([first.cron_id]);

    // An owner the directory no longer lists: the occurrence is claimed and skipped, no run.
    await writeFile(
      principalsPath,
      JSON.stringify({ principals: shipped.principals.filter((entry) => entry.user_id !== "alice") }),
    );
    await makeDue(sandbox.databaseUrl, first.cron_id);
    await server.waitForStderr(`cron ${first.cron_id}: occurrence`);
    expect(server.stderr()).toContain("skipped (principal_revoked");
    expect(await cronRuns(sandbox.databaseUrl, first.cron_id)).toEqual([]);
    expect(server.stderr()).not.toContain("unexpected error");
  }, 180_000);
});

function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let index = 0; index < depth; index += 1) value = { inner: value };
  return value;
}
