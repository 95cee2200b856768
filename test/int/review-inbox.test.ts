/**
 * The review inbox over HTTP on a real Postgres with the real calendar:
 * a reviewer lists the pending reviews of their tenant across users and
 * decides one; the event is created once, for the owner; the approval row
 * names the reviewer. Other students and other tenants see nothing (404).
 */
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { BOOKING_REQUEST, startTestServer, type TestServer } from "./support/server.js";

let server: TestServer;
let threadId: string;

const fixture = useSandbox();
beforeAll(async () => {
  server = fixture.add(await startTestServer());
  const alice = await server.client("alice");
  const thread = await alice.threads.create();
  threadId = thread.thread_id;
  await alice.runs.wait(threadId, "agent", { input: { messages: [{ role: "user", content: BOOKING_REQUEST }] } });
}, 120_000);

const json = async (response: Response) => ({
  status: response.status,
  body: (await response.json()) as Record<string, unknown>,
});

describe("the review inbox", () => {
  it("shows rita (reviewer, same tenant) alice's pending review with its binding", async () => {
    const { status, body } = await json(await server.fetch("/reviews", { user: "rita" }));
    expect(status).toBe(200);
    const reviews = body["reviews"] as Array<Record<string, unknown>>;
    expect(reviews).toHaveLength(1);
    expect(reviews[0]).toMatchObject({ thread_id: threadId, owner: "alice", tenant: "uni", request: BOOKING_REQUEST });
    const review = reviews[0]?.["review"] as { action_requests: unknown[]; approvals: Array<Record<string, unknown>> };
    expect(review.action_requests).toHaveLength(1);
    expect(review.approvals[0]).toMatchObject({
      action_id: expect.any(String),
      fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
      version: 1,
      expires_at: expect.any(String),
    });
  });

  it("shows alice her own review, and nothing to bob or to another tenant's reviewer", async () => {
    expect(((await json(await server.fetch("/reviews", { user: "alice" }))).body["reviews"] as unknown[]).length).toBe(
      1,
    );
    for (const user of ["bob", "dana", "sam"]) {
      expect((await json(await server.fetch("/reviews", { user }))).body["reviews"], user).toEqual([]);
      expect((await server.fetch(`/reviews/${threadId}`, { user })).status, user).toBe(404);
    }
  });

  it("refuses a malformed decision with 422 and a foreign one with 404, writing nothing", async () => {
    const malformed = await server.fetch(`/reviews/${threadId}`, {
      user: "rita",
      method: "POST",
      body: JSON.stringify({ decisions: [{ type: "maybe" }] }),
    });
    expect(malformed.status).toBe(422);
    const foreign = await server.fetch(`/reviews/${threadId}`, {
      user: "bob",
      method: "POST",
      body: JSON.stringify({ decisions: [{ type: "approve" }] }),
    });
    expect(foreign.status).toBe(404);
    expect(await server.calendarEvents()).toHaveLength(0);
  });

  it("lets rita approve: one event for alice, the approval row names rita, the review leaves the inbox", async () => {
    const { status, body } = await json(
      await server.fetch(`/reviews/${threadId}`, {
        user: "rita",
        method: "POST",
        body: JSON.stringify({ decisions: [{ type: "approve" }] }),
      }),
    );
    expect(status).toBe(200);
    expect(body).toMatchObject({ thread_id: threadId, status: "completed", pending: [] });
    const events = (await server.calendarEvents()) as Array<{ user_id: string }>;
    expect(events).toHaveLength(1);
    expect(events[0]?.user_id).toBe("alice");
    const client = new pg.Client({ connectionString: server.databaseUrl });
    await client.connect();
    try {
      const approvals = await client.query(
        "select approver, owner, outcome from warrant.approvals where thread_id = $1",
        [threadId],
      );
      expect(approvals.rows).toEqual([{ approver: "rita", owner: "alice", outcome: "approve" }]);
      const ledger = await client.query(
        "select tool, status, owner, approved_by from warrant.ledger where thread_id = $1",
        [threadId],
      );
      expect(ledger.rows).toEqual([
        { tool: "create_study_event", status: "succeeded", owner: "alice", approved_by: "rita" },
      ]);
    } finally {
      await client.end();
    }
    expect(((await json(await server.fetch("/reviews", { user: "rita" }))).body["reviews"] as unknown[]).length).toBe(
      0,
    );
    const again = await server.fetch(`/reviews/${threadId}`, {
      user: "rita",
      method: "POST",
      body: JSON.stringify({ decisions: [{ type: "approve" }] }),
    });
    expect(again.status).toBe(404);
    expect(await server.calendarEvents()).toHaveLength(1);
  });
});
