/**
 * Run webhooks (issue 26, item 3) against `npm start` with the SDK: a webhook
 * the allowlist does not cover, or whose host resolves to a loopback address
 * that the allowlist does not name, is refused (422 `webhook_refused`) before
 * the run starts; one to an allowlisted loopback receiver in this test
 * arrives signed (`Warrant-Signature`, checked here), once per event: when
 * the run pauses for review, and when the resume run that the reviewer starts
 * ends. A failed attempt is retried and recorded.
 */
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { readFile, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../src/env.js";
import { SIGNATURE_HEADER, verifySignature } from "../../src/server/webhooks/signature.js";
import { createServerSandbox, waitUntil, type ServerSandbox } from "./support/server-process.js";

/** A write the rules planner proposes in one turn, so the run pauses for review. */
const BOOKING_REQUEST = "Put a 40 minute study session for attention on 2027-01-15 at 18:00 UTC in my calendar";
const ask = (content: string) => ({ messages: [{ role: "user" as const, content }] });

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  answered: number;
}

let sandbox: ServerSandbox | undefined;
let receiver: http.Server | undefined;
afterEach(async () => {
  await sandbox?.cleanup();
  sandbox = undefined;
  receiver?.closeAllConnections();
  receiver?.close();
  receiver = undefined;
}, 60_000);

/** A receiver that fails the first attempt of the first event (500), then answers 204. */
async function startReceiver(): Promise<{ port: number; received: Received[] }> {
  const received: Received[] = [];
  receiver = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const answered = received.length === 0 ? 500 : 204;
      received.push({
        path: request.url ?? "",
        headers: request.headers,
        body: Buffer.concat(chunks).toString(),
        answered,
      });
      response.writeHead(answered).end();
    });
  });
  receiver.listen(0, "127.0.0.1");
  await once(receiver, "listening");
  return { port: (receiver.address() as AddressInfo).port, received };
}

async function statusOf(call: Promise<unknown>): Promise<[number, string | undefined]> {
  try {
    await call;
    return [200, undefined];
  } catch (error) {
    const { status, message } = error as { status?: number; message?: string };
    const code = /"error":"([a-z_]+)"/.exec(message ?? "")?.[1];
    return [status ?? -1, code];
  }
}

describe("run webhooks", () => {
  it("a webhook to a private address is refused, a signed one arrives at an allowlisted loopback receiver, once per event", async () => {
    const { port, received } = await startReceiver();
    sandbox = await createServerSandbox();
    const secret = randomBytes(32).toString("hex");
    const config = JSON.parse(await readFile(path.join(REPO_ROOT, "warrant.config.json"), "utf8")) as Record<
      string,
      unknown
    >;
    config["webhooks"] = {
      // The loopback receiver is listed by its address; "localhost" is listed by name only.
      allow: [`http://127.0.0.1:${port}/hooks`, `http://localhost:${port}/hooks`, "https://hooks.example.com/"],
      max_attempts: 3,
      retry: { base_ms: 50, max_ms: 200 },
    };
    const configPath = path.join(sandbox.dataDir, "warrant.config.json");
    await writeFile(configPath, JSON.stringify(config));
    const server = await sandbox.start({
      WARRANT_CONFIG: configPath,
      WARRANT_WEBHOOK_SECRET: secret,
      WARRANT_WEBHOOK_POLL_MS: "100",
    });
    const alice = await sandbox.client(server, "alice");
    const thread = await alice.threads.create();

    const refused: [string, string][] = [
      ["not in the allowlist", "http://10.0.0.5/hooks"],
      ["the metadata address", "http://169.254.169.254/latest/meta-data"],
      ["a listed name that resolves to loopback", `http://localhost:${port}/hooks/alice`],
      ["loopback as IPv4-mapped IPv6", `http://[::ffff:127.0.0.1]:${port}/hooks`],
      ["loopback in IPv6", `http://[::1]:${port}/hooks`],
      ["past the listed path", `http://127.0.0.1:${port}/hooksx`],
      ["another port", `http://127.0.0.1:${port + 1}/hooks`],
      ["another scheme", `ftp://127.0.0.1:${port}/hooks`],
      ["credentials", `http://user:secret@127.0.0.1:${port}/hooks`],
      ["not a URL", "hooks please"],
    ];
    for (const [name, webhook] of refused) {
      const answer = await statusOf(alice.runs.create(thread.thread_id, "agent", { input: ask("hi"), webhook }));
      expect([name, ...answer]).toEqual([name, 422, "webhook_refused"]);
    }
    const malformed = await sandbox.fetch(server, `/threads/${thread.thread_id}/runs`, {
      method: "POST",
      user: "alice",
      body: JSON.stringify({ assistant_id: "agent", input: ask("hi"), webhook: { url: "x" } }),
    });
    expect(malformed.status).toBe(422);
    // None of them started a run.
    expect(await alice.runs.list(thread.thread_id)).toEqual([]);
    expect(received).toEqual([]);

    // An allowlisted loopback receiver, named by its address.
    const run = await alice.runs.create(thread.thread_id, "agent", {
      input: ask(BOOKING_REQUEST),
      webhook: `http://127.0.0.1:${port}/hooks/alice`,
    });
    // The pause for review: the first attempt is answered 500 and retried.
    await waitUntil(
      () => received.filter((entry) => entry.answered === 204).length >= 1,
      "the review_pending webhook",
      60_000,
    );
    const paused = received.filter((entry) => entry.answered === 204)[0] as Received;
    const pausedBody = JSON.parse(paused.body) as Record<string, unknown>;
    expect(pausedBody).toMatchObject({
      event: "run.review_pending",
      run_id: run.run_id,
      thread_id: thread.thread_id,
      status: "success",
      pending_review: true,
    });
    expect(paused.path).toBe("/hooks/alice");
    expect(paused.headers["warrant-webhook-event"]).toBe("run.review_pending");
    expect(verifySignature(secret, paused.headers[SIGNATURE_HEADER.toLowerCase()] as string, paused.body)).toBe(true);
    expect(
      verifySignature(
        "another secret of at least 32 chars!!",
        paused.headers[SIGNATURE_HEADER.toLowerCase()] as string,
        paused.body,
      ),
    ).toBe(false);
    expect(verifySignature(secret, paused.headers[SIGNATURE_HEADER.toLowerCase()] as string, `${paused.body} `)).toBe(
      false,
    );
    // The retry is the same delivery (one id), the same body.
    expect(received[0]?.headers["warrant-webhook-id"]).toBe(paused.headers["warrant-webhook-id"]);
    expect(received[0]?.body).toBe(paused.body);
    // Nothing of the principal or the state beyond the outcome.
    for (const secretish of ["langgraph_auth_user", "scopes", "grants", "messages", "Put a 40 minute"])
      expect(paused.body).not.toContain(secretish);

    // The reviewer approves; the resume run ends and the webhook says so, once.
    const decided = await sandbox.fetch(server, `/reviews/${thread.thread_id}`, {
      method: "POST",
      user: "rita",
      body: JSON.stringify({ decisions: [{ type: "approve" }] }),
    });
    expect(decided.status).toBe(200);
    const resume = (await decided.json()) as { run_id: string; run_status: string };
    await waitUntil(
      () => received.some((entry) => entry.body.includes('"run.ended"')),
      "the run.ended webhook",
      60_000,
    );
    const ended = received.find((entry) => entry.body.includes('"run.ended"')) as Received;
    expect(JSON.parse(ended.body)).toMatchObject({
      event: "run.ended",
      run_id: resume.run_id,
      webhook_run_id: run.run_id,
      thread_id: thread.thread_id,
      status: "success",
      pending_review: false,
    });
    expect(verifySignature(secret, ended.headers[SIGNATURE_HEADER.toLowerCase()] as string, ended.body)).toBe(true);
    expect((await sandbox.calendarEvents()).length).toBe(1);

    // Recorded: one delivery per event, with its attempts. The sender records a delivery after the receiver has
    // answered, so the receiver can hold the body before the row says delivered: wait for that record, then compare.
    const client = new pg.Client({ connectionString: sandbox.databaseUrl });
    await client.connect();
    try {
      const deliveries = () =>
        client.query<{ event: string; status: string; attempts: number; last_status: number }>(
          "select event, status, attempts, last_status from warrant.webhook_deliveries order by created_at",
        );
      await waitUntil(
        async () => (await deliveries()).rows.every((row) => row.status !== "pending"),
        "every delivery recorded",
        30_000,
      );
      const { rows } = await deliveries();
      expect(rows).toEqual([
        { event: "run.review_pending", status: "delivered", attempts: 2, last_status: 204 },
        { event: "run.ended", status: "delivered", attempts: 1, last_status: 204 },
      ]);
    } finally {
      await client.end();
    }
    expect(new Set(received.map((entry) => entry.headers["warrant-webhook-id"])).size).toBe(2);
    expect(received).toHaveLength(3);
    expect(server.stderr()).not.toContain(secret);
  }, 240_000);
});
