/**
 * Extracts evidence from a normalized structured result: any object with a
 * `source_id` and either an explicit `evidence_ref` or full text.
 * Snippets (search hits) are leads, not evidence.
 */
import type { Evidence } from "./evidence.js";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const EXCERPT_CHARS = 600;

function fromObject(item: Record<string, unknown>, tool: string, callId: string): Evidence | undefined {
  const sourceId = item["source_id"];
  const explicitRef = item["evidence_ref"];
  const text = item["text"] ?? item["excerpt"] ?? item["summary"];
  if (typeof sourceId !== "string" || (typeof explicitRef !== "string" && typeof text !== "string")) return undefined;
  const itemId =
    [item["note_id"], item["id"], item["document_id"], sourceId].find(
      (value): value is string => typeof value === "string",
    ) ?? sourceId;
  const version =
    typeof item["version"] === "string" || typeof item["version"] === "number" ? String(item["version"]) : "1";
  const evidence: Evidence = {
    ref: typeof explicitRef === "string" ? explicitRef : `${itemId}@${version}`,
    source_id: sourceId,
    item_id: itemId,
    excerpt: typeof text === "string" ? text.slice(0, EXCERPT_CHARS) : "",
    version,
    tool,
    call_id: callId,
  };
  if (typeof item["title"] === "string") evidence.title = item["title"];
  if (typeof item["page"] === "number" && Number.isInteger(item["page"])) evidence.page = item["page"];
  return evidence;
}

/** Walks a structured result (objects and arrays, a few levels deep) collecting evidence. */
export function extractEvidence(structured: unknown, tool: string, callId: string, depth = 0): Evidence[] {
  if (depth > 3) return [];
  if (Array.isArray(structured)) return structured.flatMap((item) => extractEvidence(item, tool, callId, depth + 1));
  if (!isRecord(structured)) return [];
  const own = fromObject(structured, tool, callId);
  const nested = Object.values(structured).flatMap((value) =>
    typeof value === "object" && value !== null ? extractEvidence(value, tool, callId, depth + 1) : [],
  );
  return own ? [own, ...nested] : nested;
}
