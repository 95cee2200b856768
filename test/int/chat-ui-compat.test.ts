/**
 * agent-chat-ui against `npm start`, unchanged: the requests it sends, byte
 * for byte (bodies written out from its source and @langchain/langgraph-sdk's
 * client), plus the SDK `Client` built the way it builds one (`apiKey`, so
 * the token travels as `X-Api-Key`). Real server, real Postgres, real MCP
 * child processes; the booking planner proposes one calendar write that
 * pauses for review.
 *
 * What agent-chat-ui sends (read from its source):
 * - `/info` with `X-Api-Key` (and `X-Auth-Scheme` when configured) to check the connection;
 * - the history list: `threads.search({ metadata: { graph_id: "agent" }, limit: 100 })`;
 * - a new message: `submit({ messages: [...placeholders, human] }, options)` with the options
 *   `{ streamMode: ["values"], streamSubgraphs: true, streamResumable: true }`,
 *   where placeholders are made-up tool messages for every tool call without a result;
 * - approve / edit / reject: `submit({}, { command: { resume: { decisions } } })`;
 * - "Mark as resolved": `submit({}, { command: { goto: "__end__" } })`.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { Client } from "@langchain/langgraph-sdk";
import { mintApiToken } from "../../src/auth/api-token.js";
import { BOOKING_REQUEST, NOTES_QUESTION, startTestServer, type TestServer } from "./support/server.js";

const ORIGIN = "http://localhost:3000";
let server: TestServer;
let aliceToken: string;
/** The SDK client exactly as agent-chat-ui's `createClient` builds it. */
let chatUi: Client;

const fixture = useSandbox();
beforeAll(async () => {
  server = fixture.add(await startTestServer({ settings: { WARRANT_CORS_ORIGINS: ORIGIN } }));
  aliceToken = await server.token("alice");
  chatUi = new Client({ apiUrl: server.url, apiKey: aliceToken });
}, 120_000);

/** A request as the browser sends it: the token in X-Api-Key, never Authorization. */
function send(
  pathname: string,
  init: { method?: string; body?: unknown; apiKey?: string | undefined; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  const apiKey = "apiKey" in init ? init.apiKey : aliceToken;
  if (apiKey !== undefined) headers["X-Api-Key"] = apiKey;
  if (init.body !== undefined) headers["Content-Type"] = "application/json";
  return fetch(`${server.url}${pathname}`, {
    method: init.method ?? "GET",
    headers,
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
}

async function json(response: Response): Promise<{ status: number; body: Record<string, unknown> }> {
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** The SSE events of a finished stream. */
async function events(response: Response): Promise<{ event: string; data: unknown }[]> {
  expect(response.status).toBe(200);
  const text = await response.text();
  return text
    .split("\n\n")
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      return event && data !== undefined ? { event, data: JSON.parse(data) as unknown } : undefined;
    })
    .filter((item): item is { event: string; data: unknown } => item !== undefined);
}

/**
 * A new message as useStream sends it for agent-chat-ui's `handleSubmit`
 * (client.runs.stream's body, key order kept; undefined keys drop out of JSON).
 */
function newMessageBody(text: string, placeholders: { tool_call_id: string; name: string }[] = []) {
  return {
    input: {
      messages: [
        ...placeholders.map((call) => ({
          type: "tool",
          tool_call_id: call.tool_call_id,
          id: `do-not-render-${randomUUID()}`,
          name: call.name,
          content: "Successfully handled tool call.",
        })),
        { id: randomUUID(), type: "human", content: [{ type: "text", text }] },
      ],
    },
    stream_mode: ["values"],
    stream_subgraphs: true,
    stream_resumable: true,
    assistant_id: "agent",
    on_disconnect: "continue",
  };
}

/** `submit({}, { command })` as useStream sends it (not resumable, so on_disconnect "cancel"). */
function commandBody(command: Record<string, unknown>) {
  return {
    input: {},
    command,
    stream_mode: ["values"],
    stream_resumable: false,
    assistant_id: "agent",
    on_disconnect: "cancel",
  };
}

type Interrupt = {
  action_requests: { name: string; args: Record<string, unknown> }[];
  approvals: { action_id: string }[];
};

/** A thread (created the way useStream creates one) whose booking waits for review. */
async function pendingBooking(): Promise<{ threadId: string; interrupt: Interrupt }> {
  const thread = await json(await send("/threads", { method: "POST", body: { metadata: {} } }));
  const threadId = thread.body["thread_id"] as string;
  const streamed = await events(
    await send(`/threads/${threadId}/runs/stream`, { method: "POST", body: newMessageBody(BOOKING_REQUEST) }),
  );
  const last = streamed.filter((part) => part.event === "values").at(-1)?.data as
    | { __interrupt__?: unknown }
    | undefined;
  expect(last).toBeDefined();
  const state = await chatUi.threads.getState(threadId);
  const interrupt = state.tasks[0]?.interrupts[0]?.value as Interrupt;
  expect(interrupt.action_requests[0]!.name).toBe("create_study_event");
  return { threadId, interrupt };
}

describe("connecting", () => {
  it("answers /info without a token, and says nothing about users", async () => {
    const info = await json(await send("/info", { apiKey: undefined }));
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({ name: "warrant", flags: { assistants: true } });
    expect(JSON.stringify(info.body)).not.toMatch(/alice|tenant|uni\b|scopes/);
    // agent-chat-ui's checkGraphStatus: X-Api-Key plus X-Auth-Scheme.
    expect((await send("/info", { headers: { "X-Auth-Scheme": "langsmith-api-key" } })).status).toBe(200);
  });

  it("verifies X-Api-Key exactly like a bearer token: same principal, same 401 codes", async () => {
    const created = await chatUi.threads.create();
    expect(created.metadata).toMatchObject({ owner: "alice", tenant: "uni" });
    const expired = await mintApiToken(server.secret, await server.principal("alice"), {
      ttlSeconds: 1,
      now: Date.now() - 3_600_000,
    });
    const foreign = await mintApiToken(new Uint8Array(32).fill(7), await server.principal("alice"));
    const [head, payload, signature] = aliceToken.split(".");
    const tampered = `${head}.${payload}x.${signature}`;
    for (const token of ["not-a-jwt", tampered, foreign, expired, "a".repeat(9000)]) {
      const viaKey = await json(await send("/threads/search", { method: "POST", body: {}, apiKey: token }));
      const viaBearer = await json(
        await server.fetch("/threads/search", {
          method: "POST",
          body: "{}",
          headers: { authorization: `Bearer ${token}` },
        }),
      );
      expect(viaKey.status).toBe(401);
      expect(viaKey.body["error"]).toBe(viaBearer.body["error"]);
    }
    expect(
      (await json(await send("/threads/search", { method: "POST", body: {}, apiKey: expired }))).body["error"],
    ).toBe("token_expired");
    // Both headers: the same token is fine; two different tokens are refused, neither wins.
    const bob = await server.token("bob");
    expect(
      (await send("/threads/search", { method: "POST", body: {}, headers: { Authorization: `Bearer ${aliceToken}` } }))
        .status,
    ).toBe(200);
    const disagree = await json(
      await send("/threads/search", { method: "POST", body: {}, headers: { Authorization: `Bearer ${bob}` } }),
    );
    expect(disagree).toMatchObject({ status: 401, body: { error: "token_invalid" } });
  });

  it("allows X-Api-Key and X-Auth-Scheme in CORS preflights for the listed origin only", async () => {
    const preflight = (origin: string) =>
      fetch(`${server.url}/threads/search`, {
        method: "OPTIONS",
        headers: {
          Origin: origin,
          "Access-Control-Request-Method": "POST",
          "Access-Control-Request-Headers": "content-type,x-api-key,x-auth-scheme",
        },
      });
    const allowed = await preflight(ORIGIN);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    const headers = (allowed.headers.get("access-control-allow-headers") ?? "").toLowerCase();
    expect(headers).toContain("x-api-key");
    expect(headers).toContain("x-auth-scheme");
    expect((await preflight("http://evil.example")).headers.get("access-control-allow-origin")).toBeNull();
    // The real request from that origin carries its CORS header too.
    const search = await send("/threads/search", { method: "POST", body: { limit: 1 }, headers: { Origin: ORIGIN } });
    expect(search.headers.get("access-control-allow-origin")).toBe(ORIGIN);
  });
});

describe("the history list", () => {
  it("finds threads by graph_id or assistant_id (server-owned keys), in SQL before paging", async () => {
    const agentThread = (await chatUi.threads.create()).thread_id;
    await chatUi.runs.wait(agentThread, "agent", { input: { messages: [{ type: "human", content: NOTES_QUESTION }] } });
    // Newer threads that do not match: the filter runs before the page is cut, so limit 1 still finds the match.
    const idle = await chatUi.threads.create();
    const workflowThread = (await chatUi.threads.create()).thread_id;
    await chatUi.runs.wait(workflowThread, "workflow", {
      input: { messages: [{ type: "human", content: NOTES_QUESTION }] },
    });

    const byGraph = await chatUi.threads.search({ metadata: { graph_id: "agent" }, limit: 100 });
    expect(byGraph.map((thread) => thread.thread_id)).toContain(agentThread);
    expect(byGraph.map((thread) => thread.thread_id)).not.toContain(workflowThread);
    expect(byGraph.map((thread) => thread.thread_id)).not.toContain(idle.thread_id);
    expect(byGraph.every((thread) => thread.metadata?.["graph_id"] === "agent")).toBe(true);
    expect(
      (await chatUi.threads.search({ metadata: { graph_id: "workflow" }, limit: 1 })).map((thread) => thread.thread_id),
    ).toEqual([workflowThread]);
    expect(
      (await chatUi.threads.search({ metadata: { assistant_id: "workflow" }, limit: 1 })).map(
        (thread) => thread.thread_id,
      ),
    ).toEqual([workflowThread]);
    expect(await chatUi.threads.count({ metadata: { graph_id: "workflow" } })).toBe(1);
    // owner and tenant match the caller's own rows only.
    expect((await chatUi.threads.search({ metadata: { owner: "alice", graph_id: "workflow" } })).length).toBe(1);
    expect((await chatUi.threads.search({ metadata: { owner: "bob" } })).length).toBe(0);
    expect(await chatUi.threads.count({ metadata: { tenant: "acme" } })).toBe(0);
    // The SDK's graphId on create is kept, so a thread is listed before its first run.
    const planned = await chatUi.threads.create({ graphId: "workflow" });
    expect(planned.metadata).toMatchObject({ graph_id: "workflow" });
    expect(await chatUi.threads.count({ metadata: { graph_id: "workflow" } })).toBe(2);
  });
});

describe("messages and reviews", () => {
  it("runs a new message sent as agent-chat-ui sends it", async () => {
    const thread = await chatUi.threads.create();
    const streamed = await events(
      await send(`/threads/${thread.thread_id}/runs/stream`, { method: "POST", body: newMessageBody(NOTES_QUESTION) }),
    );
    expect(streamed[0]!.event).toBe("metadata");
    const last = streamed.filter((part) => part.event === "values").at(-1)!.data as { status: string };
    expect(last.status).toBe("completed");
  });

  it("a new message while a review is pending is 409 review_pending naming the action, with or without made-up tool messages", async () => {
    const { threadId, interrupt } = await pendingBooking();
    const before = await chatUi.threads.getState(threadId);
    const actionId = interrupt.approvals[0]!.action_id;
    const messages = (before.values as { messages: { type: string; tool_calls?: { id: string; name: string }[] }[] })
      .messages;
    const calls = messages
      .flatMap((message) => message.tool_calls ?? [])
      .map((call) => ({ tool_call_id: call.id, name: call.name }));
    expect(calls.length).toBeGreaterThan(0);
    for (const body of [newMessageBody("never mind", calls), newMessageBody("never mind")]) {
      const refused = await json(await send(`/threads/${threadId}/runs/stream`, { method: "POST", body }));
      expect(refused).toMatchObject({ status: 409, body: { error: "review_pending" } });
      expect(refused.body["message"]).toContain("create_study_event");
      expect(refused.body["message"]).toContain(actionId);
    }
    expect((await chatUi.threads.getState(threadId)).checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
    expect(await server.calendarEvents()).toHaveLength(0);
  });

  it('"Mark as resolved" (goto __end__) never skips a review: 409 review_pending, nothing written', async () => {
    const { threadId } = await pendingBooking();
    const before = await chatUi.threads.getState(threadId);
    const refused = await json(
      await send(`/threads/${threadId}/runs/stream`, { method: "POST", body: commandBody({ goto: "__end__" }) }),
    );
    expect(refused).toMatchObject({ status: 409, body: { error: "review_pending" } });
    expect(refused.body["message"]).toMatch(/approve, edit or reject/);
    expect((await chatUi.threads.getState(threadId)).checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
    expect((await chatUi.runs.list(threadId)).length).toBe(1);
    // With nothing pending there is nothing to resolve; goto anywhere else is refused as before.
    const idle = await chatUi.threads.create();
    expect(
      (
        await json(
          await send(`/threads/${idle.thread_id}/runs/stream`, {
            method: "POST",
            body: commandBody({ goto: "__end__" }),
          }),
        )
      ).body["error"],
    ).toBe("no_pending_interrupt");
    expect(
      (
        await json(
          await send(`/threads/${threadId}/runs/stream`, { method: "POST", body: commandBody({ goto: "execute" }) }),
        )
      ).body["error"],
    ).toBe("command_not_allowed");
  });

  it("approve, reject and edit, sent with input {} beside command.resume, each have their effect once", async () => {
    const start = (await server.calendarEvents()).length;

    // Approve (the card's submit).
    const approved = await pendingBooking();
    const approveEvents = await events(
      await send(`/threads/${approved.threadId}/runs/stream`, {
        method: "POST",
        body: commandBody({ resume: { decisions: [{ type: "approve" }] } }),
      }),
    );
    expect((approveEvents.filter((part) => part.event === "values").at(-1)!.data as { status: string }).status).toBe(
      "completed",
    );
    expect(await server.calendarEvents()).toHaveLength(start + 1);

    // Reject with a reason: nothing is written.
    const rejected = await pendingBooking();
    await events(
      await send(`/threads/${rejected.threadId}/runs/stream`, {
        method: "POST",
        body: commandBody({ resume: { decisions: [{ type: "reject", message: "not tonight" }] } }),
      }),
    );
    const afterReject = await chatUi.threads.getState(rejected.threadId);
    expect(
      (afterReject.values as { ledger: { tool: string }[] }).ledger.filter((row) => row.tool === "create_study_event"),
    ).toHaveLength(0);
    expect(await server.calendarEvents()).toHaveLength(start + 1);

    // Edit the time through the SDK client (apiKey), as runs.wait would send it: the edited event is the one created.
    const edited = await pendingBooking();
    const args = {
      ...edited.interrupt.action_requests[0]!.args,
      // A day no other event of this test and no timestamp of a run can fall on.
      start: "2031-02-03T09:00:00+01:00",
      end: "2031-02-03T10:00:00+01:00",
    };
    const values = (await chatUi.runs.wait(edited.threadId, "agent", {
      input: {},
      command: { resume: { decisions: [{ type: "edit", edited_action: { name: "create_study_event", args } }] } },
    })) as {
      status: string;
      __interrupt__?: unknown[];
    };
    // The edit is the reviewer's approval of the new version: it runs once, re-checked, without a second review.
    expect(values.__interrupt__).toBeUndefined();
    expect(values.status).toBe("completed");
    const stored = await server.calendarEvents();
    expect(stored).toHaveLength(start + 2);
    expect(JSON.stringify(stored.at(-1))).toContain("2031-02-03T");
    expect(JSON.stringify(stored.slice(0, -1))).not.toContain("2031-02-03T");
  });
});
