/**
 * Log lines without secrets: every line the server, the CLI and the tool host
 * write about errors and health goes through {@link logLine}, which replaces
 * secret-shaped values (an error that echoes its input, a server's message)
 * by redaction markers. The scanner is the deployment's once a tool host is
 * built (its configured patterns and key), before that the built-in patterns
 * with a random key for this process.
 */
import { randomBytes } from "node:crypto";
import { createSecretScanner, type SecretScanner } from "../policy/secrets.js";

let active: SecretScanner | undefined;

/** Makes log lines use this scanner (the tool host calls it when it is built). */
export function redactLogsWith(scanner: SecretScanner): void {
  active = scanner;
}

/** The line with every secret-shaped value replaced by its marker. */
export function logLine(text: string): string {
  active ??= createSecretScanner({ key: randomBytes(32) });
  return active.text(text, "log").value;
}
