/**
 * MCP resources and prompts, normalized like tool results: text for the
 * planner, JSON parsed once when the content is JSON, non-text content named
 * rather than inlined, and a malformed answer a `protocol_error`. Pure.
 */
import type { ToolErrorCode } from "../errors.js";
import type { NormalizedResult } from "./normalize.js";

/** A prompt's messages as text, or a typed failure. */
export type PromptResult =
  | { ok: true; messages: { role: "user" | "assistant"; text: string }[] }
  | { ok: false; code: ToolErrorCode; message: string };

/** Longest resource text handed on; beyond it the text is cut with a notice (JSON is parsed before the cut). */
export const MAX_RESOURCE_CHARS = 200_000;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isJsonMime(mimeType: unknown): boolean {
  return typeof mimeType === "string" && /^application\/(?:[\w.+-]+\+)?json(?:\s*;|$)/i.test(mimeType.trim());
}

/** Parsed JSON when the mime type says JSON or the text looks like a JSON object or array; undefined otherwise. */
function parseJson(text: string, mimeType: unknown): unknown {
  const start = text.trimStart()[0];
  if (!isJsonMime(mimeType) && start !== "{" && start !== "[") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Normalizes a `resources/read` result: text contents joined; `structured` when the one text content is JSON. */
export function normalizeResource(raw: unknown): NormalizedResult {
  if (!isRecord(raw) || !Array.isArray(raw["contents"]))
    return { ok: false, code: "protocol_error", message: "the server returned a malformed resource" };
  const texts: { text: string; mimeType: unknown }[] = [];
  for (const content of raw["contents"]) {
    if (!isRecord(content))
      return { ok: false, code: "protocol_error", message: "the server returned a malformed resource" };
    if (typeof content["text"] === "string") texts.push({ text: content["text"], mimeType: content["mimeType"] });
    else if (typeof content["blob"] === "string")
      texts.push({
        text: `[binary content omitted${typeof content["mimeType"] === "string" ? `: ${content["mimeType"]}` : ""}]`,
        mimeType: undefined,
      });
    else return { ok: false, code: "protocol_error", message: "the server returned a malformed resource" };
  }
  const joined = texts.map((content) => content.text).join("\n");
  const only = texts.length === 1 ? texts[0] : undefined;
  const structured = only ? parseJson(only.text, only.mimeType) : undefined;
  const text =
    joined.length > MAX_RESOURCE_CHARS
      ? `${joined.slice(0, MAX_RESOURCE_CHARS)}… [truncated, ${joined.length} chars]`
      : joined;
  return { ok: true, text, structured };
}

function contentText(content: unknown): string | undefined {
  if (!isRecord(content) || typeof content["type"] !== "string") return undefined;
  if (content["type"] === "text") return typeof content["text"] === "string" ? content["text"] : undefined;
  const resource = content["resource"];
  if (content["type"] === "resource" && isRecord(resource) && typeof resource["text"] === "string")
    return resource["text"];
  // Images, audio, blobs and links are named, not inlined.
  return `[${content["type"]} content omitted]`;
}

/** Normalizes a `prompts/get` result into role + text messages. */
export function normalizePrompt(raw: unknown): PromptResult {
  const malformed: PromptResult = {
    ok: false,
    code: "protocol_error",
    message: "the server returned a malformed prompt",
  };
  if (!isRecord(raw) || !Array.isArray(raw["messages"])) return malformed;
  const messages: { role: "user" | "assistant"; text: string }[] = [];
  for (const message of raw["messages"]) {
    if (!isRecord(message)) return malformed;
    const role = message["role"];
    const text = contentText(message["content"]);
    if ((role !== "user" && role !== "assistant") || text === undefined) return malformed;
    messages.push({ role, text });
  }
  return { ok: true, messages };
}
