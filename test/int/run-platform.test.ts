/**
 * The run-side platform API (issue 26) against real `npm start` processes
 * with the SDK: `/ok`, `threads.getState(thread, checkpoint)`, `config` and
 * `context` honoured or refused by name, runs kept on delete, delayed runs
 * (`afterSeconds`), and an enqueued run that starts after the first ends,
 * on the other instance.
 */
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { createServerSandbox, type ServerProcess, type ServerSandbox } from "./support/server-process.js";
import { NOTES_QUESTION } from "./support/server.js";

type Values = { status?: string; messages?: unknown[]; __error__?: { error: string } };
const ask = (content: string) => ({ input: { messages: [{ role: "user" as const, content }] } });

let sandbox: ServerSandbox;
let a: ServerProcess;
let b: ServerProcess;
const fixture = useSandbox();
beforeAll(async () => {
  sandbox = fixture.add(await createServerSandbox());
  // read_note is slow on A, so a run there is still going while B queues the next.
  [a, b] = await Promise.all([sandbox.start({ WARRANT_NOTES_DELAY_MS: "600" }), sandbox.start()]);
}, 180_000);

const post = async (server: ServerProcess, path: string, body: unknown) => {
  const response = await sandbox.fetch(server, path, { method: "POST", body: JSON.stringify(body), user: "alice" });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

async function queueRows(): Promise<number> {
  const client = new pg.Client({ connectionString: sandbox.databaseUrl });
  await client.connect();
  try {
    return Number((await client.query("select count(*)::int as n from warrant.run_queue")).rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

describe("small routes and bodies", () => {
  it("GET /ok answers 200 {ok: true} without a token", async () => {
    const response = await fetch(`${b.url}/ok`);
    expect([response.status, await response.json()]).toEqual([200, { ok: true }]);
  });

  it("getState(thread, checkpoint) answers that checkpoint's state, not the latest", async () => {
    const alice = await sandbox.client(b, "alice");
    const thread = await alice.threads.create();
    await alice.runs.wait(thread.thread_id, "agent", ask(NOTES_QUESTION));
    const first = await alice.threads.getState(thread.thread_id);
    await alice.runs.wait(thread.thread_id, "agent", ask("And what is cross-attention?"));
    const latest = await alice.threads.getState(thread.thread_id);
    expect(latest.checkpoint.checkpoint_id).not.toBe(first.checkpoint.checkpoint_id);
    const atFirst = await alice.threads.getState(thread.thread_id, first.checkpoint);
    expect(atFirst.checkpoint.checkpoint_id).toBe(first.checkpoint.checkpoint_id);
    expect((atFirst.values as Values).messages?.length).toBe((first.values as Values).messages?.length);
    // Another thread's id in the body is refused, not answered with this thread's state.
    const other = await post(b, `/threads/${thread.thread_id}/state/checkpoint`, {
      checkpoint: { ...first.checkpoint, thread_id: "00000000-0000-4000-8000-000000000000" },
    });
    expect([other.status, other.body["error"]]).toEqual([422, "invalid_request"]);
  }, 120_000);

  it("honours config.recursion_limit, keeps the SDK's defaults working, refuses other keys by name", async () => {
    const alice = await sandbox.client(b, "alice");
    const thread = await alice.threads.create();
    // The SDK's wait throws the run's error.
    const limited = await alice.runs
      .wait(thread.thread_id, "agent", { ...ask(NOTES_QUESTION), config: { recursion_limit: 2 } })
      .then(() => "completed")
      .catch((error: unknown) => String(error));
    expect(limited).toContain("GraphRecursionError");
    const [ended] = await alice.runs.list(thread.thread_id);
    expect([ended?.status, (ended as { error?: { error: string } } | undefined)?.error?.error]).toEqual([
      "error",
      "GraphRecursionError",
    ]);
    // What clients send by default: an empty config or context, a configurable naming the thread.
    const fresh = await alice.threads.create();
    const values = (await alice.runs.wait(fresh.thread_id, "agent", {
      ...ask(NOTES_QUESTION),
      config: { configurable: { thread_id: fresh.thread_id }, recursion_limit: 100 },
      context: {},
    })) as Values;
    expect(values.status).toBe("completed");
    const refused: [Record<string, unknown>, string][] = [
      [{ config: { max_concurrency: 2 } }, "config.max_concurrency"],
      [{ config: { configurable: { user_id: "bob" } } }, "config.configurable.user_id"],
      [{ context: { user_id: "bob" } }, "context.user_id"],
    ];
    for (const [extra, named] of refused) {
      const response = await post(b, `/threads/${fresh.thread_id}/runs/wait`, {
        assistant_id: "agent",
        ...ask(NOTES_QUESTION),
        ...extra,
      });
      expect([response.status, response.body["error"]]).toEqual([422, "unsupported"]);
      expect(String(response.body["message"])).toContain(named);
    }
  }, 120_000);

  it("keeps a finished run's record: DELETE is 422 unsupported, the run still reads", async () => {
    const alice = await sandbox.client(b, "alice");
    const thread = await alice.threads.create();
    const run = await alice.runs.create(thread.thread_id, "agent", ask(NOTES_QUESTION));
    await alice.runs.join(thread.thread_id, run.run_id);
    const response = await sandbox.fetch(b, `/threads/${thread.thread_id}/runs/${run.run_id}`, {
      method: "DELETE",
      user: "alice",
    });
    expect([response.status, ((await response.json()) as { error: string }).error]).toEqual([422, "unsupported"]);
    expect((await alice.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
  }, 120_000);
});

describe("the events stream mode", () => {
  it("streams LangChain streamEvents v2 events beside the other modes, without host-owned keys", async () => {
    const alice = await sandbox.client(b, "alice");
    const thread = await alice.threads.create();
    const parts: { event: string; data: unknown }[] = [];
    for await (const part of alice.runs.stream(thread.thread_id, "agent", {
      ...ask(NOTES_QUESTION),
      streamMode: ["events", "values"],
    }))
      parts.push({ event: part.event, data: part.data });
    const events = parts.filter((part) => part.event === "events").map((part) => part.data as Record<string, unknown>);
    const kinds = new Set(events.map((event) => event["event"]));
    for (const kind of ["on_chain_start", "on_chain_end"]) expect(kinds, kind).toContain(kind);
    for (const event of events)
      expect(Object.keys(event)).toEqual(expect.arrayContaining(["event", "name", "run_id", "data"]));
    // The other modes still ride beside it, and the run ends as without events.
    const values = parts.filter((part) => part.event === "values").at(-1)?.data as Values | undefined;
    expect(values?.status).toBe("completed");
    const json = JSON.stringify(parts);
    for (const hidden of ["langgraph_auth_user", "warrant_run_bound", "scopes"])
      expect(json, hidden).not.toContain(hidden);
  }, 120_000);
});

describe("delayed and queued runs", () => {
  it("afterSeconds: the run is pending until due, then runs; a pending run can be cancelled", async () => {
    const alice = await sandbox.client(b, "alice");
    const thread = await alice.threads.create();
    const run = await alice.runs.create(thread.thread_id, "agent", { ...ask(NOTES_QUESTION), afterSeconds: 2 });
    expect(run.status).toBe("pending");
    expect((await alice.runs.get(thread.thread_id, run.run_id)).status).toBe("pending");
    expect(((await alice.runs.join(thread.thread_id, run.run_id)) as Values).status).toBe("completed");
    expect((await alice.runs.get(thread.thread_id, run.run_id)).status).toBe("success");

    const later = await alice.runs.create(thread.thread_id, "agent", {
      ...ask("And what is cross-attention?"),
      afterSeconds: 3600,
    });
    await alice.runs.cancel(thread.thread_id, later.run_id);
    expect((await alice.runs.get(thread.thread_id, later.run_id)).status).toBe("interrupted");
    expect(await queueRows()).toBe(0);
  }, 120_000);

  it("an enqueued run waits for the thread's run and starts after it ends, on the other instance", async () => {
    const onA = await sandbox.client(a, "alice");
    const onB = await sandbox.client(b, "alice");
    const thread = await onA.threads.create();
    const first = await onA.runs.create(thread.thread_id, "agent", ask(NOTES_QUESTION));
    // Without a strategy the busy thread refuses; with enqueue the run waits its turn.
    const refused = await post(b, `/threads/${thread.thread_id}/runs`, { assistant_id: "agent", ...ask("again") });
    expect([refused.status, refused.body["error"]]).toEqual([409, "thread_busy"]);
    const second = await onB.runs.create(thread.thread_id, "agent", {
      ...ask("And what is cross-attention?"),
      multitaskStrategy: "enqueue",
    });
    expect([second.status, second.multitask_strategy]).toEqual(["pending", "enqueue"]);
    expect((await onB.runs.get(thread.thread_id, first.run_id)).status).toBe("running");
    expect(((await onB.runs.join(thread.thread_id, second.run_id)) as Values).status).toBe("completed");
    expect((await onA.runs.get(thread.thread_id, first.run_id)).status).toBe("success");
    // The thread's checkpoints: every one of the first run's before any of the second's (it started after the first ended).
    const history = await onB.threads.getHistory(thread.thread_id, { limit: 100 });
    const order = history
      .map((state) => (state.metadata as { run_id?: string } | null)?.run_id)
      .filter((id): id is string => id === first.run_id || id === second.run_id)
      .reverse();
    const firstSecond = order.indexOf(second.run_id);
    expect(firstSecond).toBeGreaterThan(0);
    expect(order.slice(firstSecond)).not.toContain(first.run_id);
    expect(await queueRows()).toBe(0);
  }, 180_000);

  it("rollback stays refused by name", async () => {
    const alice = await sandbox.client(b, "alice");
    const thread = await alice.threads.create();
    const response = await post(b, `/threads/${thread.thread_id}/runs`, {
      assistant_id: "agent",
      ...ask(NOTES_QUESTION),
      multitask_strategy: "rollback",
    });
    expect([response.status, response.body["error"]]).toEqual([422, "unsupported"]);
    expect(String(response.body["message"])).toContain("rollback");
  });
});
