/**
 * Host-owned keys reach no client (issue 21, item 3), through
 * `@langchain/langgraph-sdk` against the real server on Postgres: a booking
 * run streamed in every stream mode pauses for review (interrupts and
 * checkpoints appear) and is resumed in every mode; a second thread is
 * started with `runs.create`, joined, and answered with `runs.wait`. Every
 * event of every stream and every thread, state, history, run and review
 * answer is searched for `langgraph_auth_user`, `warrant_run_bound`, a
 * `configurable` holding `warrant_run_id`, LangGraph's raw `parentConfig`,
 * and the principal's scopes and grants: none is anywhere. The `checkpoints`
 * and `debug` checkpoint events have the LangGraph API's shape.
 */
import type { Client } from "@langchain/langgraph-sdk";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { BOOKING_REQUEST, startTestServer, type TestServer } from "./support/server.js";

const MODES = ["values", "updates", "messages", "messages-tuple", "custom", "tasks", "checkpoints", "debug"] as const;

let server: TestServer;
let alice: Client;

const fixture = useSandbox();
beforeAll(async () => {
  server = fixture.add(await startTestServer());
  alice = await server.client("alice");
}, 120_000);

/** Everything a client received, by where it came from. */
const received: { where: string; json: string }[] = [];
function record(where: string, value: unknown): void {
  received.push({ where, json: JSON.stringify(value) });
}

/** What in a JSON text only the host may know. */
function leaks(json: string): string[] {
  const found: string[] = [];
  for (const key of ["langgraph_auth_user", "warrant_run_bound", "langgraph_auth_permissions", "parentConfig"])
    if (json.includes(`"${key}"`)) found.push(key);
  // The principal's scopes and grants (alice: calendar:write, courses), under any key.
  for (const key of ["scopes", "grants"]) if (json.includes(`"${key}"`)) found.push(key);
  if (json.includes("calendar:write")) found.push("a scope's value");
  // A configurable object that names our run id (the run's id as data, e.g. outcome.warrant_run_id, is documented).
  for (const match of json.matchAll(/"configurable":\{[^{}]*\}/g))
    if (match[0].includes("warrant_run_id")) found.push("configurable run id");
  return found;
}

type Chunk = { event: string; data: unknown };
async function collect(stream: AsyncIterable<Chunk>, where: string): Promise<Chunk[]> {
  const chunks: Chunk[] = [];
  for await (const chunk of stream) {
    chunks.push(chunk);
    record(`${where} ${chunk.event}`, chunk.data);
  }
  return chunks;
}

const booking = { messages: [{ role: "user", content: BOOKING_REQUEST }] };
const approve = { resume: { decisions: [{ type: "approve" }] } };
const reject = { resume: { decisions: [{ type: "reject", message: "not tonight" }] } };
let streamed: Chunk[] = [];

describe("what clients receive", () => {
  it("streams a run that pauses for review and its resume in every mode, and answers every route", async () => {
    const thread = await alice.threads.create({ metadata: { purpose: "payload check" } });
    record("threads.create", thread);
    const paused = await collect(
      alice.runs.stream(thread.thread_id, "agent", { input: booking, streamMode: [...MODES] }),
      "stream(input)",
    );
    const state = await alice.threads.getState(thread.thread_id);
    record("threads.getState", state);
    // It paused for review: interrupts are in the stream and the state.
    expect(state.next).toEqual(["human_review"]);
    expect(state.tasks.flatMap((task) => task.interrupts)).toHaveLength(1);
    expect(
      paused.some((chunk) => chunk.event === "updates" && JSON.stringify(chunk.data).includes("__interrupt__")),
    ).toBe(true);
    record("threads.get", await alice.threads.get(thread.thread_id));
    record("threads.search", await alice.threads.search({ metadata: { purpose: "payload check" } }));
    record("threads.update", await alice.threads.update(thread.thread_id, { metadata: { note: "x" } }));
    const history = await alice.threads.getHistory(thread.thread_id, { limit: 50 });
    record("threads.getHistory", history);
    const older = history.at(-2)?.checkpoint.checkpoint_id;
    expect(older).toEqual(expect.any(String));
    record("threads.getState(checkpoint)", await alice.threads.getState(thread.thread_id, older ?? undefined));
    record(
      "GET history",
      await (await server.fetch(`/threads/${thread.thread_id}/history?limit=5`, { user: "alice" })).json(),
    );
    record(
      "POST state/checkpoint",
      await (
        await server.fetch(`/threads/${thread.thread_id}/state/checkpoint`, {
          method: "POST",
          user: "alice",
          body: JSON.stringify({ checkpoint_id: older }),
        })
      ).json(),
    );
    // The reviewer's inbox shows the owner's pending action.
    const inbox = await server.fetch("/reviews", { user: "rita" });
    expect(inbox.status).toBe(200);
    record("GET /reviews (rita)", await inbox.json());
    const entry = await server.fetch(`/reviews/${thread.thread_id}`, { user: "rita" });
    expect(entry.status).toBe(200);
    record("GET /reviews/{thread} (rita)", await entry.json());

    const resumed = await collect(
      alice.runs.stream(thread.thread_id, "agent", { command: approve, streamMode: [...MODES] }),
      "stream(resume)",
    );
    streamed = [...paused, ...resumed];
    const done = await alice.threads.getState(thread.thread_id);
    record("threads.getState(done)", done);
    expect((done.values as { status?: string }).status).toBe("completed");
    const runs = await alice.runs.list(thread.thread_id);
    record("runs.list", runs);
    expect(runs).toHaveLength(2);
    for (const run of runs) {
      record("runs.get", await alice.runs.get(thread.thread_id, run.run_id));
      await collect(alice.runs.joinStream(thread.thread_id, run.run_id) as AsyncIterable<Chunk>, "joinStream");
    }
    record("threads.getHistory(done)", await alice.threads.getHistory(thread.thread_id, { limit: 50 }));

    // A second thread: runs.create, join (its values with the interrupt), then runs.wait answering the review.
    const second = await alice.threads.create();
    const created = await alice.runs.create(second.thread_id, "agent", { input: booking });
    record("runs.create", created);
    const joined = await alice.runs.join(second.thread_id, created.run_id);
    record("runs.join", joined);
    expect(JSON.stringify(joined)).toContain("__interrupt__");
    record("runs.wait", await alice.runs.wait(second.thread_id, "agent", { command: reject }));
    record("threads.getState(second)", await alice.threads.getState(second.thread_id));
  });

  it("streamed every mode the run produces", () => {
    const events = new Set(streamed.map((chunk) => chunk.event));
    for (const event of [
      "metadata",
      "values",
      "updates",
      "messages",
      "messages/metadata",
      "messages/partial",
      "messages/complete",
      "tasks",
      "checkpoints",
      "debug",
    ])
      expect(events).toContain(event);
    expect(received.length).toBeGreaterThan(100);
  });

  it("sent no host-owned key, no configurable run id and no scope or grant, anywhere", () => {
    const found = received.flatMap(({ where, json }) => leaks(json).map((leak) => `${where}: ${leak}`));
    expect(found).toEqual([]);
  });

  it("gives checkpoints and debug checkpoint events the LangGraph API's shape", () => {
    const checkpoints = streamed.filter((chunk) => chunk.event === "checkpoints").map((chunk) => chunk.data);
    const debug = streamed
      .filter((chunk) => chunk.event === "debug" && (chunk.data as { type?: string }).type === "checkpoint")
      .map((chunk) => (chunk.data as { payload: unknown }).payload);
    expect(checkpoints.length).toBeGreaterThan(3);
    expect(debug).toEqual(checkpoints);
    const reference = (value: unknown) => {
      expect(Object.keys(value as object).sort()).toEqual(["checkpoint_id", "checkpoint_ns", "thread_id"]);
      expect(value).toMatchObject({
        thread_id: expect.any(String),
        checkpoint_ns: "",
        checkpoint_id: expect.any(String),
      });
    };
    let withParent = 0;
    for (const payload of checkpoints as Record<string, unknown>[]) {
      expect(payload).not.toHaveProperty("parentConfig");
      expect(payload).toEqual(
        expect.objectContaining({ values: expect.any(Object), next: expect.any(Array), tasks: expect.any(Array) }),
      );
      reference(payload.checkpoint);
      expect(payload.config).toEqual({ configurable: payload.checkpoint });
      if (payload.parent_checkpoint !== null) {
        withParent += 1;
        reference(payload.parent_checkpoint);
        expect(payload.parent_config).toEqual({ configurable: payload.parent_checkpoint });
      }
    }
    expect(withParent).toBeGreaterThan(0);
    // The checkpoint the resume starts from names the review task and its interrupt.
    expect(
      (checkpoints as { tasks: { name: string; interrupts: unknown[] }[] }[]).some((payload) =>
        payload.tasks.some((task) => task.name === "human_review" && task.interrupts.length === 1),
      ),
    ).toBe(true);
  });

  it("shows the run's owner in the state by identity", async () => {
    const state = received.find((entry) => entry.where === "threads.getState(done)");
    const values = JSON.parse(state?.json ?? "{}") as { values: { run: { owner: string; principal: unknown } } };
    expect(values.values.run.owner).toBe("alice");
    expect(values.values.run.principal).toEqual({
      user_id: "alice",
      tenant: "uni",
      role: "student",
      display_name: "Alice",
    });
    // The user's own session route still shows their scopes (README: GET /ui/session).
    const session = await server.fetch("/ui/session", { user: "alice" });
    expect(session.status).toBe(200);
    expect(((await session.json()) as { principal: { scopes: string[] } }).principal.scopes).toContain(
      "calendar:write",
    );
  });
});
