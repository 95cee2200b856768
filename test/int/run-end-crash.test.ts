/**
 * A crash after a run's graph ended changes nothing a client is told (issue
 * 46, items 2 and 3). A server started with `WARRANT_TEST_CRASH_AT` SIGKILLs
 * itself after the run's final checkpoint (before its last events are
 * flushed, the checkpoint is read and the run row updated:
 * `after_final_checkpoint`), or right after the run's final status is
 * recorded (before its lease is released and anything else runs:
 * `after_run_end`). After a restart the run reads `success` with the
 * thread's answer, never `error`/`server_restarted`, and the run's
 * `run.ended` webhook arrives exactly once: its outbox row commits with the
 * run's status, so no death can fall between them.
 */
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { readFile, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../src/env.js";
import { createServerSandbox, waitUntil, type ServerProcess, type ServerSandbox } from "./support/server-process.js";
import { NOTES_QUESTION } from "./support/server.js";

const LEASE_MS = 4_000;
const ask = (content: string) => ({ messages: [{ role: "user" as const, content }] });

interface Delivered {
  event: string;
  run_id: string;
  status: string;
  delivery_id: string;
  outcome_status: string | null;
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

/** A receiver that answers 204 to everything and keeps each body. */
async function startReceiver(): Promise<{ port: number; received: Delivered[] }> {
  const received: Delivered[] = [];
  receiver = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString()) as Delivered);
      response.writeHead(204).end();
    });
  });
  receiver.listen(0, "127.0.0.1");
  await once(receiver, "listening");
  return { port: (receiver.address() as AddressInfo).port, received };
}

const stopped = async (server: ServerProcess) => {
  await server.exited;
  // Its MCP children outlive a SIGKILL: remove the whole group.
  await server.kill();
};

describe("a crash after a run's graph ended", () => {
  it.each([["after_final_checkpoint"], ["after_run_end"]])(
    "%s: after a restart the run reads success and its run.ended arrives once",
    async (point) => {
      const { port, received } = await startReceiver();
      const box = await createServerSandbox();
      sandbox = box;
      const config = JSON.parse(await readFile(path.join(REPO_ROOT, "warrant.config.json"), "utf8")) as Record<
        string,
        unknown
      >;
      config["webhooks"] = {
        allow: [`http://127.0.0.1:${port}/hooks`],
        max_attempts: 3,
        retry: { base_ms: 50, max_ms: 200 },
      };
      const configPath = path.join(box.dataDir, "warrant.config.json");
      await writeFile(configPath, JSON.stringify(config));
      const env = (extra: Record<string, string> = {}) => ({
        WARRANT_CONFIG: configPath,
        WARRANT_WEBHOOK_SECRET: randomBytes(32).toString("hex"),
        WARRANT_WEBHOOK_POLL_MS: "100",
        WARRANT_RUN_LEASE_MS: String(LEASE_MS),
        ...extra,
      });

      const crashing = await box.start(env({ WARRANT_TEST_CRASH_AT: point }));
      const alice = await box.client(crashing, "alice");
      const thread = await alice.threads.create();
      const run = await alice.runs.create(thread.thread_id, "agent", {
        input: ask(NOTES_QUESTION),
        webhook: `http://127.0.0.1:${port}/hooks/alice`,
      });
      expect(await crashing.exited).toEqual({ code: null, signal: "SIGKILL" });
      await stopped(crashing);
      // The dead process delivered nothing.
      expect(received).toEqual([]);

      const recovering = await box.start(env());
      const client = await box.client(recovering, "alice");
      await waitUntil(
        async () => (await client.runs.get(thread.thread_id, run.run_id)).status !== "running",
        "the run's recovery",
        60_000,
      );
      const ended = await client.runs.get(thread.thread_id, run.run_id);
      expect(ended.status).toBe("success");
      // The thread holds the run's complete answer, and the thread is free.
      const state = await client.threads.getState(thread.thread_id);
      const values = state.values as { status?: string; result?: { answer?: string } | null };
      expect(values.status).toBe("completed");
      expect(values.result?.answer).toBeTruthy();
      await waitUntil(
        async () => (await client.threads.get(thread.thread_id)).status === "idle",
        "the thread's release",
        30_000,
      );

      // run.ended arrives, once (another sweep or poll must not repeat it).
      await waitUntil(() => received.length >= 1, "the run.ended webhook", 30_000);
      await sleep(1_500);
      expect(received.map((body) => [body.event, body.run_id, body.status, body.outcome_status])).toEqual([
        ["run.ended", run.run_id, "success", "completed"],
      ]);
      recovering.signal("SIGTERM");
      await stopped(recovering);
    },
    180_000,
  );
});
