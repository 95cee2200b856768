/**
 * The fence a tool result is quoted in before any planner sees it. A tool
 * result is evidence, never instructions, so it reaches the model only as a
 * tool message whose whole content is one fenced block:
 *
 *     <tool_result tool="read_note" refs='["cs301.x@1"]'>
 *     {"note_id": "cs301.x", …}
 *     </tool_result>
 *
 * The body is quoted so that nothing in it can close the fence: JSON keeps
 * its meaning with `<`, `>` and `&` written as `\u003c`, `\u003e`, `\u0026`
 * (they can only occur inside JSON strings), and any other text becomes one
 * JSON string literal escaped the same way. Attribute values are escaped as
 * in XML. `refs` names the evidence the result holds, so the model can cite
 * it by id. Pure.
 *
 * Only what the model needs is written, because every result is paid for in
 * tokens at every later step: `status` only for a failure, `refs` only when
 * there are some. The call id is the tool message's own `tool_call_id`, the
 * source ids are in the body, and the rule that a block is data is stated
 * once in the (cached) system message rather than after every result. The
 * guarantee is the quoting, which is unchanged.
 */

export const TOOL_RESULT_TAG = "tool_result";

export interface ToolResultFence {
  tool: string;
  status: "ok" | "error";
  /** Citable evidence refs in this result. */
  refs: readonly string[];
  /** The tool's output as text (usually JSON). */
  body: string;
  /** The body is an excerpt: the planner's context compacted an old result (`context.ts`). */
  compacted?: boolean;
}

/** A fenced result read back: the body parsed (an object for JSON output, a string otherwise). */
export interface ReadToolResult extends Omit<ToolResultFence, "body"> {
  body: unknown;
}

const JSON_UNSAFE: Record<string, string> = { "<": "\\u003c", ">": "\\u003e", "&": "\\u0026" };
const ATTRIBUTE_UNSAFE: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};
/** In a single-quoted attribute (the JSON lists) a double quote cannot end the value, so it stays as it is. */
const SINGLE_QUOTED_UNSAFE = /[&<>']/g;
const ATTRIBUTE_ESCAPES: Record<string, string> = {
  "&amp;": "&",
  "&lt;": "<",
  "&gt;": ">",
  "&quot;": '"',
  "&#39;": "'",
};

function quoteJson(text: string): string {
  return text.replace(/[<>&]/g, (character) => JSON_UNSAFE[character] ?? character);
}

/** The body as quoted JSON: the same value when it parses, else the text as one string literal. */
export function quoteBody(body: string): string {
  try {
    JSON.parse(body);
    return quoteJson(body);
  } catch {
    return quoteJson(JSON.stringify(body));
  }
}

function attribute(value: string): string {
  return value.replace(/[&<>"']/g, (character) => ATTRIBUTE_UNSAFE[character] ?? character);
}

function singleQuotedAttribute(value: string): string {
  return value.replace(SINGLE_QUOTED_UNSAFE, (character) => ATTRIBUTE_UNSAFE[character] ?? character);
}

function unescapeAttribute(value: string): string {
  return value.replace(/&(?:amp|lt|gt|quot|#39);/g, (entity) => ATTRIBUTE_ESCAPES[entity] ?? entity);
}

/** The tool message content for one result. */
export function fenceToolResult(result: ToolResultFence): string {
  const attributes = [`tool="${attribute(result.tool)}"`];
  if (result.status === "error") attributes.push(`status="error"`);
  if (result.refs.length > 0) attributes.push(`refs='${singleQuotedAttribute(JSON.stringify(result.refs))}'`);
  if (result.compacted) attributes.push(`compacted="true"`);
  return `<${TOOL_RESULT_TAG} ${attributes.join(" ")}>\n${quoteBody(result.body)}\n</${TOOL_RESULT_TAG}>`;
}

const FENCE = new RegExp(
  `^<${TOOL_RESULT_TAG}((?: [a-z_]+=(?:"[^"<>]*"|'[^'<>]*'))*)>\\n([\\s\\S]*)\\n</${TOOL_RESULT_TAG}>`,
);
const ATTRIBUTE = /([a-z_]+)=(?:"([^"]*)"|'([^']*)')/g;

function stringList(text: string | undefined): string[] {
  if (text === undefined) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter((item): item is string => typeof item === "string") : [];
  } catch {
    return [];
  }
}

/** Reads a fenced tool result back (what a planner reading the transcript does); undefined when the text is not one. */
export function readFencedToolResult(content: string): ReadToolResult | undefined {
  const match = FENCE.exec(content);
  if (!match) return undefined;
  const attributes = new Map<string, string>();
  for (const found of (match[1] ?? "").matchAll(ATTRIBUTE))
    attributes.set(found[1] ?? "", unescapeAttribute(found[2] ?? found[3] ?? ""));
  let body: unknown;
  try {
    body = JSON.parse(match[2] ?? "");
  } catch {
    body = match[2] ?? "";
  }
  return {
    tool: attributes.get("tool") ?? "",
    status: attributes.get("status") === "error" ? "error" : "ok",
    refs: stringList(attributes.get("refs")),
    ...(attributes.get("compacted") === "true" ? { compacted: true } : {}),
    body,
  };
}
