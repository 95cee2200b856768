/**
 * What a model is shown of a tool: its definition trimmed of text the model
 * need not read, because every offered definition is paid for in tokens on
 * every model call. Pure.
 *
 * Kept whole: the name, every validation keyword of the argument schema
 * (`type`, `enum`, `pattern`, `minimum`, `maxLength`, `required`,
 * `additionalProperties`, `default`, …), so every constraint the validator
 * enforces is still stated to the model. Trimmed:
 * - the tool's description to its first sentences (at most
 *   {@link MAX_TOOL_DESCRIPTION} characters; never less than one sentence,
 *   hard-cut only when that sentence alone is longer): what follows is
 *   usually operating detail the host handles (retries, idempotency keys);
 * - each argument's description to its first sentence, at most
 *   {@link MAX_ARGUMENT_DESCRIPTION} characters;
 * - annotations no model acts on: `$schema`, `$id`, `$comment`, `title`,
 *   `examples`.
 * Whitespace runs become one space. A definition already within these limits
 * is returned unchanged.
 */
import type { ToolSpec } from "./contracts.js";

export const MAX_TOOL_DESCRIPTION = 160;
export const MAX_ARGUMENT_DESCRIPTION = 120;

/** Schema keys that carry no constraint and no meaning a model uses. */
const ANNOTATIONS: ReadonlySet<string> = new Set(["$schema", "$id", "$comment", "title", "examples"]);

/** Keys whose value is a map from property names to schemas (never itself a schema, so a property named `title` survives). */
const SCHEMA_MAPS: ReadonlySet<string> = new Set([
  "properties",
  "patternProperties",
  "$defs",
  "definitions",
  "dependentSchemas",
]);

/** Sentences end at . ! ? followed by a space; "e.g. x" and "1.5" do not end one. */
function sentences(text: string): string[] {
  return text.split(/(?<=(?<!\be\.g|\bi\.e|\betc)[.!?])\s+(?=[A-Z(])/);
}

/** The leading whole sentences of `text` that fit in `limit` characters (at least the first, cut at a word if it alone is longer). */
export function trimDescription(text: string, limit: number, maxSentences = Infinity): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= limit && sentences(flat).length <= maxSentences) return flat;
  let kept = "";
  for (const sentence of sentences(flat).slice(0, maxSentences)) {
    const next = kept === "" ? sentence : `${kept} ${sentence}`;
    if (next.length > limit) break;
    kept = next;
  }
  if (kept !== "") return kept;
  const cut = flat.slice(0, limit - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > limit / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function trimSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(trimSchema);
  if (!isRecord(schema)) return schema;
  const trimmed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (ANNOTATIONS.has(key)) continue;
    if (key === "description" && typeof value === "string")
      trimmed[key] = trimDescription(value, MAX_ARGUMENT_DESCRIPTION, 1);
    else if (SCHEMA_MAPS.has(key) && isRecord(value))
      trimmed[key] = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, trimSchema(child)]));
    // Literal values (enum, const, default) are data, not schemas: kept as they are.
    else if (key === "enum" || key === "const" || key === "default") trimmed[key] = value;
    else trimmed[key] = trimSchema(value);
  }
  return trimmed;
}

/**
 * Trimmed definitions, by the served schema object they were made from. The
 * model planner shows the same offered tools at every turn and each spec is
 * built afresh from its catalog tool (`toToolSpec`), but its `parameters` is
 * the catalog's own schema object: keyed by it, each definition is trimmed
 * once per listing. Reused only while the served name and description are
 * the same strings.
 */
const trimmedBySchema = new WeakMap<object, { name: string; description: string; spec: ToolSpec }>();

function trimTool(tool: ToolSpec): ToolSpec {
  const parameters = trimSchema(tool.parameters);
  return {
    name: tool.name,
    description: trimDescription(tool.description, MAX_TOOL_DESCRIPTION),
    parameters: isRecord(parameters) ? parameters : tool.parameters,
  };
}

/**
 * The tool as the model sees it. A new object at each call; its
 * `parameters` may be shared with earlier calls for the same schema, so
 * callers treat it as read-only (the model planner only serializes it).
 */
export function modelFacingTool(tool: ToolSpec): ToolSpec {
  const key: unknown = tool.parameters;
  if (!isRecord(key)) return trimTool(tool);
  const cached = trimmedBySchema.get(key);
  if (cached && cached.name === tool.name && cached.description === tool.description) return { ...cached.spec };
  const spec = trimTool(tool);
  trimmedBySchema.set(key, { name: tool.name, description: tool.description, spec });
  return { ...spec };
}
