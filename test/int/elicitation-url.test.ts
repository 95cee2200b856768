/**
 * URL-mode elicitation (MCP 2025-11-25, issue 39 item 4) through the API, a
 * real server process on real Postgres and the tests' eliciting stdio server
 * (`open_consent_page`): the run's `elicitation` event carries mode `url`,
 * the full URL and its host, never the model's context; only the owner may
 * answer (403 / 404 as form mode), consent carries no content; the server
 * gets `accept` and its completion notification stamps the row; a decline
 * reaches it as `decline`; hostile URLs are refused with
 * `elicitation_url_refused` before anyone is asked, and audited.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { finalReply, startModelServer } from "../support/scripted-model.js";
import { CONSENT_HOST, type ConsentPage } from "./support/consent-pages.js";
import { proposeConsentPage, writeElicitingConfig, type ElicitationEventData } from "./support/elicitation.js";
import {
  answerAs,
  customOf,
  elicitationOf,
  expectUrlRefusedUnasked,
  ledgerRowsOf,
  queryRows,
  startRun,
  toolTextOf,
} from "./support/elicitation-run.js";
import type { FakeOpenAI } from "./support/fake-openai.js";
import { waitUntil, type ServerProcess, type ServerSandbox } from "./support/server-process.js";

let sandbox: ServerSandbox;
let fake: FakeOpenAI;
let server: ServerProcess;

const answer = (user: string, event: ElicitationEventData, body: unknown) =>
  answerAs(sandbox, server, user, event, body);
const query = <T>(sql: string, params: unknown[]) => queryRows<T>(sandbox.databaseUrl, sql, params);

describe("URL-mode elicitation through the API", () => {
  const fixture = useSandbox();
  beforeAll(async () => {
    const directory = await fixture.tempDir("warrant-elicitation-url-");
    ({
      fake,
      servers: sandbox,
      server,
    } = await startModelServer(fixture, { WARRANT_CONFIG: await writeElicitingConfig(directory, 120_000) }));
  }, 180_000);

  it("the owner consents: the server gets accept, its completion is recorded; no one else may answer", async () => {
    fake.enqueue(proposeConsentPage("good"), finalReply("Connected."));
    const alice = await sandbox.client(server, "alice");
    const { threadId, streamed } = await startRun(alice, "Connect my calendar");
    const event = await elicitationOf(streamed);
    expect(event).toMatchObject({ thread_id: threadId, server: "booking", mode: "url", host: CONSENT_HOST });
    expect(event.url).toMatch(new RegExp(`^https://${CONSENT_HOST}/connect\\?session=[0-9a-f-]{36}$`));
    // The open questions list shows it the same way.
    const listed = await sandbox.fetch(server, `/threads/${threadId}/elicitations`, { user: "alice" });
    expect(((await listed.json()) as { elicitations: unknown[] }).elicitations).toEqual([
      expect.objectContaining({ elicitation_id: event.elicitation_id, mode: "url", url: event.url }),
    ]);

    expect(await answer("rita", event, { action: "accept" })).toMatchObject({
      status: 403,
      body: { error: "elicitation_forbidden" },
    });
    expect((await answer("dana", event, { action: "accept" })).status).toBe(404);
    // Consent carries nothing: a content is refused.
    expect(await answer("alice", event, { action: "accept", content: { token: "x" } })).toMatchObject({
      status: 422,
      body: { error: "invalid_request" },
    });
    expect(await answer("alice", event, { action: "accept" })).toEqual({
      status: 200,
      body: { elicitation_id: event.elicitation_id, status: "accept" },
    });
    await streamed.done;
    expect(toolTextOf(streamed)).toBe("consented: accept");
    expect(ledgerRowsOf(streamed, "open_consent_page").map((row) => row["elicitation"])).toEqual([
      [{ id: event.elicitation_id, outcome: "accept" }],
    ]);
    // The server's completion notification stamps the row (it may land just after the run's end).
    await waitUntil(
      async () =>
        (
          await query<{ completed: boolean }>(
            "select completed_at is not null as completed from warrant.elicitations where elicitation_id = $1",
            [event.elicitation_id],
          )
        )[0]?.completed === true,
      "the completion",
      20_000,
    );
    const rows = await query<Record<string, unknown>>(
      "select mode, status, answered_by, url from warrant.elicitations where elicitation_id = $1",
      [event.elicitation_id],
    );
    expect(rows).toEqual([{ mode: "url", status: "accept", answered_by: "alice", url: event.url }]);
    // The model never saw the URL.
    expect(JSON.stringify(fake.requests)).not.toContain(CONSENT_HOST);
    expect(fake.pending()).toBe(0);
  }, 180_000);

  it("the owner declines: the server gets decline and no completion is recorded", async () => {
    fake.enqueue(proposeConsentPage("good"), finalReply("Not connected."));
    const alice = await sandbox.client(server, "alice");
    const { streamed } = await startRun(alice, "Connect my calendar");
    const event = await elicitationOf(streamed);
    expect((await answer("alice", event, { action: "decline" })).status).toBe(200);
    await streamed.done;
    expect(toolTextOf(streamed)).toBe("not consented: decline");
    expect(customOf(streamed, "elicitation_closed")).toEqual([
      { type: "elicitation_closed", elicitation_id: event.elicitation_id, outcome: "decline" },
    ]);
    const rows = await query<Record<string, unknown>>(
      "select status, completed_at from warrant.elicitations where elicitation_id = $1",
      [event.elicitation_id],
    );
    expect(rows).toEqual([{ status: "decline", completed_at: null }]);
  }, 180_000);

  it("hostile URLs are refused with elicitation_url_refused before anyone is asked, and audited", async () => {
    const hostile: ConsentPage[] = ["javascript", "data", "userinfo", "long", "control", "plain_http"];
    const alice = await sandbox.client(server, "alice");
    for (const page of hostile) {
      fake.enqueue(proposeConsentPage(page), finalReply("Refused."));
      const { threadId, streamed } = await startRun(alice, `Open the ${page} page`);
      await streamed.done;
      expect({ page, text: toolTextOf(streamed) }).toEqual({
        page,
        text: expect.stringMatching(/^not consented: error \(.*elicitation_url_refused: /),
      });
      await expectUrlRefusedUnasked(sandbox.databaseUrl, threadId, streamed, page);
    }
    expect(fake.pending()).toBe(0);
  }, 240_000);
});
