/** Reading the calendar server's events in tests: its store file, or its table in Postgres. */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { ToolMessage } from "@langchain/core/messages";
import pg from "pg";
import type { WarrantConfig } from "../../../src/policy/config.js";
import type { State } from "../../../src/state.js";
import type { LedgerRow } from "../../../src/state/ledger.js";
import type { Sandbox } from "../../support/sandbox.js";
import type { ScriptStep } from "../../support/scripted-planner.js";

/** What alice asks in the calendar write tests: one study block, which the planner proposes as EVENT. */
export const REQUEST = "Put a study block for attention in my calendar on Monday evening";
export const EVENT = {
  title: "Revise attention",
  start: "2025-03-03T18:00:00+01:00",
  end: "2025-03-03T19:30:00+01:00",
  timezone: "Europe/Berlin",
  calendar: "study",
};
/** The planner's final answer once the write's result is observed. */
export const DONE: ScriptStep = {
  type: "final",
  answer: "The study block is in your calendar.",
  citations: [],
  abstained: false,
};
/** alice's resume that approves the pending write. */
export const APPROVE = { decisions: [{ type: "approve" }] };

/** Events in a calendar store file; an absent file holds none. */
export async function storedCalendarEvents(dataPath: string): Promise<Array<Record<string, unknown>>> {
  try {
    return (JSON.parse(await readFile(dataPath, "utf8")) as { events: Array<Record<string, unknown>> }).events;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

/** Rows of `calendar.events` in the database at `databaseUrl`; none when the calendar never started there. */
export async function databaseCalendarEvents(
  databaseUrl: string,
  schema = "calendar",
): Promise<Array<Record<string, unknown>>> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const exists = await client.query("select to_regclass($1) is not null as present", [`${schema}.events`]);
    if (exists.rows[0]?.present !== true) return [];
    return (await client.query(`select * from "${schema}".events order by start_at, event_id`)).rows as Array<
      Record<string, unknown>
    >;
  } finally {
    await client.end();
  }
}

/** The path of a calendar data file in a fresh directory of `sandbox` (removed at its teardown); the file is not made. */
export async function calendarDataPath(sandbox: Sandbox, prefix: string): Promise<string> {
  return path.join(await sandbox.tempDir(prefix), "calendar.json");
}

/**
 * The shipped calendar server and its contracts only, on `dataPath`, with the given test switches
 * (WARRANT_CALENDAR_FAIL and the like); create_study_event times out after `writeTimeoutMs`.
 */
export function calendarConfig(
  shipped: WarrantConfig,
  dataPath: string,
  switches: Record<string, string>,
  writeTimeoutMs: number,
): WarrantConfig {
  const server = shipped.servers["calendar"];
  if (server?.transport !== "stdio") throw new Error("the shipped config has no stdio calendar server");
  const tools = Object.fromEntries(
    Object.entries(shipped.tools)
      .filter(([, contract]) => contract.server === "calendar")
      .map(([name, contract]) => [
        name,
        name === "create_study_event" ? { ...contract, timeout_ms: writeTimeoutMs } : contract,
      ]),
  );
  return {
    ...shipped,
    servers: { calendar: { ...server, env: { ...server.env, WARRANT_CALENDAR_DATA: dataPath, ...switches } } },
    tools,
  };
}

/** Ledger rows as compared in assertions, by attempt: [tool, attempt, status, error_code, reconciles, reconciled_by]. */
export function ledgerShape(rows: readonly LedgerRow[]) {
  return [...rows]
    .sort((left, right) => left.attempt - right.attempt)
    .map((row) => [
      row.tool,
      row.attempt,
      row.status,
      row.error_code,
      row.reconciles ?? null,
      row.reconciled_by ?? null,
    ]);
}

/** The error code of each tool message, or "ok". */
export function toolCodes(state: State): string[] {
  return state.messages
    .filter((message): message is ToolMessage => ToolMessage.isInstance(message))
    .map((message) =>
      message.status === "error"
        ? (JSON.parse(String(message.content)) as { error: { code: string } }).error.code
        : "ok",
    );
}
