/**
 * The three agents the bench compares, each able to run one thread of N tool
 * steps on the shared checkpointer database:
 *
 *   warrant             the real graph (`buildAgent(host)`: plan → authorize →
 *                       execute → observe), ledger and audit written as always
 *   create_react_agent  LangGraph's prebuilt `createReactAgent` (+ `ToolNode`)
 *   create_agent        LangChain v1's `createAgent`
 *
 * All three use the same script (bench/script.ts), the same notes MCP server
 * program over stdio (one child each), a stock `PostgresSaver` on the same
 * pool (Warrant's is the one `openDatabase` builds) and `durability: "sync"`.
 */
import { HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { createAgent } from "langchain";
import { buildAgent } from "../graphs/agent.js";
import { findPrincipal, loadPrincipalDirectory } from "../src/auth/principal.js";
import { createRuntime } from "../src/bootstrap.js";
import { REPO_ROOT, type Budgets, type Settings } from "../src/env.js";
import { connectTools, type ToolHost } from "../src/mcp/tool-host.js";
import type { Database } from "../src/persistence/database.js";
import { loadConfig, parseConfig, type WarrantConfig } from "../src/policy/config.js";
import type { Planner } from "../src/planners/planner.js";
import { runConfigFor } from "../src/runtime/run-config.js";
import { runOptions } from "../src/runtime/routes.js";
import { calls, proposal } from "../test/support/scripted-planner.js";
import { FINAL_ANSWER, TOOL_NAME, USER_ID, benchRequest, nextMove } from "./script.js";
import { ScriptedChatModel } from "./scripted-chat-model.js";

export const VARIANTS = ["warrant", "create_react_agent", "create_agent"] as const;
export type VariantName = (typeof VARIANTS)[number];

export interface Variant {
  name: VariantName;
  /** Runs one new thread of `steps` tool steps to its final answer; throws if it ended any other way. */
  run(steps: number, threadId: string): Promise<void>;
  close(): Promise<void>;
}

/** Budgets no bench thread reaches: the bench measures steps, not stops. */
function benchBudgets(budgets: Budgets): Budgets {
  return {
    ...budgets,
    model_turns: 1_000,
    tool_calls: 1_000,
    max_repeats: 1_000,
    no_progress_steps: 1_000,
    deadline_ms: 600_000,
    tokens: 100_000_000,
  };
}

/** The shipped config cut down to the notes server and its contracts. */
async function notesOnlyConfig(settings: Settings): Promise<WarrantConfig> {
  const shipped = await loadConfig(settings.configPath);
  const tools = Object.fromEntries(Object.entries(shipped.tools).filter(([, contract]) => contract.server === "notes"));
  return parseConfig(
    JSON.stringify({ ...shipped, servers: { notes: shipped.servers["notes"] }, tools }),
    "bench notes config",
  );
}

/** Warrant's planner for the script: one proposal per turn (user_id is injected by the host, as in production). */
const scriptedPlanner: Planner = {
  kind: "scripted",
  async plan(input) {
    const move = nextMove(input.request, input.turn - 1);
    const outcome = move
      ? calls(proposal(TOOL_NAME, move))
      : { type: "final" as const, answer: FINAL_ANSWER, citations: [], abstained: false };
    return { outcome, usage: { input_tokens: 10, output_tokens: 5 } };
  },
};

export async function warrantVariant(settings: Settings, database: Database): Promise<Variant> {
  const budgets = benchBudgets(settings.budgets);
  const tools: ToolHost = await connectTools(await notesOnlyConfig(settings), undefined, { pins: database.pins });
  const runtime = createRuntime({ ...settings, budgets }, { database, tools, planner: scriptedPlanner });
  const graph = buildAgent(runtime.host).compile({ checkpointer: database.saver });
  const alice = findPrincipal(await loadPrincipalDirectory(settings.principalsPath), USER_ID);
  return {
    name: "warrant",
    async run(steps, threadId) {
      const config = { ...runConfigFor({ threadId, principal: alice }), ...runOptions(budgets) };
      const values = (await graph.invoke({ messages: [new HumanMessage(benchRequest(steps))] }, config)) as {
        status?: string;
      };
      if (values.status !== "completed") throw new Error(`warrant thread of ${steps} steps ended ${values.status}`);
    },
    async close() {
      await runtime.close();
      await tools.close();
    },
  };
}

/** The peers' MCP client: the same notes server program over stdio. */
async function notesAdapter(settings: Settings): Promise<MultiServerMCPClient> {
  const notes = (await loadConfig(settings.configPath)).servers["notes"];
  if (notes?.transport !== "stdio") throw new Error("the shipped notes server is not stdio");
  return new MultiServerMCPClient({
    mcpServers: {
      notes: { transport: "stdio", command: process.execPath, args: notes.args, cwd: REPO_ROOT, stderr: "ignore" },
    },
  });
}

/** Throws unless a peer's thread made `steps` tool calls and ended with the script's answer. */
function checkPeerThread(name: VariantName, steps: number, messages: BaseMessage[]): void {
  const results = messages.filter((message) => ToolMessage.isInstance(message));
  const last = messages.at(-1);
  if (
    results.length !== steps ||
    last?.content !== FINAL_ANSWER ||
    results.some((message) => message.status === "error")
  ) {
    throw new Error(
      `${name} thread of ${steps} steps ended with ${results.length} tool results, last message ${JSON.stringify(last?.content).slice(0, 200)}`,
    );
  }
}

/** Either prebuilt agent: both take `{ messages }` and the same run config. */
interface PeerAgent {
  invoke(input: { messages: BaseMessage[] }, config: Record<string, unknown>): Promise<{ messages: BaseMessage[] }>;
}

async function peerVariant(
  name: Exclude<VariantName, "warrant">,
  settings: Settings,
  database: Database,
): Promise<Variant> {
  const adapter = await notesAdapter(settings);
  const tools = await adapter.getTools();
  // A stock saver on the same pool (its tables were set up by openDatabase).
  const checkpointer = new PostgresSaver(database.pool);
  const agent: PeerAgent =
    name === "create_react_agent"
      ? (createReactAgent({ llm: new ScriptedChatModel(), tools, checkpointer }) as unknown as PeerAgent)
      : (createAgent({ model: new ScriptedChatModel(), tools, checkpointer }) as unknown as PeerAgent);
  return {
    name,
    async run(steps, threadId) {
      const config = { configurable: { thread_id: threadId }, durability: "sync", recursionLimit: 4 * steps + 10 };
      const values = await agent.invoke({ messages: [new HumanMessage(benchRequest(steps))] }, config);
      checkPeerThread(name, steps, values.messages);
    },
    close: () => adapter.close(),
  };
}

/** Builds all three, in `VARIANTS` order. */
export async function buildVariants(settings: Settings, database: Database): Promise<Variant[]> {
  return [
    await warrantVariant(settings, database),
    await peerVariant("create_react_agent", settings, database),
    await peerVariant("create_agent", settings, database),
  ];
}
