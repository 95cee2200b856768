/**
 * Turns raw MCP call results into compact observations. Structured content is
 * used once (never re-encoded into text as well), long output is cut with a
 * notice, and server errors become typed tool errors. Tool output is evidence,
 * never instructions: nothing here interprets its text.
 */
import { isToolErrorCode, type ToolErrorCode } from "../errors.js";

export interface RawCallResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
}

export type NormalizedResult =
  | { ok: true; text: string; structured: unknown }
  | { ok: false; code: ToolErrorCode; message: string };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function textBlocks(content: unknown): string {
  if (!Array.isArray(content)) return "";
  return content
    .filter(
      (block): block is { type: "text"; text: string } =>
        isRecord(block) && block["type"] === "text" && typeof block["text"] === "string",
    )
    .map((block) => block.text)
    .join("\n");
}

/** Cuts arrays to `maxItems` (saying so) and strings to `maxChars`. */
export function limitOutput(value: unknown, limits: { max_items: number; max_chars: number }): unknown {
  if (Array.isArray(value)) return value.slice(0, limits.max_items).map((item) => limitOutput(item, limits));
  if (typeof value === "string") {
    return value.length > limits.max_chars
      ? `${value.slice(0, limits.max_chars)}… [truncated, ${value.length} chars]`
      : value;
  }
  if (!isRecord(value)) return value;
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    result[key] = limitOutput(item, limits);
    if (Array.isArray(item) && item.length > limits.max_items) {
      result[`${key}_notice`] = `showing ${limits.max_items} of ${item.length}`;
    }
  }
  return result;
}

/** Parses a server's error text; a `{"code": …}` JSON body keeps its code if it is one of ours. */
function errorFrom(text: string): { code: ToolErrorCode; message: string } {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isRecord(parsed) && isToolErrorCode(parsed["code"])) {
      const message = typeof parsed["message"] === "string" ? parsed["message"] : parsed["code"];
      return { code: parsed["code"], message: message.slice(0, 500) };
    }
  } catch {
    // Not JSON: a plain-text tool error.
  }
  // Schema and validation failures reported by the server are contract errors.
  if (/validation|invalid arguments|input validation/i.test(text))
    return { code: "invalid_arguments", message: "the server rejected the arguments" };
  // Only errors that say they are temporary are transient (and so retried for reads).
  if (/timed? ?out|temporar|unavailable|try again|ECONN|overloaded/i.test(text))
    return { code: "transient_error", message: firstLine(text) };
  return { code: "tool_failed", message: firstLine(text) };
}

function firstLine(text: string): string {
  const line = text.split("\n", 1)[0] ?? "";
  return line.slice(0, 300) || "the tool reported an error";
}

/** Normalizes one MCP `tools/call` result under the contract's output limits. */
export function normalizeResult(raw: unknown, limits: { max_items: number; max_chars: number }): NormalizedResult {
  if (!isRecord(raw)) return { ok: false, code: "protocol_error", message: "the server returned a malformed result" };
  const text = textBlocks(raw["content"]);
  if (raw["isError"] === true) return { ok: false, ...errorFrom(text) };
  if (raw["structuredContent"] !== undefined) {
    if (!isRecord(raw["structuredContent"]))
      return { ok: false, code: "protocol_error", message: "structuredContent is not an object" };
    const structured = limitOutput(raw["structuredContent"], limits);
    return { ok: true, text: JSON.stringify(structured), structured };
  }
  const limited = limitOutput(text, limits);
  return { ok: true, text: typeof limited === "string" ? limited : text, structured: undefined };
}
