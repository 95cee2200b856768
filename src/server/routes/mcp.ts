/**
 * `/mcp`: every served assistant as an MCP tool over Streamable HTTP (the
 * MCP SDK's `McpServer` and its web-standard transport, stateless: each
 * request gets its own server, so any instance answers any request).
 *
 *   tools/list                      → `agent`, `workflow` (one per assistant) and `get_run`
 *   tools/call agent {message, thread_id?}
 *                                   → the run's view (runs/external.ts) as structured content:
 *                                     the answer and citations, or `input_required` with the
 *                                     thread id and the review's link (the call never blocks on a review)
 *   tools/call get_run {thread_id, run_id} → the same view, now
 *
 * The caller is the authenticated request's principal (the auth gate in
 * app.ts runs first); no argument names a user, and no tool resumes a run.
 * Refusals are tool errors carrying the API's typed code as JSON text
 * (`{"error": "not_found", …}`). MCP tasks are not offered: a paused run is
 * reported by `get_run` (the SDK's tasks API is still experimental).
 */
import type { Context, Hono } from "hono";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Principal } from "../../auth/principal.js";
import { logLine } from "../../secrets/process-scanner.js";
import { errorBody } from "../api-error.js";
import type { Env, RouteContext } from "../context.js";
import { ownerOf } from "../runs/types.js";
import { DEFAULT_WAIT_MS, describeRun, RunViewSchema, startExternalRun, waitBriefly } from "../runs/external.js";
import { MAX_REQUEST_CHARS } from "../runs/requests.js";
import { isDatabaseBusy, isDatabaseUnavailable, isApiError } from "../../errors.js";

const SERVER_NAME = "warrant";
const SERVER_VERSION = "0.1.0";

const ASSISTANT_DESCRIPTIONS: Record<string, string> = {
  agent: [
    "Warrant's controlled agent: answers from the caller's notes with citations,",
    "and plans study sessions into the caller's calendar.",
    "Writes wait for a human review in Warrant's inbox:",
    "the result then says input_required with the thread id and the review's link;",
    "follow it with get_run.",
  ].join(" "),
  workflow: [
    "Warrant's fixed workflow (notes answer or study plan, no model choices).",
    "Writes wait for a human review in Warrant's inbox, as with the agent.",
  ].join(" "),
};

const AskInput = {
  message: z.string().min(1).max(MAX_REQUEST_CHARS).describe("What to ask, in words."),
  thread_id: z.string().uuid().optional().describe("Continue this thread of yours (from an earlier answer)."),
};
const GetRunInput = {
  thread_id: z.string().uuid(),
  run_id: z.string().uuid(),
};

export interface McpEndpointOptions {
  /** How long a call waits for its run before answering `working` (tests shorten it). */
  waitMs?: number | undefined;
}

export function registerMcpRoutes(app: Hono<Env>, context: RouteContext, options: McpEndpointOptions = {}): void {
  app.post("/mcp", async (c) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(await c.req.text()) as unknown;
    } catch {
      return rpcError(c, -32700, "Parse error: the body is not JSON");
    }
    // An empty batch is an invalid request (JSON-RPC 2.0), not a batch of nothing to answer 202.
    if (Array.isArray(parsed) && parsed.length === 0) return rpcError(c, -32600, "Invalid Request: an empty batch");
    const server = mcpServerFor(context, context.principalOf(c), originOf(c), options.waitMs ?? DEFAULT_WAIT_MS);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw, { parsedBody: parsed });
    } finally {
      await server.close();
    }
  });
  // Stateless: no server-initiated stream to open and no session to end.
  const notAllowed = (c: Context<Env>) => {
    c.header("Allow", "POST");
    return c.json({ jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed." }, id: null }, 405);
  };
  app.get("/mcp", notAllowed);
  app.delete("/mcp", notAllowed);
}

function rpcError(c: Context<Env>, code: number, message: string): Response {
  return c.json({ jsonrpc: "2.0", error: { code, message }, id: null }, 400);
}

/** The server one request talks to, acting for `principal`. */
function mcpServerFor(context: RouteContext, principal: Principal, origin: string, waitMs: number): McpServer {
  const server = new McpServer({ name: SERVER_NAME, version: SERVER_VERSION });
  for (const assistantId of [...context.graphs.keys()].sort()) {
    server.registerTool(
      assistantId,
      {
        title: `Warrant ${assistantId}`,
        description: ASSISTANT_DESCRIPTIONS[assistantId] ?? `The Warrant assistant ${assistantId}.`,
        inputSchema: AskInput,
        outputSchema: RunViewSchema.shape,
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      },
      (args) =>
        answered(async () => {
          const run = await startExternalRun(context, principal, {
            assistantId,
            text: args.message,
            threadId: args.thread_id,
          });
          await waitBriefly(context, ownerOf(principal), run, waitMs);
          return describeRun(context, principal, run.thread_id, run.run_id, origin);
        }),
    );
  }
  server.registerTool(
    "get_run",
    {
      title: "Where a Warrant run stands",
      description: [
        "The state of a run started by one of the assistant tools: working,",
        "input_required (a review waits in Warrant's inbox), auth_required,",
        "completed (with the answer and citations), failed or canceled.",
      ].join(" "),
      inputSchema: GetRunInput,
      outputSchema: RunViewSchema.shape,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args) => answered(() => describeRun(context, principal, args.thread_id, args.run_id, origin)),
  );
  return server;
}

/** A view as a tool result; a refusal as a tool error with its typed code. */
async function answered(view: () => Promise<Record<string, unknown>>): Promise<CallToolResult> {
  try {
    const payload = await view();
    return { content: [{ type: "text", text: JSON.stringify(payload) }], structuredContent: payload };
  } catch (error) {
    const typed = isApiError(error)
      ? errorBody(error.code, error.message)
      : isDatabaseBusy(error) || isDatabaseUnavailable(error)
        ? errorBody(error.code, error.message)
        : errorBody("internal_error", "the server failed to handle the call");
    if (typed.error === "internal_error") console.error(logLine(`warrant-server: /mcp tool failed: ${String(error)}`));
    return { content: [{ type: "text", text: JSON.stringify(typed) }], isError: true };
  }
}

export function originOf(c: Context<Env>): string {
  return new URL(c.req.url).origin;
}
