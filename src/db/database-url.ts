/**
 * What database.ts tells about a `DATABASE_URL` and a driver's error: the
 * URL's shape checked and reduced to `host:port/database` (never the URL
 * itself, which may hold a password), and errors reduced to one line with
 * the password scrubbed.
 */
import { ConfigError } from "../errors.js";

export interface Target {
  /** `host:port/database`, the only form of the URL that appears in messages. */
  label: string;
  /** Decoded password ("" if none), kept only to scrub it from driver messages. */
  password: string;
}

/** Checks the URL's shape; never echoes the URL itself, which may hold a password. */
export function describeTarget(databaseUrl: string): Target {
  let parsed: URL;
  try {
    parsed = new URL(databaseUrl);
  } catch {
    throw new ConfigError("config_invalid", "DATABASE_URL is not a URL (expected postgres://user@host:port/database)");
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    throw new ConfigError("config_invalid", `DATABASE_URL has protocol ${parsed.protocol}, expected postgres:`);
  }
  if (parsed.hostname === "") throw new ConfigError("config_invalid", "DATABASE_URL has no host");
  const database = safeDecode(parsed.pathname.replace(/^\//, "")) || "(default database)";
  return { label: `${parsed.hostname}:${parsed.port || "5432"}/${database}`, password: safeDecode(parsed.password) };
}

/**
 * Belt and braces: driver messages name users and hosts, not passwords, but
 * if one ever echoed the connection string the password must not escape.
 */
export function withoutSecret(error: unknown, password: string): unknown {
  if (password === "" || !(error instanceof Error) || !error.message.includes(password)) return error;
  error.message = error.message.split(password).join("***");
  return error;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * First line of an error's message: ConfigError messages are one line. Node
 * reports a failed dual-stack connect as an AggregateError with an empty
 * message, so fall back to its first inner error, then to its code.
 */
export function oneLine(error: unknown): string {
  if (error instanceof AggregateError && error.message === "" && error.errors.length > 0)
    return oneLine(error.errors[0]);
  const message = error instanceof Error ? error.message : String(error);
  const first = message.split(/\r?\n/, 1)[0]?.trim();
  if (first !== undefined && first !== "") return first;
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" ? code : "unknown error";
}
