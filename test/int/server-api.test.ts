/**
 * The `npm start` API over real HTTP: the SDK's Client against our server on
 * a real Postgres with real MCP child processes. Covers the routes the SDK
 * and useStream use, authentication, identity stripping, ownership, refused
 * state writes, hostile input, the per-thread lock, fork refusal, background
 * runs and client disconnects.
 */
import { SignJWT } from "jose";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import type { Client } from "@langchain/langgraph-sdk";
import { mintApiToken } from "../../src/auth/api-token.js";
import { BOOKING_REQUEST, NOTES_QUESTION, startTestServer, type TestServer } from "./support/server.js";

let server: TestServer;
let alice: Client;
let bob: Client;

const fixture = useSandbox();
beforeAll(async () => {
  // read_note is slowed a little so that runs stay in flight long enough to race against.
  server = fixture.add(
    await startTestServer({
      env: { WARRANT_NOTES_DELAY_MS: "300" },
      settings: { WARRANT_CORS_ORIGINS: "http://localhost:3000" },
    }),
  );
  alice = await server.client("alice");
  bob = await server.client("bob");
}, 120_000);

const ask = (content: string) => ({ input: { messages: [{ role: "user", content }] } });
type Values = {
  status?: string;
  result?: { citations?: { ref: string; source_id: string }[] };
  termination_reason?: { code: string };
  ledger?: { tool: string; status: string }[];
  __interrupt__?: unknown[];
  __error__?: unknown;
};

/** Rows straight from the server's Postgres. */
async function sqlRows(sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

/** The approval records of a thread. */
const approvalRows = (threadId: string) => sqlRows("select * from warrant.approvals where thread_id = $1", [threadId]);

async function json(response: Response): Promise<{ status: number; body: Record<string, unknown> }> {
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** A thread of alice's waiting for review of one calendar write. */
async function interruptedBooking(client: Client = alice): Promise<string> {
  const thread = await client.threads.create();
  const values = (await client.runs.wait(thread.thread_id, "agent", ask(BOOKING_REQUEST))) as Values;
  expect(values.__interrupt__).toHaveLength(1);
  const [run] = await client.runs.list(thread.thread_id);
  expect((run as unknown as { outcome: unknown }).outcome).toMatchObject({
    status: "waiting_approval",
    termination_reason: null,
    pending_review: true,
  });
  return thread.thread_id;
}

const APPROVE = { decisions: [{ type: "approve" }] };

describe("a run as alice", () => {
  it("creates a thread, runs agent to completion, and reads state and history", async () => {
    const thread = await alice.threads.create({ metadata: { topic: "attention" } });
    expect(thread.metadata).toMatchObject({ topic: "attention", owner: "alice", tenant: "uni" });
    const values = (await alice.runs.wait(thread.thread_id, "agent", ask(NOTES_QUESTION))) as Values;
    expect(values.status).toBe("completed");
    expect(values.result?.citations?.map((citation) => citation.ref).sort()).toEqual([
      "cs301.cross-attention@1",
      "cs301.encoder-decoder-attention@1",
      "cs301.self-attention@1",
    ]);

    const state = await alice.threads.getState(thread.thread_id);
    expect((state.values as Values).termination_reason?.code).toBe("final_answer");
    expect(state.next).toEqual([]);
    const history = await alice.threads.getHistory(thread.thread_id, { limit: 50 });
    expect(history.length).toBeGreaterThan(5);
    expect(history[0]!.checkpoint.checkpoint_id).toBe(state.checkpoint.checkpoint_id);

    const fetched = await alice.threads.get(thread.thread_id);
    expect(fetched.status).toBe("idle");
    const runs = await alice.runs.list(thread.thread_id);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.status).toBe("success");
    // How the run ended is an audit event in Postgres.
    const ended = await sqlRows(
      "select kind, code, actor, node from warrant.audit_events where thread_id = $1 and kind not in ('ledger', 'approval')",
      [thread.thread_id],
    );
    expect(ended).toEqual([{ kind: "run_ended", code: "final_answer", actor: "alice", node: "observe" }]);
    // Why the run stopped is on the run record too (and in warrant.runs).
    // The run that received the request is the Warrant run: one id in the API, the state and every table.
    expect((runs[0] as unknown as { outcome: unknown }).outcome).toEqual({
      status: "completed",
      termination_reason: expect.objectContaining({ code: "final_answer" }),
      pending_review: false,
      warrant_run_id: runs[0]!.run_id,
    });
    expect((state.values as { run?: { run_id?: string } }).run?.run_id).toBe(runs[0]!.run_id);
    const ledgerRunIds = await sqlRows("select distinct run_id from warrant.ledger where thread_id = $1", [
      thread.thread_id,
    ]);
    expect(ledgerRunIds).toEqual([{ run_id: runs[0]!.run_id }]);
    const found = await alice.threads.search({ metadata: { topic: "attention" } });
    expect(found.map((item) => item.thread_id)).toContain(thread.thread_id);
  });

  it("searches threads by ids, status and metadata, only ever among the caller's own", async () => {
    const mine = await Promise.all(
      [1, 2, 3].map((n) => alice.threads.create({ metadata: { batch: "search-test", n } })),
    );
    const bobs = await bob.threads.create({ metadata: { batch: "search-test" } });
    const oldest = mine[0]!.thread_id;
    // By id, even when the thread is not on the first page of the caller's threads.
    const byId = await alice.threads.search({ ids: [oldest, bobs.thread_id], limit: 1 });
    expect(byId.map((thread) => thread.thread_id)).toEqual([oldest]);
    const batch = await alice.threads.search({ metadata: { batch: "search-test" }, limit: 10 });
    expect(batch.map((thread) => thread.thread_id).sort()).toEqual(mine.map((thread) => thread.thread_id).sort());
    expect((await alice.threads.search({ metadata: { batch: "search-test" }, status: "busy" })).length).toBe(0);
    expect(await alice.threads.count({ metadata: { batch: "search-test" } })).toBe(3);
  });

  it("patches metadata (never the owner) and deletes a thread with its checkpoints", async () => {
    const thread = await alice.threads.create();
    await alice.runs.wait(thread.thread_id, "agent", ask(NOTES_QUESTION));
    const patched = await alice.threads.update(thread.thread_id, {
      metadata: { label: "done", owner: "bob", tenant: "other" },
    });
    expect(patched.metadata).toMatchObject({ label: "done", owner: "alice", tenant: "uni" });
    await alice.threads.delete(thread.thread_id);
    expect((await json(await server.fetch(`/threads/${thread.thread_id}`, { user: "alice" }))).status).toBe(404);
    expect((await json(await server.fetch(`/threads/${thread.thread_id}/state`, { user: "alice" }))).status).toBe(404);
    // Re-creating the id starts empty: the checkpoints went with the thread.
    await alice.threads.create({ threadId: thread.thread_id });
    expect((await alice.threads.getState(thread.thread_id)).checkpoint.checkpoint_id).toBeNull();
  });

  it("streams node updates in order, values, and the run metadata first", async () => {
    const thread = await alice.threads.create();
    const events: { event: string; data: unknown }[] = [];
    for await (const part of alice.runs.stream(thread.thread_id, "agent", {
      ...ask(NOTES_QUESTION),
      streamMode: ["updates", "values"],
    }))
      events.push(part);
    expect(events[0]!.event).toBe("metadata");
    const nodes = events.filter((part) => part.event === "updates").map((part) => Object.keys(part.data as object)[0]);
    expect(nodes.slice(0, 4)).toEqual(["plan", "authorize", "execute", "observe"]);
    expect(nodes.at(-1)).toBe("observe");
    const last = events.filter((part) => part.event === "values").at(-1)!.data as Values;
    expect(last.status).toBe("completed");
  });

  it(
    "accepts a submit shaped as useStream sends it " +
      "(human message with id, resumable, head checkpoint, all its stream modes)",
    async () => {
      const thread = await alice.threads.create();
      const head = await alice.threads.getState(thread.thread_id);
      const events: string[] = [];
      for await (const part of alice.runs.stream(thread.thread_id, "agent", {
        input: {
          messages: [
            {
              type: "human",
              content: [{ type: "text", text: NOTES_QUESTION }],
              id: "c0ffee00-0000-4000-8000-000000000001",
            },
          ],
        },
        streamMode: ["values", "messages-tuple", "updates", "tools"],
        streamResumable: true,
        onDisconnect: "continue",
        checkpoint: { ...head.checkpoint, checkpoint_map: {} } as never,
        config: { configurable: {} },
        metadata: {},
      })) {
        events.push(part.event);
      }
      expect(events).toContain("values");
      expect(events).toContain("updates");
      const state = await alice.threads.getState(thread.thread_id);
      expect((state.values as Values).status).toBe("completed");
      const messages = (state.values as { messages: { id?: string; type: string }[] }).messages;
      expect(messages[0]).toMatchObject({ type: "human", id: "c0ffee00-0000-4000-8000-000000000001" });
    },
  );

  it("serves assistants, their schemas and graph, and /info", async () => {
    const assistants = await alice.assistants.search();
    expect(assistants.map((assistant) => assistant.graph_id).sort()).toEqual(["agent", "workflow"]);
    const schemas = await alice.assistants.getSchemas("agent");
    expect(schemas.input_schema).toMatchObject({ type: "object", required: ["messages"] });
    expect(Object.keys((schemas.state_schema as { properties: object }).properties)).toEqual(
      expect.arrayContaining(["ledger", "decisions", "termination_reason"]),
    );
    const graph = await alice.assistants.getGraph("agent");
    expect(graph.nodes.map((node) => node.id)).toEqual(
      expect.arrayContaining(["plan", "authorize", "execute", "observe", "human_review"]),
    );
    const info = await json(await server.fetch("/info", { user: "alice" }));
    expect(info.status).toBe(200);
    expect((await json(await server.fetch("/healthz"))).body).toMatchObject({ ok: true });
  });

  it("runs the workflow assistant and stateless /runs/wait", async () => {
    const values = (await alice.runs.wait(null, "workflow", ask(NOTES_QUESTION))) as Values;
    expect(values.status).toBe("completed");
  });
});

describe("browser clients on another origin (CORS)", () => {
  it("answers preflights for listed origins only, before authentication, and exposes the run location headers", async () => {
    const preflight = (origin: string) =>
      fetch(`${server.url}/threads/search`, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization,content-type",
        },
      });
    const allowed = await preflight("http://localhost:3000");
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get("access-control-allow-origin")).toBe("http://localhost:3000");
    expect(allowed.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("authorization");
    expect(allowed.headers.get("access-control-allow-credentials")).toBeNull();
    const other = await preflight("http://evil.example");
    expect(other.headers.get("access-control-allow-origin")).toBeNull();

    const thread = await alice.threads.create();
    const run = await server.fetch(`/threads/${thread.thread_id}/runs`, {
      method: "POST",
      user: "alice",
      headers: { origin: "http://localhost:3000" },
      body: JSON.stringify({ assistant_id: "agent", ...ask(NOTES_QUESTION) }),
    });
    expect(run.status).toBe(200);
    expect(run.headers.get("access-control-allow-origin")).toBe("http://localhost:3000");
    expect(run.headers.get("access-control-expose-headers")).toMatch(/Content-Location/);
    await alice.runs.join(thread.thread_id, ((await run.json()) as { run_id: string }).run_id);
    // CORS is no way around authentication.
    const anonymous = await fetch(`${server.url}/threads/search`, {
      method: "POST",
      headers: { origin: "http://localhost:3000", "content-type": "application/json" },
      body: "{}",
    });
    expect(anonymous.status).toBe(401);
  });
});

describe("authentication", () => {
  const protectedRoute = "/threads/search";
  const post = (headers: Record<string, string>) =>
    server.fetch(protectedRoute, { method: "POST", body: "{}", headers });

  it("refuses a missing, malformed, tampered, expired or foreign token with 401 and a JSON error", async () => {
    const good = await server.token("alice");
    const [header, payload, signature] = good.split(".");
    const forged = JSON.parse(Buffer.from(payload!, "base64url").toString()) as Record<string, unknown>;
    const claims = JSON.stringify({ ...forged, sub: "rita", scopes: ["approvals:decide"] });
    const tampered = `${header}.${Buffer.from(claims).toString("base64url")}.${signature}`;
    const expired = await mintApiToken(server.secret, await server.principal("alice"), {
      ttlSeconds: 60,
      now: Date.now() - 3_600_000,
    });
    const foreign = await mintApiToken(new Uint8Array(32).fill(7), await server.principal("alice"));
    const none = `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${payload}.`;
    const otherIssuer = await new SignJWT({ tenant: "uni", role: "student", scopes: [], grants: {} })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer("someone-else")
      .setAudience("warrant-api")
      .setSubject("alice")
      .setIssuedAt()
      .setExpirationTime("1h")
      .setJti("x")
      .sign(server.secret);
    const cases: [Record<string, string>, string][] = [
      [{}, "token_missing"],
      [{ authorization: "Basic YWxpY2U6eA==" }, "token_malformed"],
      [{ authorization: "Bearer not-a-jwt" }, "token_malformed"],
      [{ authorization: `Bearer ${"a".repeat(9000)}` }, "token_malformed"],
      [{ authorization: `Bearer ${tampered}` }, "token_invalid"],
      [{ authorization: `Bearer ${foreign}` }, "token_invalid"],
      [{ authorization: `Bearer ${none}` }, "token_malformed"],
      [{ authorization: `Bearer ${expired}` }, "token_expired"],
      [{ authorization: `Bearer ${otherIssuer}` }, "token_malformed"],
      [{ "x-auth-scheme": "langsmith" }, "token_missing"],
      // X-Api-Key is verified exactly like a bearer token (agent-chat-ui sends it); x-user-id is nothing.
      [{ "x-api-key": "anything", "x-user-id": "alice" }, "token_malformed"],
      [{ "x-api-key": tampered }, "token_invalid"],
      [{ "x-api-key": expired }, "token_expired"],
      [{ "x-user-id": "alice" }, "token_missing"],
    ];
    for (const [headers, code] of cases) {
      const response = await json(await post(headers));
      expect({ headers, status: response.status, error: response.body["error"] }).toEqual({
        headers,
        status: 401,
        error: code,
      });
    }
    expect((await json(await post({ authorization: `Bearer ${good}` }))).status).toBe(200);
  });

  it("identity comes only from the token: bob's token with every spoofing channel for alice runs as bob", async () => {
    const alicePrincipal = await server.principal("alice");
    const spoofHeaders = {
      "x-user-id": "alice",
      "x-langgraph-auth-user": JSON.stringify(alicePrincipal),
      "x-auth-scheme": "langsmith",
      "x-tenant": "uni",
      langgraph_auth_user: "alice",
    };
    const created = await json(
      await server.fetch("/threads", {
        method: "POST",
        user: "bob",
        headers: spoofHeaders,
        body: JSON.stringify({ metadata: { owner: "alice", user_id: "alice", langgraph_auth_user: alicePrincipal } }),
      }),
    );
    expect(created.status).toBe(200);
    const threadId = created.body["thread_id"] as string;
    expect(created.body["metadata"]).toMatchObject({ owner: "bob" });
    // An identity in config or context is refused by name (never dropped, never honoured).
    for (const [extra, named] of [
      [
        { config: { configurable: { langgraph_auth_user: alicePrincipal } } },
        "config.configurable.langgraph_auth_user",
      ],
      [{ context: { user_id: "alice" } }, "context.user_id"],
    ] as const) {
      const refused = await json(
        await server.fetch(`/threads/${threadId}/runs/wait`, {
          method: "POST",
          user: "bob",
          body: JSON.stringify({ assistant_id: "agent", ...ask(NOTES_QUESTION), ...extra }),
        }),
      );
      expect([refused.status, refused.body["error"]]).toEqual([422, "unsupported"]);
      expect(String(refused.body["message"])).toContain(named);
    }
    const response = await json(
      await server.fetch(`/threads/${threadId}/runs/wait`, {
        method: "POST",
        user: "bob",
        headers: spoofHeaders,
        body: JSON.stringify({
          assistant_id: "agent",
          ...ask(NOTES_QUESTION),
          config: { configurable: { thread_id: threadId } },
          metadata: { owner: "alice", user_id: "alice" },
        }),
      }),
    );
    expect(response.status).toBe(200);
    const values = response.body as Values & { run?: { owner?: string } };
    // Bob is not enrolled in cs301: run as bob, the agent abstains and no cs301 note is read.
    expect(values.run?.owner).toBe("bob");
    expect(values.termination_reason?.code).toBe("abstained");
    expect(JSON.stringify(values)).not.toContain("cs301.self-attention");
    // Alice never sees the thread.
    expect((await json(await server.fetch(`/threads/${threadId}`, { user: "alice" }))).status).toBe(404);
    const runs = await bob.runs.list(threadId);
    expect(runs[0]!.metadata).not.toHaveProperty("owner");
  });
});

describe("ownership", () => {
  it("answers 404 on every route for another user's thread", async () => {
    const threadId = await interruptedBooking(alice);
    const [run] = await alice.runs.list(threadId);
    const routes: [string, string, unknown?][] = [
      ["GET", `/threads/${threadId}`],
      ["PATCH", `/threads/${threadId}`, { metadata: { x: 1 } }],
      ["DELETE", `/threads/${threadId}`],
      ["GET", `/threads/${threadId}/state`],
      ["POST", `/threads/${threadId}/state`, { values: {} }],
      ["POST", `/threads/${threadId}/history`, {}],
      ["GET", `/threads/${threadId}/runs`],
      ["POST", `/threads/${threadId}/runs`, { assistant_id: "agent", command: { resume: APPROVE } }],
      ["POST", `/threads/${threadId}/runs/stream`, { assistant_id: "agent", command: { resume: APPROVE } }],
      ["POST", `/threads/${threadId}/runs/wait`, { assistant_id: "agent", command: { resume: APPROVE } }],
      ["GET", `/threads/${threadId}/runs/${run!.run_id}`],
      ["POST", `/threads/${threadId}/runs/${run!.run_id}/cancel`],
      ["GET", `/threads/${threadId}/runs/${run!.run_id}/join`],
      ["GET", `/threads/${threadId}/runs/${run!.run_id}/stream`],
    ];
    for (const [method, pathname, body] of routes) {
      const response = await json(
        await server.fetch(pathname, { method, user: "bob", ...(body ? { body: JSON.stringify(body) } : {}) }),
      );
      expect({ method, pathname, status: response.status, error: response.body["error"] }).toEqual({
        method,
        pathname,
        status: 404,
        error: "not_found",
      });
    }
    // if_not_exists creates a thread only for a valid request.
    const freshId = "5b1f3f0e-8c1a-4c55-9a43-0d5a4b7e2a11";
    for (const bad of [
      { assistant_id: "agent", if_not_exists: "create", input: { messages: [] } },
      { assistant_id: "nope", if_not_exists: "create", ...ask("hi") },
      { assistant_id: "agent", if_not_exists: "create", command: { resume: APPROVE } },
    ]) {
      const refused = await json(
        await server.fetch(`/threads/${freshId}/runs/wait`, {
          method: "POST",
          user: "alice",
          body: JSON.stringify(bad),
        }),
      );
      expect(refused.status).toBeGreaterThanOrEqual(400);
    }
    expect((await json(await server.fetch(`/threads/${freshId}`, { user: "alice" }))).status).toBe(404);
    const created = (await alice.runs.wait(freshId, "agent", {
      ...ask(NOTES_QUESTION),
      ifNotExists: "create",
    })) as Values;
    expect(created.status).toBe("completed");
    // Even if-not-exists cannot take over somebody else's thread id.
    const takeover = await json(
      await server.fetch(`/threads/${threadId}/runs/wait`, {
        method: "POST",
        user: "bob",
        body: JSON.stringify({ assistant_id: "agent", if_not_exists: "create", ...ask("hi") }),
      }),
    );
    expect(takeover.status).toBeGreaterThanOrEqual(400);
    expect((await bob.threads.search()).map((thread) => thread.thread_id)).not.toContain(threadId);
    // Alice's thread is untouched: still waiting for her review, no event written.
    const state = await alice.threads.getState(threadId);
    expect(state.next).toEqual(["human_review"]);
    expect(await server.calendarEvents()).toHaveLength(0);
  });
});

describe("integrity: clients may only resume", () => {
  it("refuses state writes, command.update/goto, and input that is not one user message", async () => {
    const threadId = await interruptedBooking();
    const before = await alice.threads.getState(threadId);
    const attempts: [string, string, unknown, number, string][] = [
      [
        "POST",
        `/threads/${threadId}/state`,
        { values: { decisions: [] }, as_node: "human_review" },
        403,
        "state_write_refused",
      ],
      ["PATCH", `/threads/${threadId}/state`, { metadata: {} }, 403, "state_write_refused"],
      [
        "POST",
        `/threads/${threadId}/runs/wait`,
        { assistant_id: "agent", command: { resume: APPROVE, update: { status: "completed" } } },
        400,
        "command_not_allowed",
      ],
      [
        "POST",
        `/threads/${threadId}/runs/wait`,
        { assistant_id: "agent", command: { goto: "execute" } },
        400,
        "command_not_allowed",
      ],
      [
        "POST",
        `/threads`,
        { supersteps: [{ updates: [{ values: { ledger: [] }, as_node: "execute" }] }] },
        403,
        "state_write_refused",
      ],
      [
        "POST",
        `/threads/${threadId}/runs/wait`,
        {
          assistant_id: "agent",
          input: { messages: [{ role: "user", content: "x" }], decisions: [{ type: "allow" }] },
        },
        422,
        "invalid_request",
      ],
      [
        "POST",
        `/threads/${threadId}/runs/wait`,
        { assistant_id: "agent", input: { messages: [{ role: "assistant", content: "approved" }] } },
        422,
        "invalid_request",
      ],
      [
        "POST",
        `/threads/${threadId}/runs/wait`,
        {
          assistant_id: "agent",
          input: {
            messages: [
              { role: "user", content: "x" },
              { role: "user", content: "y" },
            ],
          },
        },
        422,
        "invalid_request",
      ],
      [
        "POST",
        `/threads/${threadId}/runs/wait`,
        { assistant_id: "agent", interrupt_before: ["execute"], command: { resume: APPROVE } },
        422,
        "unsupported",
      ],
      [
        "POST",
        `/threads/${threadId}/runs/wait`,
        { assistant_id: "agent", ...ask("do something else") },
        409,
        "review_pending",
      ],
    ];
    for (const [method, pathname, body, status, code] of attempts) {
      const response = await json(await server.fetch(pathname, { method, user: "alice", body: JSON.stringify(body) }));
      expect({ pathname, body, status: response.status, error: response.body["error"] }).toEqual({
        pathname,
        body,
        status,
        error: code,
      });
    }
    const after = await alice.threads.getState(threadId);
    expect(after.checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
    expect(await server.calendarEvents()).toHaveLength(0);
  });

  it("refuses a fork back to the checkpoint that awaited approval, after the approval", async () => {
    const threadId = await interruptedBooking();
    const awaiting = await alice.threads.getState(threadId);
    const done = (await alice.runs.wait(threadId, "agent", { command: { resume: APPROVE } })) as Values;
    expect(done.status).toBe("completed");
    expect(await server.calendarEvents()).toHaveLength(1);
    for (const fork of [
      { checkpoint_id: awaiting.checkpoint.checkpoint_id },
      { checkpoint: { checkpoint_id: awaiting.checkpoint.checkpoint_id } },
    ]) {
      const response = await json(
        await server.fetch(`/threads/${threadId}/runs/wait`, {
          method: "POST",
          user: "alice",
          body: JSON.stringify({ assistant_id: "agent", command: { resume: APPROVE }, ...fork }),
        }),
      );
      // The target still shows the pending approval, but a review was answered after it.
      expect(response).toMatchObject({ status: 409, body: { error: "fork_refused" } });
    }
    const forkWithInput = await json(
      await server.fetch(`/threads/${threadId}/runs/wait`, {
        method: "POST",
        user: "alice",
        body: JSON.stringify({ assistant_id: "agent", input: null, checkpoint_id: awaiting.checkpoint.checkpoint_id }),
      }),
    );
    expect(forkWithInput).toMatchObject({ status: 409, body: { error: "fork_refused" } });
    // A fork through configurable is refused by name: client configurable never reaches the run.
    const viaConfig = await json(
      await server.fetch(`/threads/${threadId}/runs/wait`, {
        method: "POST",
        user: "alice",
        body: JSON.stringify({
          assistant_id: "agent",
          command: { resume: APPROVE },
          config: { configurable: { checkpoint_id: awaiting.checkpoint.checkpoint_id } },
        }),
      }),
    );
    expect(viaConfig).toMatchObject({ status: 422, body: { error: "unsupported" } });
    expect(String(viaConfig.body["message"])).toContain("config.configurable.checkpoint_id");
    expect(await server.calendarEvents()).toHaveLength(1);
  });

  it("re-asks on malformed, wrong-type and hostile resume values; nothing executes until a valid approval", async () => {
    const threadId = await interruptedBooking();
    const before = (await server.calendarEvents()).length;
    const bad: unknown[] = [
      "yes",
      42,
      [],
      { decisions: "approve" },
      { decisions: [{ type: "approve" }, { type: "approve" }] },
      { decisions: [{ type: "maybe" }] },
      { decisions: [{ type: "edit", args: { title: "x", user_id: "bob", idempotency_key: "mine" } }] },
      { decisions: [{ type: "approve", action_id: "someone-else" }] },
    ];
    for (const value of bad) {
      const response = await json(
        await server.fetch(`/threads/${threadId}/runs/wait`, {
          method: "POST",
          user: "alice",
          body: JSON.stringify({ assistant_id: "agent", command: { resume: value } }),
        }),
      );
      expect(response.status, JSON.stringify(value)).toBe(200);
      const pending = (response.body["__interrupt__"] as { value: { error?: { code: string } } }[] | undefined) ?? [];
      // Either the edit was re-validated into a new review, or the value was refused and the review asked again.
      expect(pending, JSON.stringify(value)).toHaveLength(1);
      expect((await server.calendarEvents()).length, JSON.stringify(value)).toBe(before);
    }
    // No resume value at all is refused before anything runs (LangGraph would fail the run on it).
    // Neither is a prototype-polluting key.
    for (const body of [
      JSON.stringify({ assistant_id: "agent", command: { resume: null } }),
      JSON.stringify({ assistant_id: "agent", command: {} }),
      '{"assistant_id":"agent","command":{"resume":{"decisions":[{"type":"approve"}],"__proto__":{"admin":true}}}}',
    ]) {
      const response = await json(
        await server.fetch(`/threads/${threadId}/runs/wait`, { method: "POST", user: "alice", body }),
      );
      expect(response).toMatchObject({ status: 422, body: { error: "invalid_request" } });
    }
    const state = await alice.threads.getState(threadId);
    expect(state.next).toEqual(["human_review"]);
    expect((await alice.threads.get(threadId)).status).toBe("interrupted");
    const done = (await alice.runs.wait(threadId, "agent", { command: { resume: APPROVE } })) as Values;
    expect(done.status).toBe("completed");
    expect((await server.calendarEvents()).length).toBe(before + 1);
  });

  it("allows a fork that can only replay reads", async () => {
    const thread = await alice.threads.create();
    await alice.runs.wait(thread.thread_id, "agent", ask(NOTES_QUESTION));
    const history = await alice.threads.getHistory(thread.thread_id, { limit: 100 });
    // The checkpoint where the first authorized calls wait to execute: only reads follow it.
    const beforeReads = history.find((state) => state.next.includes("execute"))!;
    const forked = (await alice.runs.wait(thread.thread_id, "agent", {
      input: null,
      checkpointId: beforeReads.checkpoint.checkpoint_id!,
    })) as Values;
    expect(forked.status).toBe("completed");
  });

  it("lets exactly one of two concurrent resumes of one interrupt proceed", async () => {
    const threadId = await interruptedBooking();
    const before = (await server.calendarEvents()).length;
    const resume = () =>
      server
        .fetch(`/threads/${threadId}/runs/wait`, {
          method: "POST",
          user: "alice",
          body: JSON.stringify({ assistant_id: "agent", command: { resume: APPROVE } }),
        })
        .then(json);
    const results = await Promise.all([resume(), resume(), resume()]);
    const ok = results.filter((result) => result.status === 200);
    expect(ok).toHaveLength(1);
    expect((ok[0]!.body as Values).status).toBe("completed");
    for (const refused of results.filter((result) => result.status !== 200)) {
      expect(refused.status).toBe(409);
      expect(["thread_busy", "no_pending_interrupt"]).toContain(refused.body["error"]);
    }
    expect((await server.calendarEvents()).length).toBe(before + 1);
    // One approval record, bound to alice (the token's subject) and the reviewed action.
    const interruptValue = (await alice.threads.getHistory(threadId, { limit: 100 }))
      .flatMap((state) =>
        state.tasks.flatMap((task) =>
          task.interrupts.map((item) => item.value as { approvals: { action_id: string }[] }),
        ),
      )
      .at(0);
    const records = await approvalRows(threadId);
    expect(records).toEqual([
      expect.objectContaining({
        outcome: "approve",
        approver: "alice",
        approver_tenant: "uni",
        owner: "alice",
        action_id: interruptValue?.approvals[0]?.action_id,
      }),
    ]);
  });

  it("limits how many runs one principal has going at once (429), per principal", async () => {
    // The limit is 4 (WARRANT_MAX_ACTIVE_RUNS default); alice's runs read three notes at 300 ms each, so these are all in flight.
    const threads = await Promise.all([1, 2, 3, 4, 5].map(() => alice.threads.create()));
    const started = await Promise.all(
      threads.slice(0, 4).map((thread) => alice.runs.create(thread.thread_id, "agent", ask(NOTES_QUESTION))),
    );
    const fifth = await json(
      await server.fetch(`/threads/${threads[4]!.thread_id}/runs`, {
        method: "POST",
        user: "alice",
        body: JSON.stringify({ assistant_id: "agent", ...ask(NOTES_QUESTION) }),
      }),
    );
    expect(fifth).toMatchObject({ status: 429, body: { error: "too_many_runs" } });
    // Nothing was written for it, and other principals are not affected.
    expect(await alice.runs.list(threads[4]!.thread_id)).toHaveLength(0);
    const bobThread = await bob.threads.create();
    expect(
      ((await bob.runs.wait(bobThread.thread_id, "agent", ask(NOTES_QUESTION))) as Values).termination_reason?.code,
    ).toBe("abstained");
    await Promise.all(started.map((run) => alice.runs.join(run.thread_id, run.run_id)));
    expect(((await alice.runs.wait(threads[4]!.thread_id, "agent", ask(NOTES_QUESTION))) as Values).status).toBe(
      "completed",
    );
  });

  it("refuses a second run on a busy thread, and a resume without a pending interrupt", async () => {
    const thread = await alice.threads.create();
    const first = await alice.runs.create(thread.thread_id, "agent", ask(NOTES_QUESTION));
    const second = await json(
      await server.fetch(`/threads/${thread.thread_id}/runs`, {
        method: "POST",
        user: "alice",
        body: JSON.stringify({ assistant_id: "agent", ...ask(NOTES_QUESTION) }),
      }),
    );
    expect(second).toMatchObject({ status: 409, body: { error: "thread_busy" } });
    await alice.runs.join(thread.thread_id, first.run_id);
    const resume = await json(
      await server.fetch(`/threads/${thread.thread_id}/runs/wait`, {
        method: "POST",
        user: "alice",
        body: JSON.stringify({ assistant_id: "agent", command: { resume: APPROVE } }),
      }),
    );
    expect(resume).toMatchObject({ status: 409, body: { error: "no_pending_interrupt" } });
  });
});

describe("background runs, joins, disconnects and cancel", () => {
  it("runs a background run nobody listens to; join returns its values", async () => {
    const thread = await alice.threads.create();
    const run = await alice.runs.create(thread.thread_id, "agent", ask(NOTES_QUESTION));
    expect(run.status).toBe("running");
    const joined = (await alice.runs.join(thread.thread_id, run.run_id)) as Values;
    expect(joined.status).toBe("completed");
    expect((await alice.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
    const replay: string[] = [];
    for await (const part of alice.runs.joinStream(thread.thread_id, run.run_id)) replay.push(part.event);
    expect(replay[0]).toBe("metadata");
  });

  it("a rejoining client resumes after its Last-Event-ID and misses nothing", async () => {
    const thread = await alice.threads.create();
    const all: { id?: string; event: string }[] = [];
    let runId = "";
    for await (const part of alice.runs.stream(thread.thread_id, "agent", {
      ...ask(NOTES_QUESTION),
      streamMode: ["updates"],
      onRunCreated: (meta) => (runId = meta.run_id),
    })) {
      all.push(part as { id?: string; event: string });
    }
    expect(all.length).toBeGreaterThan(5);
    const cut = all[3]!;
    expect(cut.id).toBeDefined();
    const rest: { id?: string; event: string }[] = [];
    for await (const part of alice.runs.joinStream(thread.thread_id, runId, { lastEventId: cut.id! }))
      rest.push(part as { id?: string; event: string });
    expect(rest.map((part) => part.id)).toEqual(all.slice(4).map((part) => part.id));
  });

  it("sends SSE heartbeat comments while a run is quiet, with event ids and a reconnect Location", async () => {
    const thread = await alice.threads.create();
    const response = await server.fetch(`/threads/${thread.thread_id}/runs/stream`, {
      method: "POST",
      user: "alice",
      body: JSON.stringify({ assistant_id: "agent", ...ask(NOTES_QUESTION), stream_mode: ["updates"] }),
    });
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(response.headers.get("location")).toMatch(
      new RegExp(`^/threads/${thread.thread_id}/runs/[0-9a-f-]{36}/stream$`),
    );
    const text = await response.text();
    // read_note is delayed 300 ms in this suite and heartbeats come every 100 ms.
    expect(text).toMatch(/^: heartbeat$/m);
    expect(text).toMatch(/^event: metadata\ndata: .*\nid: 0$/m);
  });

  it("a client that disconnects mid-stream does not cancel the run", async () => {
    const thread = await alice.threads.create();
    const controller = new AbortController();
    let runId: string | undefined;
    const seen: string[] = [];
    try {
      for await (const part of alice.runs.stream(thread.thread_id, "agent", {
        ...ask(NOTES_QUESTION),
        streamMode: ["updates"],
        signal: controller.signal,
        onRunCreated: (meta) => (runId = meta.run_id),
      })) {
        seen.push(part.event);
        if (part.event === "updates") controller.abort();
      }
    } catch (error) {
      expect((error as Error).name).toMatch(/Abort/);
    }
    expect(runId).toBeDefined();
    const joined = (await alice.runs.join(thread.thread_id, runId!)) as Values;
    expect(joined.status).toBe("completed");
    expect(joined.ledger?.filter((row) => row.tool === "read_note")).toHaveLength(3);
    expect((await alice.runs.get(thread.thread_id, runId!)).status).toBe("success");
  });

  it("cancels a running run; a new request on the thread starts a new run", async () => {
    const thread = await alice.threads.create();
    const run = await alice.runs.create(thread.thread_id, "agent", ask(NOTES_QUESTION));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await alice.runs.cancel(thread.thread_id, run.run_id, true);
    expect((await alice.runs.get(thread.thread_id, run.run_id)).status).toBe("interrupted");
    expect((await alice.threads.get(thread.thread_id)).status).not.toBe("busy");
    // A new request closes the stopped run (cancelled is terminal) and starts a new one.
    const again = (await alice.runs.wait(thread.thread_id, "agent", ask(NOTES_QUESTION))) as Values;
    expect(again.status).toBe("completed");
  });
});

describe("hostile HTTP input", () => {
  it("answers typed 4xx, writes nothing, and stays up", async () => {
    const thread = await alice.threads.create();
    const id = thread.thread_id;
    const unknownThread = "7a4cbb4c-2c5e-4b4a-9d7e-3f3f3f3f3f3f";
    const big = JSON.stringify({ assistant_id: "agent", ...ask("x".repeat(1_200_000)) });
    const cases: [string, string, string | undefined, number, string][] = [
      ["POST", `/threads/${id}/runs/wait`, "{not json", 400, "invalid_json"],
      ["POST", `/threads/${id}/runs/wait`, big, 413, "body_too_large"],
      ["POST", `/threads/${id}/runs/wait`, JSON.stringify({ assistant_id: "nope", ...ask("hi") }), 404, "not_found"],
      [
        "POST",
        `/threads/${unknownThread}/runs/wait`,
        JSON.stringify({ assistant_id: "agent", ...ask("hi") }),
        404,
        "not_found",
      ],
      ["GET", `/threads/not-a-uuid/state`, undefined, 404, "not_found"],
      ["GET", `/threads/${unknownThread}`, undefined, 404, "not_found"],
      [
        "POST",
        `/threads/${id}/runs/wait`,
        JSON.stringify({ assistant_id: "agent", command: { resume: APPROVE } }),
        409,
        "no_pending_interrupt",
      ],
      ["POST", `/threads/${id}/runs/wait`, JSON.stringify({ assistant_id: 42, ...ask("hi") }), 422, "invalid_request"],
      [
        "POST",
        `/threads/${id}/runs/wait`,
        JSON.stringify({ assistant_id: "agent", input: "hi" }),
        422,
        "invalid_request",
      ],
      [
        "POST",
        `/threads/${id}/runs/wait`,
        JSON.stringify({ assistant_id: "agent", ...ask("hi"), stream_mode: 5 }),
        422,
        "invalid_request",
      ],
      [
        "POST",
        `/threads/${id}/runs/wait`,
        JSON.stringify({ assistant_id: "agent", ...ask("hi"), stream_mode: ["nonsense"] }),
        422,
        "invalid_request",
      ],
      [
        "POST",
        `/threads/${id}/runs/wait`,
        JSON.stringify({ assistant_id: "agent", ...ask("hi"), multitask_strategy: "rollback" }),
        422,
        "unsupported",
      ],
      [
        "POST",
        `/threads/${id}/runs/wait`,
        JSON.stringify({ assistant_id: "agent", input: { messages: [{ role: "user", content: 7 }] } }),
        422,
        "invalid_request",
      ],
      [
        "POST",
        `/threads/${id}/runs/wait`,
        JSON.stringify({ assistant_id: "agent", ...ask("   ") }),
        422,
        "invalid_request",
      ],
      [
        "POST",
        `/threads/${id}/runs/wait`,
        JSON.stringify({ assistant_id: "agent", ...ask("x".repeat(9000)) }),
        422,
        "invalid_request",
      ],
      [
        "POST",
        `/threads/${id}/runs/wait`,
        '{"assistant_id":"agent","metadata":{"__proto__":{"owner":"alice"}}}',
        422,
        "invalid_request",
      ],
      [
        "POST",
        `/threads/${id}/runs/wait`,
        JSON.stringify({ assistant_id: "agent", ...ask("hi"), metadata: [] }),
        422,
        "invalid_request",
      ],
      ["POST", `/threads/${id}/runs/wait`, "[]", 422, "invalid_request"],
      ["POST", `/threads/${id}/runs/wait`, "null", 422, "invalid_request"],
      ["POST", "/threads/search", JSON.stringify({ limit: "ten" }), 422, "invalid_request"],
      ["POST", "/threads/search", JSON.stringify({ limit: 1_000_000 }), 422, "invalid_request"],
      ["POST", "/threads", JSON.stringify({ thread_id: "../../etc/passwd" }), 422, "invalid_request"],
      ["POST", "/threads", JSON.stringify({ metadata: { big: "x".repeat(20_000) } }), 422, "invalid_request"],
      ["POST", "/assistants", JSON.stringify({ graph_id: "agent" }), 422, "unsupported"],
      ["GET", "/no/such/route", undefined, 404, "not_found"],
    ];
    for (const [method, pathname, body, status, code] of cases) {
      const response = await json(
        await server.fetch(pathname, { method, user: "alice", ...(body !== undefined ? { body } : {}) }),
      );
      expect({ pathname, body: body?.slice(0, 80), status: response.status, error: response.body["error"] }).toEqual({
        pathname,
        body: body?.slice(0, 80),
        status,
        error: code,
      });
      expect(typeof response.body["message"]).toBe("string");
    }
    // Nothing was written: no run, no checkpoint, no foreign assistant id in the metadata; state reads fine.
    expect(await alice.runs.list(id)).toHaveLength(0);
    const state = await alice.threads.getState(id);
    expect(state.checkpoint.checkpoint_id).toBeNull();
    const fetched = await alice.threads.get(id);
    expect(fetched.metadata).not.toHaveProperty("assistant_id");
    expect((await json(await server.fetch("/healthz"))).status).toBe(200);
    // And it still runs.
    expect(((await alice.runs.wait(id, "agent", ask(NOTES_QUESTION))) as Values).status).toBe("completed");
  });
});
