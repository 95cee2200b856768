/**
 * The run route modules, each alone (issue 24 item 4): the idempotent replay
 * with an in-memory key store, the stream's `Last-Event-ID` parsing and final
 * values, and the run-record routes mounted on their own.
 */
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { RunKeyRow } from "../../src/stores/run-keys.js";
import type { RunRow, ThreadRow } from "../../src/stores/thread-rows.js";
import { errorBody } from "../../src/server/api-error.js";
import type { Env, RouteContext } from "../../src/server/context.js";
import { registerRunControlRoutes, runJson } from "../../src/server/runs/control-routes.js";
import { startIdempotent } from "../../src/server/runs/replay.js";
import type { StartedRun } from "../../src/server/runs/start.js";
import { finalValues, parseLastEventId } from "../../src/server/runs/stream.js";
import { isApiError, ApiError } from "../../src/errors.js";

const THREAD = "6f1c3a52-7a43-4c55-9c0e-3c1a1e1b2a01";
const RUN = "0b8a3f4e-2d61-4e1c-8a3b-5f6c7d8e9f02";
const alice = { user_id: "alice", tenant: "t1", role: "student", scopes: [], grants: {} };
const runRow = (status: RunRow["status"]): RunRow =>
  ({
    run_id: RUN,
    thread_id: THREAD,
    assistant_id: "agent",
    status,
    metadata: {},
    kwargs: {},
    error: null,
    outcome: null,
    created_at: new Date(0),
    updated_at: new Date(0),
  }) as unknown as RunRow;

/** A route context whose store keeps run keys in memory and knows one run. */
function fakeContext(run: RunRow = runRow("success")) {
  const keys = new Map<string, RunKeyRow>();
  const released: string[] = [];
  const store = {
    get: async () => ({ thread_id: THREAD }) as ThreadRow,
    getRun: async (_owner: unknown, _thread: string, runId: string) => (runId === run.run_id ? run : undefined),
    runKeys: {
      find: async (_owner: unknown, key: string) => keys.get(key),
      claim: async (_owner: unknown, key: string, claim: Omit<RunKeyRow, "created_at">) => {
        const existing = keys.get(key);
        if (existing) return { claimed: false, existing };
        keys.set(key, { ...claim, created_at: new Date() } as RunKeyRow);
        return { claimed: true };
      },
      release: async (_owner: unknown, key: string, runId: string) => {
        released.push(runId);
        if (keys.get(key)?.run_id === runId) keys.delete(key);
      },
    },
  };
  const context = {
    store,
    principalOf: () => alice,
    ownedThread: async () => ({ thread_id: THREAD }) as ThreadRow,
    ownedRun: async () => run,
    manager: { cancel: async () => run, wait: async () => run },
    snapshotOf: async () => ({ values: { status: "completed" }, next: [], tasks: [] }),
  } as unknown as RouteContext;
  return { context, keys, released };
}

/** A Hono context stand-in: request headers in, response headers out. */
function fakeRequest(headers: Record<string, string>) {
  const sent: Record<string, string> = {};
  const c = {
    req: { header: (name: string) => headers[name] ?? headers[name.toLowerCase()] },
    header: (name: string, value: string) => {
      sent[name] = value;
    },
  };
  return { c: c as never, sent };
}

const BODY = { assistant_id: "agent", input: { messages: [{ role: "user", content: "hi" }] } };

describe("replaying an idempotent request (run-replay.ts)", () => {
  it("starts without a claim when no key is sent", async () => {
    const { context } = fakeContext();
    let claimed: unknown = "unset";
    const result = await startIdempotent(fakeRequest({}).c, context, "stateless", BODY, async (claim) => {
      claimed = claim;
      return { run: runRow("running") } as StartedRun;
    });
    expect({ claimed, keyed: result.keyed }).toEqual({ claimed: undefined, keyed: false });
  });

  it("claims a new key once, then answers a repeat with the same run, marked replayed", async () => {
    const { context, keys } = fakeContext(runRow("running"));
    const first = fakeRequest({ "Idempotency-Key": "k-1" });
    let starts = 0;
    const start = async (claim: Parameters<Parameters<typeof startIdempotent>[4]>[0]) => {
      starts += 1;
      expect(await claim?.take(THREAD, RUN)).toBeUndefined();
      return { run: runRow("running") } as StartedRun;
    };
    await startIdempotent(first.c, context, { thread_id: THREAD } as ThreadRow, BODY, start);
    expect(keys.get("k-1")?.run_id).toBe(RUN);
    const repeat = fakeRequest({ "Idempotency-Key": "k-1" });
    const again = await startIdempotent(repeat.c, context, { thread_id: THREAD } as ThreadRow, BODY, start);
    expect({ starts, run: again.started.run.run_id, replayed: repeat.sent["Idempotent-Replayed"] }).toEqual({
      starts: 1,
      run: RUN,
      replayed: "true",
    });
  });

  it("refuses the key with another body (idempotency_key_reused) and starts nothing", async () => {
    const { context } = fakeContext(runRow("running"));
    const start = async (claim: Parameters<Parameters<typeof startIdempotent>[4]>[0]) => {
      await claim?.take(THREAD, RUN);
      return { run: runRow("running") } as StartedRun;
    };
    await startIdempotent(fakeRequest({ "Idempotency-Key": "k-2" }).c, context, "stateless", BODY, start);
    const other = { ...BODY, metadata: { note: "different" } };
    const error = await startIdempotent(fakeRequest({ "Idempotency-Key": "k-2" }).c, context, "stateless", other, start)
      .then(() => undefined)
      .catch((caught: unknown) => caught);
    expect(isApiError(error) ? error.code : error).toBe("idempotency_key_reused");
  });

  it("gives the key back when the run fails to start after its claim", async () => {
    const { context, keys, released } = fakeContext();
    const failing = async (claim: Parameters<Parameters<typeof startIdempotent>[4]>[0]) => {
      await claim?.take(THREAD, RUN);
      await claim?.release(RUN);
      throw new ApiError("too_many_runs", "limit");
    };
    await expect(
      startIdempotent(fakeRequest({ "Idempotency-Key": "k-3" }).c, context, "stateless", BODY, failing),
    ).rejects.toThrow("limit");
    expect({ released, key: keys.has("k-3") }).toEqual({ released: [RUN], key: false });
  });

  it("refuses a malformed key before anything", async () => {
    const { context } = fakeContext();
    const error = await startIdempotent(
      fakeRequest({ "Idempotency-Key": " bad\u0001" }).c,
      context,
      "stateless",
      BODY,
      () => {
        throw new Error("must not start");
      },
    ).catch((caught: unknown) => caught);
    expect(isApiError(error) ? error.code : error).toBe("invalid_request");
  });
});

describe("following a run (run-stream.ts)", () => {
  it("reads Last-Event-ID as a small decimal id, anything else as from the start", () => {
    expect([
      parseLastEventId("12"),
      parseLastEventId(undefined),
      parseLastEventId("-1"),
      parseLastEventId("1e3"),
    ]).toEqual([12, undefined, undefined, undefined]);
    expect(parseLastEventId("1234567890")).toBeUndefined();
  });

  it("answers a failed run with its error, an ended one with the thread's values", async () => {
    const { context } = fakeContext();
    const failed = { ...runRow("error"), error: { error: "boom", message: "m" } } as unknown as RunRow;
    expect(await finalValues(context, failed, THREAD)).toEqual({ __error__: { error: "boom", message: "m" } });
    expect(await finalValues(context, runRow("success"), THREAD)).toEqual({ status: "completed" });
  });
});

describe("run records (run-control.ts), mounted alone", () => {
  const appFor = (run: RunRow) => {
    const app = new Hono<Env>();
    app.onError((error, c) =>
      isApiError(error) ? c.json(errorBody(error.code, error.message), error.status as 400) : c.text("500", 500),
    );
    registerRunControlRoutes(app, fakeContext(run).context);
    return app;
  };
  const path = `/threads/${THREAD}/runs/${RUN}`;

  it("gets a run as the SDK's Run", async () => {
    const response = await appFor(runRow("success")).request(path);
    expect(await response.json()).toEqual(JSON.parse(JSON.stringify(runJson(runRow("success")))));
  });

  it("keeps a finished run's record (422 unsupported) and refuses to delete one in progress (409 thread_busy)", async () => {
    const finished = await appFor(runRow("success")).request(path, { method: "DELETE" });
    const running = await appFor(runRow("running")).request(path, { method: "DELETE" });
    expect([finished.status, ((await finished.json()) as { error: string }).error]).toEqual([422, "unsupported"]);
    expect([running.status, ((await running.json()) as { error: string }).error]).toEqual([409, "thread_busy"]);
  });

  it("cancels (202), waits with ?wait=1 (204), and refuses rollback by name", async () => {
    const app = appFor(runRow("running"));
    expect((await app.request(`${path}/cancel`, { method: "POST" })).status).toBe(202);
    expect((await app.request(`${path}/cancel?wait=1`, { method: "POST" })).status).toBe(204);
    const rollback = await app.request(`${path}/cancel?action=rollback`, { method: "POST" });
    expect([rollback.status, ((await rollback.json()) as { error: string }).error]).toEqual([422, "unsupported"]);
  });
});
