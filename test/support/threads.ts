/** Thread ids for tests that share one database: a prefix naming the test, eight random hex digits. */
import { randomBytes } from "node:crypto";

export function uniqueThread(prefix = "thread"): string {
  return `${prefix}-${randomBytes(4).toString("hex")}`;
}
