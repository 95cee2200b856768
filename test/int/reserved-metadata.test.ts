/**
 * Metadata keys only the server writes (issue 46 item 7; RESERVED_METADATA in
 * src/server/request-fields.ts): each key, one at a time, sent by a client
 * with a value of its own on every entry point that takes metadata (thread
 * create, thread patch, a run started at once, a delayed run from the queue)
 * is absent from the thread's, the run's and every checkpoint's metadata; a
 * key that is not reserved is kept, so the check can tell. Checked in the
 * answers and in the stored rows (threads, runs, checkpoints): the client
 * view hides some keys from answers whether they are stored or not. (`graph_id` on
 * thread create names the thread's graph: one not served is refused, 422.)
 */
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { NOTES_QUESTION, startTestServer, type TestServer } from "./support/server.js";

const RESERVED = [
  "owner",
  "tenant",
  "user_id",
  "graph_id",
  "assistant_id",
  "thread_id",
  "run_id",
  "langgraph_auth_user",
  "langgraph_auth_user_id",
  "langgraph_auth_permissions",
];

let server: TestServer;
const fixture = useSandbox();
beforeAll(async () => {
  server = fixture.add(await startTestServer({ settings: { WARRANT_QUEUE_POLL_MS: "100" } }));
}, 120_000);

type Json = Record<string, unknown>;
const call = async (pathname: string, method = "GET", body?: unknown) => {
  const response = await server.fetch(pathname, {
    method,
    user: "alice",
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  expect(response.status, `${method} ${pathname}: ${text}`).toBe(200);
  return JSON.parse(text) as Json;
};
const metadataOf = (value: unknown) => ((value as { metadata?: Json }).metadata ?? {}) as Json;

describe("reserved metadata keys", () => {
  it.each(RESERVED)(
    "%s sent by a client is dropped on every entry point; a plain key is kept",
    async (key) => {
      const spoof = `spoofed-${key}`;
      const sent = (entry: string) => ({ [key]: spoof, [`kept_${entry}`]: "yes" });
      const absent = (metadata: Json, where: string) => {
        expect(metadata[key], `${where}: ${JSON.stringify(metadata)}`).not.toBe(spoof);
        expect(JSON.stringify(metadata), where).not.toContain(spoof);
      };

      if (key === "graph_id") {
        // On create, metadata.graph_id is the SDK's way to name the thread's graph: one not served is refused.
        const refused = await server.fetch("/threads", {
          method: "POST",
          user: "alice",
          body: JSON.stringify({ metadata: sent("create") }),
        });
        expect(refused.status).toBe(422);
        expect(((await refused.json()) as { error: string }).error).toBe("invalid_request");
      }
      const created = await call("/threads", "POST", {
        metadata: key === "graph_id" ? { kept_create: "yes" } : sent("create"),
      });
      const threadId = created["thread_id"] as string;
      expect(metadataOf(created)["kept_create"]).toBe("yes");
      absent(metadataOf(created), "thread create");

      const patched = await call(`/threads/${threadId}`, "PATCH", { metadata: sent("patch") });
      expect(metadataOf(patched)["kept_patch"]).toBe("yes");
      absent(metadataOf(patched), "thread patch");

      const ask = { assistant_id: "agent", input: { messages: [{ role: "user", content: NOTES_QUESTION }] } };
      await call(`/threads/${threadId}/runs/wait`, "POST", { ...ask, metadata: sent("run") });
      const delayed = await call(`/threads/${threadId}/runs`, "POST", {
        ...ask,
        after_seconds: 1,
        metadata: sent("delayed"),
      });
      expect(metadataOf(delayed)["kept_delayed"]).toBe("yes");
      absent(metadataOf(delayed), "delayed run");
      const delayedId = delayed["run_id"] as string;
      for (let tries = 0; tries < 200; tries += 1) {
        const run = await call(`/threads/${threadId}/runs/${delayedId}`);
        if (run["status"] === "success") break;
        expect(["pending", "running"]).toContain(run["status"]);
        await sleep(100);
      }

      const runs = (await call(`/threads/${threadId}/runs`)) as unknown as Json[];
      expect(runs).toHaveLength(2);
      for (const run of runs) {
        expect(run["status"]).toBe("success");
        absent(metadataOf(run), `run ${String(run["run_id"])}`);
      }
      expect(runs.map((run) => Object.keys(metadataOf(run)).filter((name) => name.startsWith("kept_"))).sort()).toEqual(
        [["kept_delayed"], ["kept_run"]],
      );

      const thread = await call(`/threads/${threadId}`);
      absent(metadataOf(thread), "thread");
      const history = (await call(`/threads/${threadId}/history`, "POST", { limit: 100 })) as unknown as Json[];
      expect(history.length).toBeGreaterThan(2);
      for (const checkpoint of history) absent(metadataOf(checkpoint), "checkpoint");
      // The run's own metadata reaches its checkpoints: the plain key is there, the reserved one is not.
      expect(history.some((checkpoint) => metadataOf(checkpoint)["kept_run"] === "yes")).toBe(true);

      // Not only hidden from answers (client-view.ts hides some keys): never stored.
      const stored = new pg.Client({ connectionString: server.databaseUrl });
      await stored.connect();
      try {
        for (const table of ["warrant.threads", "warrant.runs", "checkpoints"]) {
          const { rows } = await stored.query<{ metadata: string }>(
            `select metadata::text as metadata from ${table} where thread_id = $1`,
            [threadId],
          );
          expect(rows.length, table).toBeGreaterThan(0);
          for (const row of rows) expect(row.metadata, table).not.toContain(spoof);
          expect(
            rows.some((row) => row.metadata.includes("kept_")),
            table,
          ).toBe(true);
        }
      } finally {
        await stored.end();
      }
    },
    120_000,
  );
});
