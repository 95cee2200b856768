/**
 * The process's secret scanner, for what enters or leaves the process outside
 * a tool host: log lines ({@link logLine}: errors that echo their input, a
 * server's message) and resume values before LangGraph checkpoints them
 * ({@link withoutSecretShapes}). It is the deployment's scanner once a tool
 * host is built (configured patterns, the deployment's key), before that the
 * built-in patterns with a random key for this process.
 */
import { randomBytes } from "node:crypto";
import { createSecretScanner, type SecretScanner } from "../policy/secrets.js";

let active: SecretScanner | undefined;

/** Makes this process use `scanner` (the tool host calls it when it is built). */
export function useProcessScanner(scanner: SecretScanner): void {
  active = scanner;
}

export function processScanner(): SecretScanner {
  active ??= createSecretScanner({ key: randomBytes(32) });
  return active;
}

/** The line with every secret-shaped value replaced by its marker. */
export function logLine(text: string): string {
  return processScanner().text(text, "log").value;
}

/**
 * A value from a client (a resume value) with secret-shaped strings replaced,
 * before LangGraph stores it in the checkpoint's pending writes. Fields a
 * contract marks sensitive are redacted later, by human_review, which knows
 * the tools; markers here are audited there too.
 */
export function withoutSecretShapes<T>(value: T): T {
  return processScanner().value(value, "resume").value;
}
