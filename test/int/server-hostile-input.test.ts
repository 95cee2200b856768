/**
 * Untrusted text over real HTTP (issue 12): client strings that Postgres or
 * LangGraph cannot store (NUL, lone surrogates, bidi and zero-width
 * characters in keys, deep nesting) are a 422 `invalid_request` naming the
 * field on every route that stores or searches them, never a 500; the
 * server stays up and other threads are untouched. And a hostile model
 * reply (scripted planner) leaves the thread readable through the API.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import type { Client } from "@langchain/langgraph-sdk";
import type { Planner } from "../../src/planners/planner.js";
import { isSafeKey } from "../../src/policy/safe-text.js";
import { bookingPlanner, NOTES_QUESTION, startTestServer, type TestServer } from "./support/server.js";

/** Requests that make the planner reply with one hostile proposal on its first turn, then a final answer. */
const PROBES: Record<string, { call_id: string; name: string; raw_arguments: string }> = {
  "probe name": { call_id: "call_probe_name", name: "search\u0000notes", raw_arguments: '{"query":"attention"}' },
  "probe id": { call_id: "call\u0000probe", name: "search_notes", raw_arguments: '{"query":"attention"}' },
  "probe deep": {
    call_id: "call_probe_deep",
    name: "search_notes",
    raw_arguments: `{"query":${"[".repeat(64)}${"]".repeat(64)}}`,
  },
  "probe very deep": {
    call_id: "call_probe_very_deep",
    name: "search_notes",
    raw_arguments: `{"query":${"[".repeat(20_000)}${"]".repeat(20_000)}}`,
  },
};

function probingPlanner(): Planner {
  const base = bookingPlanner();
  return {
    kind: "scripted",
    async plan(input) {
      const probe = Object.hasOwn(PROBES, input.request) ? PROBES[input.request] : undefined;
      if (!probe) return base.plan(input);
      const outcome =
        input.turn === 1
          ? { type: "tool_calls" as const, calls: [probe] }
          : { type: "final" as const, answer: "done", citations: [], abstained: false };
      return { outcome, usage: { input_tokens: 1, output_tokens: 1 } };
    },
  };
}

let server: TestServer;
let alice: Client;
let witness: string;

const fixture = useSandbox();
beforeAll(async () => {
  server = fixture.add(await startTestServer({ planner: probingPlanner() }));
  alice = await server.client("alice");
  // A thread of alice's that no hostile request may change.
  const thread = await alice.threads.create({ metadata: { topic: "witness" } });
  witness = thread.thread_id;
  await alice.runs.wait(witness, "agent", { input: { messages: [{ role: "user", content: NOTES_QUESTION }] } });
}, 120_000);

async function send(
  method: string,
  pathname: string,
  body?: unknown,
): Promise<{ status: number; body: { error?: string; message?: string } }> {
  const response = await server.fetch(pathname, {
    method,
    user: "alice",
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as { error?: string; message?: string }) : {} };
}

let deep: unknown = "x";
for (let level = 0; level < 64; level += 1) deep = [deep];

/** Hostile metadata and the field each 422 must name. */
const HOSTILE_METADATA: [string, Record<string, unknown>, string][] = [
  ["NUL in a value", { foo: "a\u0000b" }, "metadata.foo"],
  ["a lone surrogate in a value", { foo: "\ud800" }, "metadata.foo"],
  ["a control character nested in a value", { foo: { bar: ["ok", "\u001b[2J"] } }, "metadata.foo.bar.1"],
  ["NUL in a key", { "fo\u0000o": 1 }, "metadata.fo\\u{0}o"],
  ["a lone surrogate in a key", { "\udc00": 1 }, "metadata.\\u{dc00}"],
  ["a bidi override in a key", { "user\u202etxt": 1 }, "metadata.user\\u{202e}txt"],
  ["a zero-width space in a key", { "top\u200bic": 1 }, "metadata.top\\u{200b}ic"],
  ["a nested key with NUL", { foo: { "\u0000": 1 } }, "metadata.foo.\\u{0}"],
  ["nesting 64 levels deep", { foo: deep }, "metadata.foo.0.0"],
];

/** Every route that stores or searches client metadata. */
const METADATA_ROUTES: [
  string,
  (metadata: Record<string, unknown>) => Promise<{ status: number; body: { error?: string; message?: string } }>,
][] = [
  ["POST /threads", (metadata) => send("POST", "/threads", { metadata })],
  ["POST /threads/search", (metadata) => send("POST", "/threads/search", { metadata })],
  ["POST /threads/count", (metadata) => send("POST", "/threads/count", { metadata })],
  ["PATCH /threads/{id}", (metadata) => send("PATCH", `/threads/${witness}`, { metadata })],
  ["POST /threads/{id}/history", (metadata) => send("POST", `/threads/${witness}/history`, { metadata })],
  [
    "POST /threads/{id}/runs/wait",
    (metadata) =>
      send("POST", `/threads/${witness}/runs/wait`, {
        assistant_id: "agent",
        input: { messages: [{ role: "user", content: "hi" }] },
        metadata,
      }),
  ],
  [
    "POST /runs/wait",
    (metadata) =>
      send("POST", "/runs/wait", {
        assistant_id: "agent",
        input: { messages: [{ role: "user", content: "hi" }] },
        metadata,
      }),
  ],
];

describe("hostile metadata", () => {
  const table = METADATA_ROUTES.flatMap(([route, call]) =>
    HOSTILE_METADATA.map(([label, metadata, field]) => [route, label, call, metadata, field] as const),
  );
  it.each(table)("%s with %s → 422 naming the field", async (_route, _label, call, metadata, field) => {
    const { status, body } = await call(metadata);
    expect({ status, error: body.error }).toEqual({ status: 422, error: "invalid_request" });
    expect(body.message?.startsWith(field.endsWith(".0.0") ? field : `${field}: `), body.message).toBe(true);
  });

  it("still accepts ordinary metadata with accents, emoji, tabs and newlines in values", async () => {
    const thread = await alice.threads.create({ metadata: { thème: "Müller 👍", note: "line\n\tnext" } });
    expect(thread.metadata).toMatchObject({ thème: "Müller 👍", note: "line\n\tnext" });
    expect(await alice.threads.count({ metadata: { thème: "Müller 👍" } })).toBe(1);
  });
});

describe("hostile ids and text", () => {
  it.each([
    ["%00", "checkpoint_id: contains U+0000"],
    ["abc%E2%80%AE", "checkpoint_id: contains U+202E"],
    ["%09tab", "checkpoint_id: contains U+0009"],
  ])("GET /threads/{id}/state/%s → 422", async (checkpointId, message) => {
    const { status, body } = await send("GET", `/threads/${witness}/state/${checkpointId}`);
    expect({ status, ...body }).toEqual({ status: 422, error: "invalid_request", message });
  });

  it("answers 404 for a well-formed but unknown checkpoint id", async () => {
    const { status, body } = await send("GET", `/threads/${witness}/state/1f0c0c3e-0000-6000-8000-000000000000`);
    expect({ status, error: body.error }).toEqual({ status: 404, error: "not_found" });
    const known = await alice.threads.getState(witness);
    const again = await send("GET", `/threads/${witness}/state/${known.checkpoint.checkpoint_id}`);
    expect(again.status).toBe(200);
  });

  it.each([
    ["history before with NUL", "POST", () => `/threads/${witness}/history`, { before: "a\u0000" }, "before"],
    [
      "history checkpoint id with a lone surrogate",
      "POST",
      () => `/threads/${witness}/history`,
      { checkpoint: { checkpoint_id: "\ud800" } },
      "checkpoint.checkpoint_id",
    ],
    [
      "state/checkpoint with NUL",
      "POST",
      () => `/threads/${witness}/state/checkpoint`,
      { checkpoint_id: "x\u0000" },
      "checkpoint_id",
    ],
    [
      "a request with NUL",
      "POST",
      () => `/threads/${witness}/runs/wait`,
      { assistant_id: "agent", input: { messages: [{ role: "user", content: "hi\u0000there" }] } },
      "input.messages.0.content",
    ],
    [
      "a request with a lone surrogate",
      "POST",
      () => "/runs/wait",
      { assistant_id: "agent", input: { messages: [{ role: "user", content: "hi \ud83d" }] } },
      "input.messages.0.content",
    ],
    [
      "a text block with a bell",
      "POST",
      () => "/runs/wait",
      { assistant_id: "agent", input: { messages: [{ role: "user", content: [{ type: "text", text: "\u0007" }] }] } },
      "input.messages.0.content.0.text",
    ],
    [
      "a message id with a bidi override",
      "POST",
      () => "/runs/wait",
      { assistant_id: "agent", input: { messages: [{ role: "user", content: "hi", id: "m\u202e1" }] } },
      "input.messages.0.id",
    ],
    [
      "a fork checkpoint id with NUL",
      "POST",
      () => `/threads/${witness}/runs/wait`,
      { assistant_id: "agent", input: { messages: [{ role: "user", content: "hi" }] }, checkpoint_id: "\u0000" },
      "checkpoint_id",
    ],
    [
      "a resume message with NUL",
      "POST",
      () => `/threads/${witness}/runs/wait`,
      { assistant_id: "agent", command: { resume: { decisions: [{ type: "reject", message: "no\u0000" }] } } },
      "command.resume.decisions.0.message",
    ],
    [
      "a resume nested 64 levels deep",
      "POST",
      () => `/threads/${witness}/runs/wait`,
      {
        assistant_id: "agent",
        command: { resume: { decisions: [{ type: "edit", edited_action: { name: "x", args: { a: deep } } }] } },
      },
      "command.resume.decisions.0.edited_action.args.a.0.0",
    ],
    ["a values filter with NUL", "POST", () => "/threads/search", { values: { status: "x\u0000" } }, "values.status"],
    [
      "a values filter with a lone surrogate",
      "POST",
      () => "/threads/count",
      { values: { termination_reason: { code: "\ud800" } } },
      "values.termination_reason.code",
    ],
    [
      "an assistant id with NUL",
      "POST",
      () => "/runs/wait",
      { assistant_id: "age\u0000nt", input: { messages: [{ role: "user", content: "hi" }] } },
      "assistant_id",
    ],
  ])("%s → 422 naming the field", async (_label, method, pathname, body, field) => {
    const response = await send(method, pathname(), body);
    expect({ status: response.status, error: response.body.error }).toEqual({ status: 422, error: "invalid_request" });
    expect(
      response.body.message?.startsWith(field.endsWith(".0.0") ? field : `${field}: `),
      response.body.message,
    ).toBe(true);
  });

  it.each([
    [
      "a reject message with NUL",
      { decisions: [{ type: "reject", message: "no\u0000" }] },
      "decisions.0.message: contains U+0000",
    ],
    [
      "edited arguments nested 64 levels deep",
      { decisions: [{ type: "edit", edited_action: { name: "x", args: { a: deep } } }] },
      "decisions.0.edited_action.args.a.0.0",
    ],
  ])("POST /reviews/{thread_id} with %s → 422 naming the field", async (_label, body, field) => {
    const response = await server.fetch(`/reviews/${witness}`, {
      method: "POST",
      user: "rita",
      body: JSON.stringify(body),
    });
    const answer = (await response.json()) as { error?: string; message?: string };
    expect({ status: response.status, error: answer.error }).toEqual({ status: 422, error: "invalid_request" });
    expect(answer.message?.startsWith(field), answer.message).toBe(true);
  });

  it("keeps tabs and newlines in a request: stored as sent, and answered like the same words with spaces", async () => {
    // NOTES_QUESTION with a tab and a newline for two of its spaces: read as the same words, it is answered the same way.
    const request = "Compare self-attention\twith cross-attention\nusing my notes";
    const thread = await alice.threads.create();
    const values = (await alice.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: request }] },
    })) as { status?: string; termination_reason?: { code: string } | null };
    expect({ status: values.status, code: values.termination_reason?.code }).toEqual({
      status: "completed",
      code: "final_answer",
    });
    const snapshot = await alice.threads.getState<{ messages: { type: string; content: string }[] }>(thread.thread_id);
    const asked = snapshot.values.messages
      .filter((message) => message.type === "human")
      .map((message) => message.content);
    expect(asked).toEqual([request]);
  });
});

describe("hostile model output, read back over HTTP", () => {
  it.each([
    ["probe name", "unknown_tool"],
    ["probe id", "invalid_arguments"],
    ["probe deep", "invalid_arguments"],
    ["probe very deep", "invalid_arguments"],
  ])("%s → a typed refusal, the run completes, GET /state and history answer 200", async (request, code) => {
    const thread = await alice.threads.create();
    const values = (await alice.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: request }] },
    })) as { status?: string };
    expect(values.status).toBe("completed");
    const state = await send("GET", `/threads/${thread.thread_id}/state`);
    expect(state.status).toBe(200);
    const snapshot = await alice.threads.getState<{ messages: { type: string; status?: string; content: string }[] }>(
      thread.thread_id,
    );
    const errors = snapshot.values.messages
      .filter((message) => message.type === "tool" && message.status === "error")
      .map((message) => (JSON.parse(message.content) as { error: { code: string } }).error.code);
    expect(errors).toEqual([code]);
    expect((await send("POST", `/threads/${thread.thread_id}/history`, { limit: 50 })).status).toBe(200);
    const [run] = await alice.runs.list(thread.thread_id);
    expect(run?.status).toBe("success");
  });
});

describe("afterwards", () => {
  it("the server is up and the witness thread is untouched", async () => {
    expect((await server.fetch("/healthz")).status).toBe(200);
    const thread = await alice.threads.get(witness);
    expect(thread.metadata).toMatchObject({ topic: "witness", owner: "alice" });
    expect(Object.keys(thread.metadata ?? {}).filter((key) => !isSafeKey(key))).toEqual([]);
    const state = await alice.threads.getState<{ status: string }>(witness);
    expect(state.values.status).toBe("completed");
    expect(await alice.runs.list(witness)).toHaveLength(1);
  });
});
