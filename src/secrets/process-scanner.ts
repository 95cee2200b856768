/**
 * Redaction for what enters or leaves the process outside a tool host: log
 * lines ({@link logLine}: errors that echo their input, a server's message)
 * and resume values before LangGraph checkpoints them
 * ({@link withoutSecretShapes}).
 *
 * There is no "current" scanner: a caller that has a tool host passes that
 * host's scanner (its configured patterns and the deployment's key), so two
 * hosts in one process (tests, the CLI, the eval) each redact with their own.
 * Without one (a log line before any host is built, a test double), the
 * built-in patterns apply, under a random key for this process.
 */
import { randomBytes } from "node:crypto";
import { createSecretScanner, type SecretScanner } from "./scanner.js";

let builtin: SecretScanner | undefined;

/** The built-in patterns under a random key of this process: never configured, never replaced. */
export function builtinScanner(): SecretScanner {
  builtin ??= createSecretScanner({ key: randomBytes(32) });
  return builtin;
}

/** The line with every secret-shaped value replaced by its marker (`scanner`'s patterns, else the built-in ones). */
export function logLine(text: string, scanner: SecretScanner = builtinScanner()): string {
  return scanner.text(text, "log").value;
}

/**
 * A value from a client (a resume value) with secret-shaped strings replaced,
 * before LangGraph stores it in the checkpoint's pending writes. Fields a
 * contract marks sensitive are redacted later, by human_review, which knows
 * the tools; markers here are audited there too.
 */
export function withoutSecretShapes<T>(value: T, scanner: SecretScanner = builtinScanner()): T {
  return scanner.value(value, "resume").value;
}

/**
 * The deployment's scanner (the tool host's, built from the config and the
 * deployment's key), or for a tool host that has none (test doubles) the
 * built-in patterns.
 */
export function scannerOf(tools: { secrets?: SecretScanner | undefined }): SecretScanner {
  return tools.secrets ?? builtinScanner();
}
