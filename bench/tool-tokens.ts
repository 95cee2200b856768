/**
 * Tool-definition tokens per model call, with every shipped server
 * (warrant.config.json) and the third-party examples
 * (examples/third-party.config.json) loaded:
 *
 *   warrant   the tools the real plan node offers alice for the notes
 *             question, as the model planner renders them (model-facing.ts)
 *   all bound every tool every server lists, with the server's own
 *             description and input schema: what a prebuilt agent binds when
 *             it is handed all of a client's MCP tools
 *
 * Both rendered as the same OpenAI function tools and counted with
 * js-tiktoken's bundled o200k_base ranks (no network).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { buildAgent } from "../graphs/agent.js";
import { findPrincipal, loadPrincipalDirectory } from "../src/auth/principal.js";
import { mintTaskToken } from "../src/auth/task-token.js";
import { createRuntime } from "../src/bootstrap.js";
import { REPO_ROOT, type Settings } from "../src/env.js";
import { isConfigError } from "../src/errors.js";
import type { ListedTool } from "../src/mcp/catalog.js";
import type { ConnectionEvents, ServerConnection } from "../src/mcp/connection.js";
import { withHostValues } from "../src/mcp/host-values.js";
import { httpConnection } from "../src/mcp/http-session.js";
import { stdioConnection } from "../src/mcp/stdio-session.js";
import { connectTools } from "../src/mcp/tool-host.js";
import type { Database } from "../src/stores/open-database.js";
import { ephemeralTokenSettings, type TokenSettings } from "../src/mcp/connection-factory.js";
import { parseConfig, type ServerConfig, type WarrantConfig } from "../src/policy/config.js";
import { modelFacingTool } from "../src/policy/model-facing.js";
import type { Planner } from "../src/planners/planner.js";
import type { ToolSpec } from "../src/policy/contracts.js";
import { runConfigFor } from "../src/run-config.js";
import { runOptions } from "../src/graph/routes.js";
import { FINAL_ANSWER, QUESTION, USER_ID } from "./script.js";

const encoder = new Tiktoken(o200kBase);

/** The JSON a Chat Completions request carries for one tool. */
export function openAITool(tool: ToolSpec): {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
} {
  return {
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

/** o200k tokens of the tools' definitions as sent (each tool's JSON, summed). */
export function definitionTokens(tools: readonly ToolSpec[]): number {
  return tools.reduce((total, tool) => total + encoder.encode(JSON.stringify(openAITool(tool))).length, 0);
}

/** Shipped servers and contracts plus the third-party examples, as one config. */
export async function everyServerConfig(): Promise<WarrantConfig> {
  const read = async (file: string) => JSON.parse(await readFile(path.join(REPO_ROOT, file), "utf8")) as WarrantConfig;
  const shipped = await read("warrant.config.json");
  const thirdParty = await read("examples/third-party.config.json");
  const merged = {
    ...shipped,
    servers: { ...shipped.servers, ...thirdParty.servers },
    tools: { ...shipped.tools, ...thirdParty.tools },
  };
  return parseConfig(JSON.stringify(merged), "bench: every server");
}

const QUIET: ConnectionEvents = { down: () => undefined, suspect: () => undefined, toolsChanged: () => undefined };

/** One server's connection, opened only to list its tools (HTTP servers get a host task token). */
function listingConnection(server: ServerConfig, tokens: TokenSettings): ServerConnection {
  if (server.transport === "stdio") return stdioConnection(server, QUIET);
  const mint: Parameters<typeof httpConnection>[0]["mint"] = (request) =>
    mintTaskToken(
      tokens.secret,
      { ...request, audience: server.audience, scopes: [...request.scopes] },
      { ttlSeconds: tokens.ttlSeconds },
    );
  return httpConnection({
    server,
    mint,
    launchEnvironment: { WARRANT_TASK_TOKEN_SECRET: Buffer.from(tokens.secret).toString("hex") },
    events: QUIET,
  });
}

/** Every tool every configured server lists, as its server defines it. */
export async function everyListedTool(config: WarrantConfig): Promise<ToolSpec[]> {
  const tokens = ephemeralTokenSettings();
  const listed: ListedTool[] = [];
  // As the host starts them: `${DATABASE_URL}` left unset, so the calendar keeps its file store.
  for (const server of Object.values(withHostValues(config, {}).servers)) {
    const connection = listingConnection(server, tokens);
    try {
      listed.push(...(await connection.open()).tools);
    } finally {
      await connection.shutdown();
    }
  }
  return listed.map((tool) => ({ name: tool.name, description: tool.description ?? "", parameters: tool.inputSchema }));
}

/** The tools the real plan node offers for the notes question (one run: the planner records its input and answers). */
async function offeredForQuestion(settings: Settings, database: Database, config: WarrantConfig): Promise<ToolSpec[]> {
  const tools = await connectTools(config);
  let offered: ToolSpec[] | undefined;
  const recorder: Planner = {
    kind: "scripted",
    async plan(input) {
      offered = input.tools;
      return {
        outcome: { type: "final", answer: FINAL_ANSWER, citations: [], abstained: false },
        usage: { input_tokens: 10, output_tokens: 5 },
      };
    },
  };
  const runtime = createRuntime(settings, { database, tools, planner: recorder });
  try {
    const graph = buildAgent(runtime.host).compile({ checkpointer: database.saver });
    const alice = findPrincipal(await loadPrincipalDirectory(settings.principalsPath), USER_ID);
    await graph.invoke(
      { messages: [new HumanMessage(QUESTION)] },
      { ...runConfigFor({ threadId: `bench-offer-${Date.now()}`, principal: alice }), ...runOptions(settings.budgets) },
    );
  } finally {
    await runtime.close();
    await tools.close();
  }
  if (!offered) throw new Error("the plan node never asked the planner");
  return offered;
}

export interface ToolTokens {
  warrant: number;
  all_bound: number;
  warrant_tools: string[];
  all_bound_tool_count: number;
}

/** Once more after a failed start: on a loaded machine a server launched through tsx can miss its start-up timeout. */
export async function retryingStart<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!isConfigError(error) || error.code !== "mcp_start_failed") throw error;
    process.stderr.write(`[bench] ${error.message}; trying once more\n`);
    return work();
  }
}

export async function measureToolTokens(settings: Settings, database: Database): Promise<ToolTokens> {
  const config = await everyServerConfig();
  const offered = (await retryingStart(() => offeredForQuestion(settings, database, config))).map(modelFacingTool);
  const all = await everyListedTool(config);
  return {
    warrant: definitionTokens(offered),
    all_bound: definitionTokens(all),
    warrant_tools: offered.map((tool) => tool.name),
    all_bound_tool_count: all.length,
  };
}
