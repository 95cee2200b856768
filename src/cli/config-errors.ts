/**
 * The one way a command reports a configuration error (a bad setting, an
 * unreachable database, an unknown principal): one `warrant: <code>: <message>`
 * line on stderr and exit 1. Anything else is a bug and propagates.
 */
import { isConfigError } from "../errors.js";

export async function exitOnConfigError(body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (error) {
    if (isConfigError(error)) {
      process.stderr.write(`warrant: ${error.code}: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
