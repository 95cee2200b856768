/** Reading the calendar server's store file in tests. */
import { readFile } from "node:fs/promises";

/** Events in a calendar store file; an absent file holds none. */
export async function storedCalendarEvents(dataPath: string): Promise<Array<Record<string, unknown>>> {
  try {
    return (JSON.parse(await readFile(dataPath, "utf8")) as { events: Array<Record<string, unknown>> }).events;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}
