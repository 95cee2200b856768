/**
 * A confirmed write on 2026-07-28 through the API (issue 39, item 2): `npm start` as a real process on real
 * Postgres, the model on the fake endpoint, the shipped calendar pinned to 2026-07-28 and asking the owner to
 * confirm (`WARRANT_CALENDAR_CONFIRM=1`, an `input_required` answer to `tools/call`). alice approves the write
 * through the SDK; the confirmation reaches her as the run stream's `elicitation` event, she answers it through
 * `POST /threads/{id}/elicitations/{id}`, the SDK client re-sends the call with her answer, and the write applies
 * once: one event, one ledger row (attempt 1), the question recorded with its outcome, the same key on both requests.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { finalReply } from "../support/scripted-model.js";
import { useSandbox } from "../support/sandbox.js";
import { EVENT, REQUEST } from "./support/calendar.js";
import type { ElicitationEventData } from "./support/elicitation.js";
import { startFakeOpenAI, type ScriptedCompletion } from "./support/fake-openai.js";
import { createServerSandbox, waitUntil, type ServerSandbox } from "./support/server-process.js";

const TEST_TIMEOUT_MS = 180_000;
const APPROVE = { decisions: [{ type: "approve" }] };
const PROPOSAL: ScriptedCompletion = {
  kind: "completion",
  tool_calls: [{ id: "call_confirm_1", name: "create_study_event", arguments: JSON.stringify(EVENT) }],
  finish_reason: "tool_calls",
  usage: { prompt_tokens: 50, completion_tokens: 20 },
};

/**
 * The shipped config with the calendar pinned to 2026-07-28 and allowed to ask users, written into `directory`;
 * with `task`, create_study_event runs as an MCP task.
 */
async function writePinnedConfig(directory: string, task: boolean): Promise<string> {
  const config = JSON.parse(await readFile("warrant.config.json", "utf8")) as {
    servers: Record<string, Record<string, unknown>>;
    tools: Record<string, Record<string, unknown>>;
    policy: { cedar: { schema: string; policies: string[] } };
  };
  config.servers["calendar"] = { ...config.servers["calendar"], protocol: "2026-07-28", elicitation: true };
  if (task) config.tools["create_study_event"] = { ...config.tools["create_study_event"], task: true };
  // Relative paths in the config are the repository's: the file lives elsewhere.
  config.policy.cedar.schema = path.resolve(config.policy.cedar.schema);
  config.policy.cedar.policies = config.policy.cedar.policies.map((file) => path.resolve(file));
  const file = path.join(directory, "pinned.config.json");
  await writeFile(file, JSON.stringify(config, null, 2));
  return file;
}

async function query<T>(sandbox: ServerSandbox, sql: string, params: unknown[]): Promise<T[]> {
  const client = new pg.Client({ connectionString: sandbox.databaseUrl });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * The two ways the confirmation reaches the host: a plain call's `input_required` answer (the SDK client re-sends
 * the call with the answer), or a task's (`input_required` on the task, answered with `tasks/update` on the same
 * task, which the run then waits for: the row keeps the question's record).
 */
const WAYS = [
  { way: "a plain call", task: false, methods: [undefined, undefined] },
  { way: "a task", task: true, methods: ["tools/call", "tasks/update"] },
] as const;

describe("a confirmed calendar write on 2026-07-28 through the API", () => {
  const fixture = useSandbox("each", 60_000);

  it.each(WAYS)(
    "$way: the owner confirms in the run's elicitation: one event, one row at attempt 1, one key on both requests",
    async ({ task, methods }) => {
      const fake = fixture.add(await startFakeOpenAI());
      const sandbox = fixture.add(await createServerSandbox());
      const callLog = path.join(sandbox.dataDir, "calls.jsonl");
      const server = await sandbox.start({
        WARRANT_PLANNER: "model",
        WARRANT_MODEL: "fake-model",
        OPENAI_BASE_URL: fake.baseUrl,
        WARRANT_CONFIG: await writePinnedConfig(sandbox.dataDir, task),
        WARRANT_CALENDAR_CONFIRM: "1",
        WARRANT_CALENDAR_CALL_LOG: callLog,
        ...(task ? { WARRANT_CALENDAR_TASK_MS: "500" } : {}),
      });
      fake.enqueue(PROPOSAL, finalReply("The study block is in your calendar."));
      const alice = await sandbox.client(server, "alice");
      const thread = await alice.threads.create();
      const paused = (await alice.runs.wait(thread.thread_id, "agent", {
        input: { messages: [{ role: "user", content: REQUEST }] },
      })) as { __interrupt__?: unknown[] };
      expect(paused.__interrupt__).toHaveLength(1);

      // The approval's run streams; the server's confirmation arrives on it as an elicitation event.
      const events: { event: string; data: unknown }[] = [];
      const done = (async () => {
        for await (const chunk of alice.runs.stream(thread.thread_id, "agent", {
          command: { resume: APPROVE },
          streamMode: ["values", "custom"],
        }))
          events.push({ event: chunk.event, data: chunk.data });
      })();
      const custom = (type: string) =>
        events
          .filter((chunk) => chunk.event === "custom")
          .map((chunk) => chunk.data as Record<string, unknown>)
          .filter((data) => data["type"] === type);
      await waitUntil(() => custom("elicitation").length > 0, "the confirmation question", 60_000);
      const question = custom("elicitation")[0] as unknown as ElicitationEventData;
      expect(question).toMatchObject({ thread_id: thread.thread_id, server: "calendar", tool: "create_study_event" });
      expect(await sandbox.calendarEvents()).toHaveLength(0);

      const response = await sandbox.fetch(
        server,
        `/threads/${thread.thread_id}/elicitations/${question.elicitation_id}`,
        {
          method: "POST",
          body: JSON.stringify({ action: "accept", content: { confirm: true } }),
          headers: { "content-type": "application/json" },
          user: "alice",
        },
      );
      expect(response.status).toBe(200);
      await done;

      const calendar = await sandbox.calendarEvents();
      expect(calendar).toHaveLength(1);
      const rows = await query<{ attempt: number; status: string; idempotency_key: string; task: boolean }>(
        sandbox,
        "select attempt, status, idempotency_key, task_id is not null as task from warrant.ledger " +
          "where thread_id = $1 and tool = 'create_study_event'",
        [thread.thread_id],
      );
      expect(rows.map((row) => [row.attempt, row.status, row.task])).toEqual([[1, "succeeded", task]]);
      const key = rows[0]?.idempotency_key;
      expect(calendar[0]?.["idempotency_key"]).toBe(key);
      const lines = (await readFile(callLog, "utf8")).split("\n").filter((line) => line !== "");
      expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([
        { method: methods[0], idempotency_key: key, input_responses: false },
        { method: methods[1], idempotency_key: key, input_responses: true },
      ]);
      // A task the owner answered is waited for in the run (no task wait): the stream's last values are final.
      const values = [...events].reverse().find((chunk) => chunk.event === "values")?.data as {
        status?: string;
        ledger?: Array<Record<string, unknown>>;
      };
      expect(values.status).toBe("completed");
      const written = values.ledger?.filter((row) => row["tool"] === "create_study_event");
      expect(written?.map((row) => [row["attempt"], row["status"], row["elicitation"]])).toEqual([
        [1, "succeeded", [{ id: question.elicitation_id, outcome: "accept" }]],
      ]);
      const asked = await query<Record<string, unknown>>(
        sandbox,
        "select status, answered_by from warrant.elicitations where elicitation_id = $1",
        [question.elicitation_id],
      );
      expect(asked).toEqual([{ status: "accept", answered_by: "alice" }]);
      const audited = await query<Record<string, unknown>>(
        sandbox,
        "select code, tool, actor from warrant.audit_events where thread_id = $1 and kind = 'elicited'",
        [thread.thread_id],
      );
      expect(audited).toEqual([{ code: "accept", tool: "create_study_event", actor: "alice" }]);
      expect(fake.pending()).toBe(0);
    },
    TEST_TIMEOUT_MS,
  );
});
