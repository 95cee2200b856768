/**
 * The one way a command reports a configuration error (a bad setting, an
 * unreachable database, an unknown principal) or a refusal of the running
 * server it went through: one `warrant: <code>: <message>` line on stderr and
 * exit 1. Anything else is a bug and propagates.
 */
import { isConfigError } from "../errors.js";

const isServerRefusal = (error: unknown): error is { code: string; message: string } =>
  (error as { name?: unknown } | null)?.name === "ServerRefusal";

export async function exitOnConfigError(body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (error) {
    if (isConfigError(error) || isServerRefusal(error)) {
      process.stderr.write(`warrant: ${error.code}: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
