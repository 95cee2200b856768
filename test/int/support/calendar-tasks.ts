/** The calendar with its tasks on (2026-07-28, `WARRANT_CALENDAR_TASK_MS`), shared by the task tests and their child. */
import { readFile } from "node:fs/promises";
import type { WarrantConfig } from "../../../src/policy/config.js";

/** How long the calendar's task takes before it writes. */
export const WORK_MS = 1_500;

/** The shipped calendar server on 2026-07-28 with its tasks on (file store at `dataPath`), create_study_event opted in. */
export function taskConfig(
  shipped: WarrantConfig,
  dataPath: string,
  switches: Record<string, string> = {},
): WarrantConfig {
  const server = shipped.servers["calendar"];
  if (server?.transport !== "stdio") throw new Error("the shipped config has no stdio calendar server");
  const tools = Object.fromEntries(
    Object.entries(shipped.tools)
      .filter(([, contract]) => contract.server === "calendar")
      .map(([name, contract]) => [
        name,
        name === "create_study_event" ? { ...contract, task: true, timeout_ms: 30_000 } : contract,
      ]),
  );
  // The file store (no database): the tasks file sits beside it.
  const { WARRANT_CALENDAR_DATABASE_URL: _database, ...shippedEnv } = server.env;
  const env = {
    ...shippedEnv,
    WARRANT_CALENDAR_DATA: dataPath,
    WARRANT_CALENDAR_TASK_MS: String(WORK_MS),
    ...switches,
  };
  return { ...shipped, servers: { calendar: { ...server, protocol: "2026-07-28", env } }, tools };
}

/** The calendar's tasks, from its tasks file. */
export async function serverTasks(dataPath: string): Promise<Array<{ status: string }>> {
  try {
    return Object.values(
      JSON.parse(await readFile(`${dataPath}.tasks.json`, "utf8")) as Record<string, { status: string }>,
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

/** Where a host dies during a task write. */
export const MOMENTS = ["before_task_id", "while_polling", "after_completion"] as const;
export type Moment = (typeof MOMENTS)[number];
