/**
 * URL-mode elicitation on the 2026-07-28 revision (issue 39 item 4) through the API, a real server process on real
 * Postgres and the tests' eliciting stdio server speaking 2026-07-28 only (the v2 SDK server, the host pinned to
 * the revision): `open_consent_page` answers `input_required` with a URL-mode request, the owner consents through
 * the API exactly as on 2025-11-25, and the re-sent call carries `accept` (the server says `consented: accept`);
 * the revision has no completion notification, so none is recorded. A hostile URL is refused with
 * `elicitation_url_refused` before anyone is asked, audited, and reaches the server as `decline` (an input
 * response cannot be an error on this revision).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { finalReply, startModelServer } from "../support/scripted-model.js";
import { CONSENT_HOST, type ConsentPage } from "./support/consent-pages.js";
import { proposeConsentPage, writeElicitingConfig } from "./support/elicitation.js";
import {
  answerAs,
  elicitationOf,
  expectUrlRefusedUnasked,
  ledgerRowsOf,
  queryRows,
  startRun,
  toolTextOf,
} from "./support/elicitation-run.js";
import type { FakeOpenAI } from "./support/fake-openai.js";
import type { ServerProcess, ServerSandbox } from "./support/server-process.js";

let sandbox: ServerSandbox;
let fake: FakeOpenAI;
let server: ServerProcess;

describe("URL-mode elicitation on 2026-07-28 through the API", () => {
  const fixture = useSandbox();
  beforeAll(async () => {
    const directory = await fixture.tempDir("warrant-elicitation-url-modern-");
    const config = await writeElicitingConfig(directory, 120_000, "eliciting-modern", true);
    ({ fake, servers: sandbox, server } = await startModelServer(fixture, { WARRANT_CONFIG: config }));
  }, 180_000);

  it("the owner consents: the re-sent call carries accept and the tool completes", async () => {
    fake.enqueue(proposeConsentPage("good"), finalReply("Connected."));
    const alice = await sandbox.client(server, "alice");
    const { threadId, streamed } = await startRun(alice, "Connect my calendar");
    const event = await elicitationOf(streamed);
    expect(event).toMatchObject({ thread_id: threadId, server: "booking", mode: "url", host: CONSENT_HOST });
    expect(event.url).toMatch(new RegExp(`^https://${CONSENT_HOST}/connect\\?session=[0-9a-f-]{36}$`));
    expect(await answerAs(sandbox, server, "rita", event, { action: "accept" })).toMatchObject({
      status: 403,
      body: { error: "elicitation_forbidden" },
    });
    expect(await answerAs(sandbox, server, "alice", event, { action: "accept" })).toEqual({
      status: 200,
      body: { elicitation_id: event.elicitation_id, status: "accept" },
    });
    await streamed.done;
    expect(toolTextOf(streamed)).toBe("consented: accept");
    const rows = ledgerRowsOf(streamed, "open_consent_page");
    expect(rows.map((row) => [row["status"], row["elicitation"]])).toEqual([
      ["succeeded", [{ id: event.elicitation_id, outcome: "accept" }]],
    ]);
    const questions = await queryRows<Record<string, unknown>>(
      sandbox.databaseUrl,
      "select mode, status, answered_by, url, completed_at from warrant.elicitations where thread_id = $1",
      [threadId],
    );
    expect(questions).toEqual([
      { mode: "url", status: "accept", answered_by: "alice", url: event.url, completed_at: null },
    ]);
    expect(JSON.stringify(fake.requests)).not.toContain(CONSENT_HOST);
    expect(fake.pending()).toBe(0);
  }, 180_000);

  it("the owner declines: the re-sent call carries decline", async () => {
    fake.enqueue(proposeConsentPage("good"), finalReply("Not connected."));
    const alice = await sandbox.client(server, "alice");
    const { streamed } = await startRun(alice, "Connect my calendar");
    const event = await elicitationOf(streamed);
    expect((await answerAs(sandbox, server, "alice", event, { action: "decline" })).status).toBe(200);
    await streamed.done;
    expect(toolTextOf(streamed)).toBe("not consented: decline");
  }, 180_000);

  it("hostile URLs are refused with elicitation_url_refused before anyone is asked", async () => {
    const hostile: ConsentPage[] = ["javascript", "data", "userinfo", "long", "control", "plain_http"];
    const alice = await sandbox.client(server, "alice");
    for (const page of hostile) {
      fake.enqueue(proposeConsentPage(page), finalReply("Refused."));
      const { threadId, streamed } = await startRun(alice, `Open the ${page} page`);
      await streamed.done;
      expect({ page, text: toolTextOf(streamed) }).toEqual({ page, text: "not consented: decline" });
      await expectUrlRefusedUnasked(sandbox.databaseUrl, threadId, streamed, page);
    }
    expect(fake.pending()).toBe(0);
  }, 240_000);
});
