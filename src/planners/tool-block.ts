/**
 * The `tools` block of a model request and this step's restriction of it.
 *
 * The block is the run's candidate set, serialized deterministically (tools
 * sorted by name, schema keys sorted at every depth), so it is the same bytes
 * at every step of a run and a provider's prompt cache keeps serving it. What
 * may be called *this* step is a mask over it: `tool_choice` `allowed_tools`
 * where the endpoint takes it, else a short note appended after the
 * transcript. Either way `authorize` refuses a call outside the step's offer
 * with its `withheld` reason; the mask only tells the model earlier. Pure.
 */
import { modelFacingTool } from "../policy/model-facing.js";
import { toOpenAITool, type OpenAIFunctionTool } from "./model-request.js";
import type { ToolSpec } from "../policy/contracts.js";

/** OpenAI's Chat Completions `tool_choice` that restricts calls without changing `tools`. */
export interface AllowedToolsChoice {
  type: "allowed_tools";
  allowed_tools: { mode: "auto"; tools: { type: "function"; function: { name: string } }[] };
}

/** What one step sends about tools. */
export interface ToolBlock {
  /** The run's tools block (empty: bind nothing). */
  tools: OpenAIFunctionTool[];
  /** Set only when this step allows fewer tools than the block holds. */
  toolChoice?: AllowedToolsChoice | "none";
  /** Set only when the restriction must reach the model as text. */
  note?: string;
}

/** A JSON value with object keys sorted at every depth (arrays keep their order). */
export function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== "object" || value === null) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = sortedKeys((value as Record<string, unknown>)[key]);
  return sorted;
}

function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * Wire definitions by the served schema object they were made from (each
 * step builds its specs afresh, but `parameters` is the catalog's own
 * object), so a run sorts each definition once. Reused only while the name
 * and description are the same strings. Callers only serialize the result.
 */
const wireBySchema = new WeakMap<object, { name: string; description: string; wire: OpenAIFunctionTool }>();

function wireTool(tool: ToolSpec): OpenAIFunctionTool {
  const key: unknown = tool.parameters;
  const cached = typeof key === "object" && key !== null ? wireBySchema.get(key) : undefined;
  if (cached && cached.name === tool.name && cached.description === tool.description) return cached.wire;
  const facing = modelFacingTool(tool);
  const wire = toOpenAITool({ ...facing, parameters: sortedKeys(facing.parameters) as Record<string, unknown> });
  if (typeof key === "object" && key !== null)
    wireBySchema.set(key, { name: tool.name, description: tool.description, wire });
  return wire;
}

/**
 * The block for the run's `candidates` with this step's `allowed` tools.
 * `allowedToolsChoice` says whether the endpoint takes `allowed_tools`.
 */
export function toolBlock(
  candidates: readonly ToolSpec[],
  allowed: readonly ToolSpec[],
  allowedToolsChoice: boolean,
): ToolBlock {
  // Allowed tools missing from the candidate set (a planner input built by hand) join the block.
  const names = new Set(candidates.map((tool) => tool.name));
  const all = [...candidates, ...allowed.filter((tool) => !names.has(tool.name))];
  const tools = [...all].sort(byName).map(wireTool);
  if (tools.length === 0) return { tools };
  const allowedNames = [...new Set(allowed.map((tool) => tool.name))].sort();
  if (allowedNames.length === tools.length) return { tools };
  if (allowedToolsChoice)
    return {
      tools,
      toolChoice:
        allowedNames.length === 0
          ? "none"
          : {
              type: "allowed_tools",
              allowed_tools: {
                mode: "auto",
                tools: allowedNames.map((name) => ({ type: "function", function: { name } })),
              },
            },
    };
  return {
    tools,
    note:
      allowedNames.length === 0
        ? "No tool may be called at this step: reply with your JSON answer or needs_human."
        : `Tools you may call at this step: ${JSON.stringify(allowedNames)}. A call to any other is refused.`,
  };
}
