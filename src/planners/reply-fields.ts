/**
 * Boundary guards for what a model endpoint sends: replies, errors and usage
 * are data from outside, read as `unknown`, and any of their text copied
 * into our messages is cut to one bounded, storable line.
 */
import { escapeUnsafe } from "../policy/safe-text.js";

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function stringField(value: unknown, key: string): string | undefined {
  if (!isRecord(value)) return undefined;
  const field = value[key];
  return typeof field === "string" ? field : undefined;
}

export function numberField(value: unknown, key: string): number | undefined {
  if (!isRecord(value)) return undefined;
  const field = value[key];
  return typeof field === "number" && Number.isFinite(field) ? field : undefined;
}

export function recordField(value: unknown, key: string): Record<string, unknown> | undefined {
  if (!isRecord(value)) return undefined;
  const field = value[key];
  return isRecord(field) ? field : undefined;
}

export function arrayField(value: unknown, key: string): unknown[] {
  if (!isRecord(value)) return [];
  const field = value[key];
  return Array.isArray(field) ? field : [];
}

/** One line, at most `limit` characters, with anything unstorable escaped: server text ends up in audit rows and run outcomes. */
export function truncate(text: string, limit: number): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  return escapeUnsafe(oneLine.length > limit ? `${oneLine.slice(0, limit)}…` : oneLine);
}
