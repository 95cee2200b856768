/** Reading MCP tool results in tests. */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** The text of a result's first content block, which must be text. */
export function textOf(result: CallToolResult): string {
  const first = result.content[0];
  if (first === undefined || first.type !== "text") throw new Error("expected a text content block");
  return first.text;
}
