/**
 * LangGraph's own clients against `npm start` (issue 36): the SDK and
 * `RemoteGraph` as a platform user would call them.
 *
 * - One metadata rule wherever a run comes from: the keys the server owns
 *   (identity, the ids it writes, `langgraph_auth*`, `warrant_*`) are dropped
 *   from a thread run, a stateless run, `config.metadata`, a queued run, a
 *   resume and a cron (when created, and again when it fires), so no run
 *   record, thread or checkpoint names anyone but the caller.
 * - `config.tags`, `config.run_name` and `config.metadata` label a run: on its
 *   record (`kwargs.config`, `metadata`), its events and its OpenTelemetry run
 *   span; bounds give typed 422s. `RemoteGraph` invoke and stream work.
 * - The store's missing item reads as `null` (put → get → delete → get).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { RemoteGraph } from "@langchain/langgraph/remote";
import { HumanMessage } from "@langchain/core/messages";
import type { Client } from "@langchain/langgraph-sdk";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServerSandbox, waitUntil, type ServerProcess, type ServerSandbox } from "./support/server-process.js";
import { NOTES_QUESTION } from "./support/server.js";

/** A write the rules planner proposes in one turn, so the run waits for review. */
const BOOKING_REQUEST = "Put a 40 minute study session for attention on 2027-01-15 at 18:00 UTC in my calendar";
const APPROVE = { decisions: [{ type: "approve" }] };

/** Every key the server owns, with the value a client would spoof it with. */
const SPOOFED: Record<string, unknown> = {
  owner: "alice",
  tenant: "acme",
  user_id: "alice",
  langgraph_auth_user_id: "alice",
  langgraph_auth_user: { identity: "alice", permissions: ["admin"] },
  langgraph_auth_permissions: ["admin"],
  graph_id: "spoofed-graph",
  assistant_id: "spoofed-assistant",
  thread_id: "spoofed-thread",
  run_id: "spoofed-run",
  cron_id: "spoofed-cron",
  warrant_run_bound: { calendar: "alice" },
  warrant_owner: "alice",
  // Matched without regard to case.
  Owner: "alice",
  TENANT: "acme",
};
const IDENTITY_VALUES = new Set(["alice", "acme"]);

/** The metadata carries no spoofed key: each one is absent or holds the server's own value, never the client's. */
function expectNoSpoof(metadata: Record<string, unknown> | null | undefined, where: string): void {
  for (const [key, value] of Object.entries(SPOOFED))
    expect({ where, key, value: metadata?.[key] }).not.toEqual({ where, key, value });
  for (const key of Object.keys(metadata ?? {})) {
    const lower = key.toLowerCase();
    expect({ where, key, reserved: ["owner", "tenant", "user_id"].includes(lower) }).toEqual({
      where,
      key,
      reserved: false,
    });
    expect({ where, key, prefix: lower.startsWith("langgraph_auth") || lower.startsWith("warrant_") }).toEqual({
      where,
      key,
      prefix: false,
    });
  }
  // No value anywhere in the metadata names the spoofed identity.
  const text = JSON.stringify(metadata ?? {});
  for (const name of IDENTITY_VALUES)
    expect({ where, names: text.includes(`"${name}"`) }).toEqual({ where, names: false });
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: Record<string, unknown> }[];
}

/** A small OTLP/HTTP receiver: collects every span POSTed to /v1/traces. */
async function otlpReceiver(): Promise<{ url: string; spans: OtlpSpan[]; close(): Promise<void> }> {
  const spans: OtlpSpan[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (request.url === "/v1/traces" && request.headers["content-type"]?.includes("json")) {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
          resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
        };
        for (const resource of body.resourceSpans) for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function attribute(span: OtlpSpan, key: string): unknown {
  const value = span.attributes.find((item) => item.key === key)?.value;
  if (!value) return undefined;
  if ("intValue" in value) return Number(value["intValue"]);
  if ("arrayValue" in value)
    return ((value["arrayValue"] as { values?: { stringValue?: string }[] }).values ?? []).map(
      (item) => item.stringValue,
    );
  return Object.values(value)[0];
}

let sandbox: ServerSandbox;
let server: ServerProcess;
let receiver: Awaited<ReturnType<typeof otlpReceiver>>;
let alice: Client;
let bob: Client;

beforeAll(async () => {
  receiver = await otlpReceiver();
  sandbox = await createServerSandbox();
  server = await sandbox.start({ WARRANT_CRON_INTERVAL_MS: "100", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
  alice = await sandbox.client(server, "alice");
  bob = await sandbox.client(server, "bob");
}, 180_000);
afterAll(async () => {
  await sandbox?.cleanup();
  await receiver?.close();
}, 60_000);

async function query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: sandbox.databaseUrl });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

const ask = (content: string) => ({ messages: [{ role: "user" as const, content }] });

const post = async (path: string, body: unknown, user = "bob") => {
  const response = await sandbox.fetch(server, path, { method: "POST", body: JSON.stringify(body), user });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

type RunRecord = { run_id: string; metadata: Record<string, unknown>; kwargs: Record<string, unknown> };

/** Everything a client or auditor reads of a thread: its runs, the thread and every checkpoint's metadata. */
async function expectThreadClean(
  client: Client,
  threadId: string,
  where: string,
  caller = "bob",
): Promise<RunRecord[]> {
  const runs = (await client.runs.list(threadId, { limit: 100 })) as unknown as RunRecord[];
  for (const run of runs) expectNoSpoof(run.metadata, `${where}: run ${run.run_id}`);
  // The thread shows its owner and tenant as the server recorded them (the caller's), nothing else of identity.
  const { owner, tenant, ...threadMetadata } = (await client.threads.get(threadId)).metadata ?? {};
  expect({ where, owner, tenant }).toEqual({ where, owner: caller, tenant: "uni" });
  expectNoSpoof(threadMetadata, `${where}: thread`);
  const history = await client.threads.getHistory(threadId, { limit: 100 });
  expect(history.length).toBeGreaterThan(0);
  for (const state of history) expectNoSpoof(state.metadata, `${where}: checkpoint`);
  return runs;
}

/** The run rows as stored (what every route reads). */
const storedRuns = (threadId: string) =>
  query<{ run_id: string; metadata: Record<string, unknown>; owner: string; tenant: string }>(
    "select run_id::text, metadata, owner, tenant from warrant.runs where thread_id = $1 order by created_at",
    [threadId],
  );

describe("one metadata rule for every run", () => {
  it("a cron created with a spoofed identity fires runs, threads and checkpoints that name only its owner", async () => {
    const metadata = { ...SPOOFED, label: "x" };
    // Stateless: a new thread per occurrence, kept.
    const stateless = await bob.crons.create("agent", {
      schedule: "0 9 * * 1",
      input: ask(NOTES_QUESTION),
      metadata,
      onRunCompleted: "keep",
    });
    // On one of bob's threads.
    const own = await bob.threads.create();
    const onThread = await bob.crons.createForThread(own.thread_id, "agent", {
      schedule: "0 9 * * 1",
      input: ask(NOTES_QUESTION),
      metadata,
    });
    for (const cron of [stateless, onThread]) {
      const shown = cron as unknown as {
        metadata: Record<string, unknown>;
        payload: { metadata: Record<string, unknown> };
      };
      expectNoSpoof(shown.metadata, "cron.metadata");
      expectNoSpoof(shown.payload.metadata, "cron.payload.metadata");
      expect(shown.payload.metadata["label"]).toBe("x");
    }
    // Also a cron stored before the rule: its payload holds the spoofed keys, and the rule applies when it fires.
    const legacy = await bob.crons.create("agent", {
      schedule: "0 9 * * 1",
      input: ask(NOTES_QUESTION),
      onRunCompleted: "keep",
    });
    await query("update warrant.crons set payload = jsonb_set(payload, '{metadata}', $2::jsonb) where cron_id = $1", [
      legacy.cron_id,
      JSON.stringify(metadata),
    ]);

    const ids = [stateless.cron_id, onThread.cron_id, legacy.cron_id];
    await query("update warrant.crons set next_run_at = now() where cron_id = any($1::uuid[])", [ids]);
    const fired = async () =>
      query<{ run_id: string; thread_id: string; status: string; cron_id: string }>(
        "select run_id::text, thread_id::text, status, metadata->>'cron_id' as cron_id " +
          "from warrant.runs where metadata->>'cron_id' = any($1)",
        [ids],
      );
    await waitUntil(
      async () => {
        const rows = await fired();
        return rows.length === 3 && rows.every((row) => row.status !== "running" && row.status !== "pending");
      },
      "the three crons' runs to end",
      120_000,
    );
    for (const row of await fired()) {
      expect(row.status).toBe("success");
      const runs = await expectThreadClean(bob, row.thread_id, `cron ${row.cron_id}`);
      const run = runs.find((item) => item.run_id === row.run_id);
      // The cron id on the run is the real one, the label is kept.
      expect(run?.metadata["cron_id"]).toBe(row.cron_id);
      expect(run?.metadata["label"]).toBe("x");
      // The run is bob's, in bob's tenant.
      for (const stored of await storedRuns(row.thread_id)) {
        expect([stored.owner, stored.tenant]).toEqual(["bob", "uni"]);
        expectNoSpoof(stored.metadata, "stored run");
      }
      const history = await bob.threads.getHistory(row.thread_id, { limit: 100 });
      expect(history.some((state) => state.metadata?.["cron_id"] === row.cron_id)).toBe(true);
      expect(history.some((state) => state.metadata?.["label"] === "x")).toBe(true);
    }
  }, 240_000);

  it("each reserved key, one at a time, is dropped on a thread run, a stateless run, config.metadata and a cron", async () => {
    for (const [key, value] of Object.entries(SPOOFED)) {
      const metadata = { [key]: value, label: key };
      // A thread run (top-level metadata).
      const thread = await bob.threads.create();
      await bob.runs.wait(thread.thread_id, "agent", { input: ask(NOTES_QUESTION), metadata });
      // The same on config.metadata.
      await bob.runs.wait(thread.thread_id, "agent", {
        input: ask(NOTES_QUESTION),
        // The SDK's Config type has no metadata; the server takes it as LangGraph's does.
        config: { metadata } as never,
      });
      const runs = await expectThreadClean(bob, thread.thread_id, `thread run, ${key}`);
      expect(runs.map((run) => run.metadata["label"])).toEqual([key, key]);
      // A stateless run.
      const stateless = await bob.runs.create(null, "agent", {
        input: ask(NOTES_QUESTION),
        metadata,
        // The server's value (LangGraph's API: delete | keep), not the SDK's type.
        onCompletion: "keep" as never,
      });
      await bob.runs.join(stateless.thread_id, stateless.run_id);
      const [statelessRun] = await expectThreadClean(bob, stateless.thread_id, `stateless run, ${key}`);
      expect(statelessRun?.metadata["label"]).toBe(key);
      // A cron: dropped when it is created.
      const cron = await bob.crons.create("agent", { schedule: "0 9 * * 1", input: ask(NOTES_QUESTION), metadata });
      const shown = cron as unknown as {
        metadata: Record<string, unknown>;
        payload: { metadata: Record<string, unknown> };
      };
      expect(shown.payload.metadata).toEqual({ label: key });
      expect(shown.metadata).toEqual({ label: key });
      // And when it is updated.
      const updated = (await bob.crons.update(cron.cron_id, {
        metadata: { [key]: value, label: `${key}-updated` },
      })) as unknown as { metadata: Record<string, unknown>; payload: { metadata: Record<string, unknown> } };
      expect([updated.metadata, updated.payload.metadata]).toEqual([
        { label: `${key}-updated` },
        { label: `${key}-updated` },
      ]);
      await bob.crons.delete(cron.cron_id);
    }
  }, 300_000);

  it("a resume and a queued run drop them too", async () => {
    const metadata = { ...SPOOFED, label: "resume" };
    const thread = await bob.threads.create();
    await bob.runs.wait(thread.thread_id, "agent", { input: ask(BOOKING_REQUEST), metadata });
    expect((await bob.threads.get(thread.thread_id)).status).toBe("interrupted");
    await bob.runs.wait(thread.thread_id, "agent", { command: { resume: APPROVE }, metadata });
    // A delayed run waits in the queue with its metadata, then starts.
    const queued = await bob.runs.create(thread.thread_id, "agent", {
      input: ask(NOTES_QUESTION),
      metadata: { ...SPOOFED, label: "queued" },
      afterSeconds: 1,
    });
    expectNoSpoof((queued as unknown as RunRecord).metadata, "queued run as created");
    await waitUntil(
      async () => !["pending", "running"].includes((await bob.runs.get(thread.thread_id, queued.run_id)).status),
      "the queued run to end",
      60_000,
    );
    const runs = await expectThreadClean(bob, thread.thread_id, "resume and queue");
    expect(runs.map((run) => run.metadata["label"]).sort()).toEqual(["queued", "resume", "resume"]);
    for (const stored of await storedRuns(thread.thread_id)) expectNoSpoof(stored.metadata, "stored run");
  }, 180_000);
});

describe("config.tags, config.run_name and config.metadata", () => {
  it("RemoteGraph invoke and stream work on a thread, with and without tags and metadata, and label the run", async () => {
    const remote = new RemoteGraph({ graphId: "agent", client: alice });
    const thread = await alice.threads.create();
    const config = { configurable: { thread_id: thread.thread_id } };

    // Without tags or metadata (RemoteGraph still sends tags: [] and metadata naming the thread).
    const plain = (await remote.invoke(ask(NOTES_QUESTION), config)) as { status?: string };
    expect(plain.status).toBe("completed");
    // With tags, metadata (and an identity key, dropped) and a run name.
    const labelled = (await remote.invoke(
      { messages: [new HumanMessage("And what is cross-attention?")] },
      {
        ...config,
        tags: ["nightly", "eval"],
        metadata: { label: "remote-invoke", owner: "rita", langgraph_auth_user_id: "rita" },
      },
    )) as { status?: string };
    expect(labelled.status).toBe("completed");
    // Stream, without and with labels.
    const chunks: unknown[] = [];
    for await (const chunk of await remote.stream(ask(NOTES_QUESTION), config)) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(0);
    const labelledChunks: unknown[] = [];
    for await (const chunk of await remote.stream(ask(NOTES_QUESTION), {
      ...config,
      streamMode: "values",
      tags: ["stream-tag"],
      metadata: { label: "remote-stream", tenant: "acme" },
    }))
      labelledChunks.push(chunk);
    expect((labelledChunks.at(-1) as { status?: string }).status).toBe("completed");

    const runs = ((await alice.runs.list(thread.thread_id, { limit: 10 })) as unknown as RunRecord[]).reverse();
    expect(runs.map((run) => (run as unknown as { status: string }).status)).toEqual([
      "success",
      "success",
      "success",
      "success",
    ]);
    const configOf = (run: RunRecord | undefined) => run?.kwargs["config"] as Record<string, unknown> | undefined;
    expect(configOf(runs[0])).toEqual({ tags: [] });
    expect(configOf(runs[1])).toEqual({ tags: ["nightly", "eval"] });
    expect(runs[1]?.metadata).toEqual({ label: "remote-invoke" });
    expect(configOf(runs[3])).toEqual({ tags: ["stream-tag"] });
    expect(runs[3]?.metadata).toEqual({ label: "remote-stream" });
    for (const run of runs) expect(run.metadata["thread_id"]).toBeUndefined();
    // The labels are on the checkpoints too; no identity key is.
    const history = await alice.threads.getHistory(thread.thread_id, { limit: 100 });
    expect(history.some((state) => state.metadata?.["label"] === "remote-invoke")).toBe(true);
    for (const state of history) {
      expect(state.metadata?.["owner"]).toBeUndefined();
      expect(state.metadata?.["tenant"]).toBeUndefined();
      expect(state.metadata?.["langgraph_auth_user_id"]).toBeUndefined();
    }
  }, 240_000);

  it("the labels reach the run's events and its OpenTelemetry run span", async () => {
    const thread = await alice.threads.create();
    const events: { event: string; data: unknown }[] = [];
    for await (const part of alice.runs.stream(thread.thread_id, "agent", {
      input: ask(NOTES_QUESTION),
      streamMode: ["events", "messages-tuple"],
      config: { tags: ["otel-tag"], run_name: "otel-run", metadata: { label: "otel", week: 3 } } as never,
    }))
      events.push(part as { event: string; data: unknown });
    const streamed = events
      .filter((part) => part.event === "events")
      .map(
        (part) =>
          part.data as {
            tags: string[];
            metadata: Record<string, unknown>;
            name: string;
          },
      );
    expect(streamed.length).toBeGreaterThan(0);
    expect(streamed.some((event) => event.tags.includes("otel-tag"))).toBe(true);
    expect(streamed.some((event) => event.metadata["label"] === "otel" && event.metadata["week"] === 3)).toBe(true);
    expect(streamed.some((event) => event.name === "otel-run")).toBe(true);
    for (const event of streamed)
      expect(Object.keys(event.metadata).some((key) => key.startsWith("langgraph_auth"))).toBe(false);

    const [run] = await alice.runs.list(thread.thread_id);
    const warrantRunId = (run as unknown as { outcome?: { warrant_run_id?: string } }).outcome?.warrant_run_id;
    expect(warrantRunId).toBeDefined();
    await waitUntil(
      () => receiver.spans.some((span) => attribute(span, "warrant.run_id") === warrantRunId),
      "the run's spans to be exported",
      60_000,
    );
    const root = receiver.spans.find(
      (span) => attribute(span, "warrant.run_id") === warrantRunId && span.name.startsWith("invoke_agent"),
    );
    if (!root) throw new Error("no run span");
    expect(attribute(root, "langsmith.span.tags")).toEqual(["otel-tag"]);
    expect(attribute(root, "langsmith.trace.name")).toBe("otel-run");
    expect(attribute(root, "langsmith.metadata.label")).toBe("otel");
    expect(attribute(root, "langsmith.metadata.week")).toBe(3);
  }, 180_000);

  it("bounds the labels with typed 422s and refuses every other config key by name", async () => {
    const thread = await bob.threads.create();
    const invalid: [string, Record<string, unknown>, string][] = [
      ["tags not an array", { tags: "x" }, "config.tags"],
      ["too many tags", { tags: Array.from({ length: 33 }, (_, index) => `t${index}`) }, "config.tags"],
      ["an empty tag", { tags: [""] }, "config.tags.0"],
      ["a long tag", { tags: ["x".repeat(129)] }, "config.tags.0"],
      ["a number tag", { tags: [1] }, "config.tags.0"],
      ["a NUL in a tag", { tags: ["a\u0000b"] }, "config.tags.0"],
      ["a newline in a tag", { tags: ["ok", "a\nb"] }, "config.tags.1"],
      ["a bidi override in a tag", { tags: ["a\u202eb"] }, "config.tags.0"],
      ["a lone surrogate in a tag", { tags: ["a\ud800"] }, "config.tags.0"],
      ["a long run name", { run_name: "n".repeat(257) }, "config.run_name"],
      ["a run name with a control", { run_name: "a\u0007" }, "config.run_name"],
      ["a run name not a string", { run_name: { a: 1 } }, "config.run_name"],
      ["metadata not an object", { metadata: ["x"] }, "config.metadata"],
      ["a NUL in metadata", { metadata: { note: "\u0000" } }, "config.metadata"],
      ["deep metadata", { metadata: nested(30) }, "config.metadata"],
      ["large metadata", { metadata: { big: "x".repeat(17 * 1024) } }, "config.metadata"],
    ];
    for (const [name, config, field] of invalid) {
      const response = await post(`/threads/${thread.thread_id}/runs/wait`, {
        assistant_id: "agent",
        input: ask(NOTES_QUESTION),
        config,
      });
      expect({ name, status: response.status, error: response.body["error"] }).toEqual({
        name,
        status: 422,
        error: "invalid_request",
      });
      expect({ name, message: String(response.body["message"]).startsWith(field) }).toEqual({ name, message: true });
    }
    for (const key of ["callbacks", "max_concurrency", "run_id", "recursionLimit", "runName"]) {
      const response = await post(`/threads/${thread.thread_id}/runs/wait`, {
        assistant_id: "agent",
        input: ask(NOTES_QUESTION),
        config: { [key]: 1 },
      });
      expect({ key, status: response.status, error: response.body["error"] }).toEqual({
        key,
        status: 422,
        error: "unsupported",
      });
      expect(String(response.body["message"])).toContain(`config.${key}`);
    }
    // Nothing was started by any refused request.
    expect(await bob.runs.list(thread.thread_id)).toHaveLength(0);
    // Null labels are nothing (a client that sends every key).
    await bob.runs.wait(thread.thread_id, "agent", {
      input: ask(NOTES_QUESTION),
      config: { tags: null, run_name: null, metadata: null, recursion_limit: null } as never,
    });
    const [run] = (await bob.runs.list(thread.thread_id)) as unknown as (RunRecord & { status: string })[];
    expect([run?.status, run?.kwargs["config"], run?.metadata]).toEqual(["success", undefined, {}]);
  }, 120_000);
});

describe("the store through the SDK", () => {
  it("put → get → delete → get answers null, as LangGraph's server does; another user's item is null too", async () => {
    await alice.store.putItem(["clients", "notes"], "plan", { week: 1 });
    expect((await alice.store.getItem(["clients", "notes"], "plan"))?.value).toEqual({ week: 1 });
    expect(await bob.store.getItem(["clients", "notes"], "plan")).toBeNull();
    await alice.store.deleteItem(["clients", "notes"], "plan");
    expect(await alice.store.getItem(["clients", "notes"], "plan")).toBeNull();
    // The raw answer: 200 with a JSON null body.
    const response = await sandbox.fetch(server, "/store/items?namespace=clients.notes&key=plan", { user: "alice" });
    expect([response.status, await response.text()]).toEqual([200, "null"]);
  }, 60_000);
});

function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: 1 };
  for (let index = 0; index < depth; index += 1) value = { inner: value };
  return value;
}
