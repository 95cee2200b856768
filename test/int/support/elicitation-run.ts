/**
 * Driving a run that elicits, through the API: start it and collect its
 * stream (`values` and `custom` events), find the `elicitation` event, answer
 * it as a user, read the tool's reply and ledger rows from the last state,
 * and query the server's tables.
 */
import type { Client } from "@langchain/langgraph-sdk";
import pg from "pg";
import { expect } from "vitest";
import type { ElicitationEventData } from "./elicitation.js";
import { waitUntil, type ServerProcess, type ServerSandbox } from "./server-process.js";

export interface Streamed {
  events: { event: string; data: unknown }[];
  done: Promise<void>;
}

/** Starts a run on a new thread of the client's user and collects its stream events in the background. */
export async function startRun(client: Client, text: string): Promise<{ threadId: string; streamed: Streamed }> {
  const thread = await client.threads.create();
  const events: Streamed["events"] = [];
  const stream = client.runs.stream(thread.thread_id, "agent", {
    input: { messages: [{ role: "human", content: text }] },
    streamMode: ["values", "custom"],
  });
  const done = (async () => {
    for await (const chunk of stream) events.push({ event: chunk.event, data: chunk.data });
  })();
  return { threadId: thread.thread_id, streamed: { events, done } };
}

export function customOf(streamed: Streamed, type: string): Record<string, unknown>[] {
  return streamed.events
    .filter((chunk) => chunk.event === "custom")
    .map((chunk) => chunk.data as Record<string, unknown>)
    .filter((data) => data["type"] === type);
}

export async function elicitationOf(streamed: Streamed): Promise<ElicitationEventData> {
  await waitUntil(() => customOf(streamed, "elicitation").length > 0, "the elicitation event", 60_000);
  return customOf(streamed, "elicitation")[0] as unknown as ElicitationEventData;
}

function lastValues(streamed: Streamed) {
  return [...streamed.events].reverse().find((chunk) => chunk.event === "values")?.data as
    | { messages?: { type?: string; content?: unknown }[]; ledger?: Record<string, unknown>[] }
    | undefined;
}

export function toolTextOf(streamed: Streamed): string {
  const tool = lastValues(streamed)?.messages?.find((message) => message.type === "tool");
  return String(tool?.content ?? "");
}

/** The tool's ledger rows in the run's last state (the rows the execute node wrote). */
export function ledgerRowsOf(streamed: Streamed, tool: string): Record<string, unknown>[] {
  return (lastValues(streamed)?.ledger ?? []).filter((row) => row["tool"] === tool);
}

/** Answers a question as `user` on `target`: the status and the JSON body. */
export async function answerAs(
  sandbox: ServerSandbox,
  target: ServerProcess,
  user: string,
  event: ElicitationEventData,
  body: unknown,
) {
  const response = await sandbox.fetch(target, `/threads/${event.thread_id}/elicitations/${event.elicitation_id}`, {
    method: "POST",
    body: typeof body === "string" ? body : JSON.stringify(body),
    headers: { "content-type": "application/json" },
    user,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

export async function queryRows<T>(databaseUrl: string, sql: string, params: unknown[]): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * Asserts that a run's URL-mode question was refused (`elicitation_url_refused`) before anyone was asked: no
 * `elicitation` event, the call's ledger row notes one refusal, one `elicited` audit event with the code, no
 * question row. `label` names the case in a failure.
 */
export async function expectUrlRefusedUnasked(
  databaseUrl: string,
  threadId: string,
  streamed: Streamed,
  label: string,
): Promise<void> {
  expect({ label, asked: customOf(streamed, "elicitation").length }).toEqual({ label, asked: 0 });
  expect(ledgerRowsOf(streamed, "open_consent_page").map((row) => row["elicitation"])).toEqual([
    [{ id: null, outcome: "refused" }],
  ]);
  const audit = await queryRows<{ code: string; detail: string }>(
    databaseUrl,
    "select code, detail from warrant.audit_events where thread_id = $1 and kind = 'elicited'",
    [threadId],
  );
  expect(audit).toEqual([{ code: "refused", detail: expect.stringContaining("elicitation_url_refused: ") }]);
  const rows = await queryRows<unknown>(databaseUrl, "select 1 from warrant.elicitations where thread_id = $1", [
    threadId,
  ]);
  expect(rows).toEqual([]);
}
