/**
 * `/mcp` and `/a2a/{assistant_id}` on the wire (issue 44): hostile JSON-RPC
 * bodies (malformed, oversized, deeply nested, wrong types, control
 * characters) get typed errors and never a 5xx, and nothing is started for
 * them; the A2A v0.3 methods LangGraph's Agent Server speaks
 * (`message/send`, `tasks/get`) and a streamed message through the SDK.
 */
import { randomUUID } from "node:crypto";
import { TaskState } from "@a2a-js/sdk";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { a2aClientAs, userMessage } from "./support/agent-endpoints.js";
import { NOTES_QUESTION, startTestServer, type TestServer } from "./support/server.js";

const TIMEOUT_MS = 120_000;
const MAX_BODY_BYTES = 64 * 1024;

let server: TestServer;
const fixture = useSandbox();
beforeAll(async () => {
  server = fixture.add(await startTestServer({ settings: { WARRANT_MAX_BODY_BYTES: String(MAX_BODY_BYTES) } }));
}, TIMEOUT_MS);

const MCP_HEADERS = { accept: "application/json, text/event-stream", "content-type": "application/json" };

async function post(pathname: string, body: string, headers: Record<string, string> = {}) {
  const response = await server.fetch(pathname, {
    user: "alice",
    method: "POST",
    body,
    headers: { "content-type": "application/json", ...headers },
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json: json as Record<string, unknown> | undefined, text };
}

const deep = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
const toolCall = (args: unknown) =>
  JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "agent", arguments: args } });
const a2aSend = (method: string, message: unknown) =>
  JSON.stringify({ jsonrpc: "2.0", id: 9, method, params: { message } });
const legacyMessage = (text: unknown, extra: Record<string, unknown> = {}) => ({
  kind: "message",
  role: "user",
  messageId: randomUUID(),
  parts: [{ kind: "text", text }],
  ...extra,
});

/** Bodies no client should send; each must be answered with a typed error, not a 5xx. */
const HOSTILE_MCP: Record<string, string> = {
  malformed: '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"',
  "not an object": '"tools/list"',
  "empty batch": "[]",
  "deeply nested params": `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${deep(20_000).replace("[]", '{"name":"agent"}')}}`,
  "deeply nested argument": toolCall({ message: JSON.parse(deep(200)) }),
  "wrong id type": JSON.stringify({ jsonrpc: "2.0", id: { x: 1 }, method: "tools/list" }),
  "wrong method type": JSON.stringify({ jsonrpc: "2.0", id: 1, method: 5 }),
  "wrong params type": JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: "agent" }),
  "message is a number": toolCall({ message: 5 }),
  "message is an array": toolCall({ message: ["hi"] }),
  "thread id is not a uuid": toolCall({ message: "hi", thread_id: "../../etc" }),
  "unknown method": JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tasks/cancel\u0000", params: {} }),
  "unknown tool": JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "rm -rf" } }),
};

describe("/mcp refuses hostile JSON-RPC with typed errors, never a 5xx", () => {
  for (const [name, body] of Object.entries(HOSTILE_MCP)) {
    it(name, async () => {
      const { status, json } = await post("/mcp", body, MCP_HEADERS);
      expect(status).toBeLessThan(500);
      const error = json?.["error"] as { code?: unknown } | undefined;
      const result = json?.["result"] as { isError?: boolean } | undefined;
      // A JSON-RPC error with a numeric code, or a tool error.
      expect(typeof error?.code === "number" || result?.isError === true, JSON.stringify(json)).toBe(true);
    });
  }

  it("answers control characters in the message as invalid_request and starts nothing", async () => {
    for (const message of ["hi\u0000there", "\u001b[2J\u0007", "a\ud800b"]) {
      const { status, json } = await post("/mcp", toolCall({ message }), MCP_HEADERS);
      expect(status).toBe(200);
      const result = json?.["result"] as { isError: boolean; content: { text: string }[] };
      expect(result.isError).toBe(true);
      expect(JSON.parse(result.content[0]?.text ?? "{}").error).toBe("invalid_request");
    }
    const threads = (await (
      await server.fetch("/threads/search", { user: "alice", method: "POST", body: "{}" })
    ).json()) as unknown[];
    expect(threads).toEqual([]);
  });

  it("answers an oversized body 413 body_too_large", async () => {
    const { status, json } = await post("/mcp", toolCall({ message: "x".repeat(MAX_BODY_BYTES + 1) }), MCP_HEADERS);
    expect(status).toBe(413);
    expect(json?.["error"]).toBe("body_too_large");
  });

  it("answers without a token 401, and GET and DELETE 405", async () => {
    const anonymous = await fetch(`${server.url}/mcp`, { method: "POST", headers: MCP_HEADERS, body: "{}" });
    expect(anonymous.status).toBe(401);
    expect((await server.fetch("/mcp", { user: "alice" })).status).toBe(405);
    expect((await server.fetch("/mcp", { user: "alice", method: "DELETE" })).status).toBe(405);
  });
});

const HOSTILE_A2A: Record<string, string> = {
  malformed: '{"jsonrpc": "2.0", "id": 1, "method": "message/send"',
  "not an object": "[1, 2, 3]",
  "deeply nested params": `{"jsonrpc":"2.0","id":1,"method":"message/send","params":${deep(20_000)}}`,
  "deeply nested parts": a2aSend("message/send", { ...legacyMessage("hi"), parts: JSON.parse(deep(200)) }),
  "too many parts": a2aSend("message/send", {
    ...legacyMessage("hi"),
    parts: Array(17).fill({ kind: "text", text: "a" }),
  }),
  "wrong id type": JSON.stringify({ jsonrpc: "2.0", id: [1], method: "tasks/get", params: { id: "x" } }),
  "wrong method type": JSON.stringify({ jsonrpc: "2.0", id: 1, method: { send: true } }),
  "wrong params type": JSON.stringify({ jsonrpc: "2.0", id: 1, method: "message/send", params: "hello" }),
  "parts is a string": a2aSend("message/send", { ...legacyMessage("hi"), parts: "hi" }),
  "text is a number": a2aSend("message/send", legacyMessage(5)),
  "no text part": a2aSend("message/send", { ...legacyMessage("hi"), parts: [{ kind: "data", data: { a: 1 } }] }),
  "control characters": a2aSend("message/send", legacyMessage("hi\u0000there\u001b[2J")),
  "oversized text": a2aSend("message/send", legacyMessage("x".repeat(9_000))),
  "task id of nothing": JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id: "../../x" } }),
  "context id of nothing": a2aSend("message/send", legacyMessage("hi", { contextId: randomUUID() })),
  "unknown method": JSON.stringify({ jsonrpc: "2.0", id: 1, method: "agent/\u0007", params: {} }),
};

describe("/a2a/agent refuses hostile JSON-RPC with typed errors, never a 5xx", () => {
  for (const version of ["0.3", "1.0"]) {
    for (const [name, body] of Object.entries(HOSTILE_A2A)) {
      it(`${name} (A2A-Version ${version})`, async () => {
        const v1 =
          version === "1.0"
            ? body.replace('"message/send"', '"SendMessage"').replace('"tasks/get"', '"GetTask"')
            : body;
        const { status, json } = await post("/a2a/agent", v1, { "A2A-Version": version });
        expect(status).toBeLessThan(500);
        const error = json?.["error"] as { code?: unknown } | undefined;
        expect(typeof error?.code, JSON.stringify(json)).toBe("number");
        expect(error?.code).not.toBe(-32603);
      });
    }
  }

  it("started no run for any of them", async () => {
    const threads = (await (
      await server.fetch("/threads/search", { user: "alice", method: "POST", body: "{}" })
    ).json()) as unknown[];
    expect(threads).toEqual([]);
  });

  it("answers an oversized body 413, an unknown assistant 404, no token 401, an unknown version a typed error", async () => {
    const oversized = await post("/a2a/agent", a2aSend("message/send", legacyMessage("x".repeat(MAX_BODY_BYTES))));
    expect(oversized.status).toBe(413);
    const unknown = await post("/a2a/nope", a2aSend("message/send", legacyMessage("hi")));
    expect(unknown).toMatchObject({ status: 404, json: { error: "not_found" } });
    const anonymous = await fetch(`${server.url}/a2a/agent`, { method: "POST", body: "{}" });
    expect(anonymous.status).toBe(401);
    const version = await post("/a2a/agent", a2aSend("message/send", legacyMessage("hi")), { "A2A-Version": "9.9" });
    expect(version.status).toBe(200);
    expect(version.json).toMatchObject({ error: { code: -32009 } });
  });
});

describe("A2A methods of both protocol versions", () => {
  it(
    "v0.3: message/send answers a completed task, tasks/get reads it back (LangGraph Agent Server's methods)",
    async () => {
      const sent = await post("/a2a/agent", a2aSend("message/send", legacyMessage(NOTES_QUESTION)));
      expect(sent.status).toBe(200);
      const task = sent.json?.["result"] as { kind: string; id: string; contextId: string; status: { state: string } };
      expect(task).toMatchObject({ kind: "task", status: { state: "completed" } });
      const read = await post(
        "/a2a/agent",
        JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tasks/get", params: { id: task.id } }),
      );
      expect(read.json?.["result"]).toMatchObject({
        id: task.id,
        contextId: task.contextId,
        status: { state: "completed" },
      });
    },
    TIMEOUT_MS,
  );

  it(
    "v1.0 through the SDK: a streamed message ends with the task completed",
    async () => {
      const client = await a2aClientAs(server, "alice");
      const states: TaskState[] = [];
      for await (const event of client.sendMessageStream(userMessage(NOTES_QUESTION))) {
        const payload = event.payload;
        if (payload?.$case === "task") states.push(payload.value.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);
        if (payload?.$case === "statusUpdate")
          states.push(payload.value.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);
      }
      expect(states).toEqual([TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]);
    },
    TIMEOUT_MS,
  );
});
