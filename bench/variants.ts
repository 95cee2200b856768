/**
 * The three agents the bench compares, each able to run one thread of N tool
 * steps on the shared checkpointer database:
 *
 *   warrant             the real graph (`buildAgent(host)`: plan → authorize →
 *                       execute → observe), ledger and audit written as always
 *   create_react_agent  LangGraph's prebuilt `createReactAgent` (+ `ToolNode`)
 *   create_agent        LangChain v1's `createAgent`
 *
 * All three reach the same scripted endpoint over HTTP
 * (bench/scripted-endpoint.ts: Warrant through its model planner as
 * `WARRANT_MODEL=<wire>:bench-scripted` builds it, the peers as their `llm`,
 * `ChatOpenAI` on the OpenAI wire, `ChatAnthropic` on the Anthropic wire), and use the same notes MCP server
 * program over stdio (one child each), a stock `PostgresSaver` on the same
 * pool (Warrant's is the one `openDatabase` builds) and `durability: "sync"`.
 */
import { HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { buildAgent } from "../graphs/agent.js";
import { findPrincipal, loadPrincipalDirectory } from "../src/auth/principal.js";
import { createRuntime, plannerFor } from "../src/bootstrap.js";
import type { Budgets, Settings } from "../src/env.js";
import { connectTools, type ToolHost } from "../src/mcp/tool-host.js";
import type { Database } from "../src/stores/open-database.js";
import { loadConfig, parseConfig, type WarrantConfig } from "../src/policy/config.js";
import { runConfigFor } from "../src/run-config.js";
import { runOptions } from "../src/graph/routes.js";
import { BENCH_MODEL, notesAdapter, peerModel, type Wire } from "./peers.js";
import { BENCH_PRICES } from "./prices.js";
import type { ScriptedEndpoint } from "./scripted-endpoint.js";
import { FINAL_ANSWER, USER_ID, benchRequest } from "./script.js";

export { BENCH_MODEL, WIRES, notesAdapter, peerModel, type Wire } from "./peers.js";

export const VARIANTS = ["warrant", "create_react_agent", "create_agent"] as const;
export type VariantName = (typeof VARIANTS)[number];

export interface Variant {
  name: VariantName;
  /** Runs one new thread of `steps` tool steps to its final answer; throws if it ended any other way. */
  run(steps: number, threadId: string, research?: boolean): Promise<void>;
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

/**
 * Warrant's planner as `WARRANT_MODEL=<wire>:bench-scripted` builds it
 * (`plannerFor`, with the bench's price table as the config's `models`), the
 * endpoint as `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL`.
 */
function benchPlanner(
  settings: Settings,
  endpoint: Pick<ScriptedEndpoint, "baseUrl" | "anthropicBaseUrl">,
  wire: Wire,
) {
  const name = `${wire}:${BENCH_MODEL}`;
  return plannerFor(
    {
      ...settings,
      planner: "model",
      model: {
        name,
        baseUrl: endpoint.baseUrl,
        apiKey: "not-needed",
        anthropicBaseUrl: endpoint.anthropicBaseUrl,
        anthropicApiKey: "bench-key",
      },
    },
    { [name]: BENCH_PRICES[wire] },
  );
}

export async function warrantVariant(
  settings: Settings,
  database: Database,
  endpoint: Pick<ScriptedEndpoint, "baseUrl" | "anthropicBaseUrl">,
  config?: WarrantConfig,
  wire: Wire = "openai",
): Promise<Variant> {
  const budgets = benchBudgets(settings.budgets);
  const tools: ToolHost = await connectTools(config ?? (await notesOnlyConfig(settings)), undefined, {
    pins: database.pins,
  });
  // The shipped planner, as `WARRANT_PLANNER=model` builds it, against the bench's endpoint.
  const planner = benchPlanner(settings, endpoint, wire);
  const runtime = createRuntime({ ...settings, budgets }, { database, tools, planner });
  const graph = buildAgent(runtime.host).compile({ checkpointer: database.saver });
  const alice = findPrincipal(await loadPrincipalDirectory(settings.principalsPath), USER_ID);
  return {
    name: "warrant",
    async run(steps, threadId, research = false) {
      const config = { ...runConfigFor({ threadId, principal: alice }), ...runOptions(budgets) };
      const values = (await graph.invoke({ messages: [new HumanMessage(benchRequest(steps, research))] }, config)) as {
        status?: string;
        ledger?: unknown[];
        result?: { answer?: string } | null;
      };
      if (values.status !== "completed" || values.result?.answer !== FINAL_ANSWER || values.ledger?.length !== steps)
        throw new Error(
          `warrant thread of ${steps} steps ended ${values.status} after ${values.ledger?.length} calls: ` +
            JSON.stringify(values.result).slice(0, 200),
        );
    },
    async close() {
      await runtime.close();
      await tools.close();
    },
  };
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
      `${name} thread of ${steps} steps ended with ${results.length} tool results, ` +
        `last message ${JSON.stringify(last?.content).slice(0, 200)}`,
    );
  }
}

/** Either prebuilt agent: both take `{ messages }` and the same run config. */
interface PeerAgent {
  invoke(input: { messages: BaseMessage[] }, config: Record<string, unknown>): Promise<{ messages: BaseMessage[] }>;
}

export async function peerVariant(
  name: Exclude<VariantName, "warrant">,
  settings: Settings,
  database: Database,
  endpoint: Pick<ScriptedEndpoint, "baseUrl" | "anthropicBaseUrl">,
  extraTools: StructuredToolInterface[] = [],
  wire: Wire = "openai",
): Promise<Variant> {
  const adapter = await notesAdapter(settings);
  const tools = [...(await adapter.getTools()), ...extraTools];
  // A stock saver on the same pool (its tables were set up by openDatabase).
  const checkpointer = new PostgresSaver(database.pool);
  const llm = peerModel(endpoint, wire);
  const agent: PeerAgent =
    name === "create_react_agent"
      ? (createReactAgent({ llm, tools, checkpointer }) as unknown as PeerAgent)
      : (createAgent({ model: llm, tools, checkpointer }) as unknown as PeerAgent);
  return {
    name,
    async run(steps, threadId, research = false) {
      const config = { configurable: { thread_id: threadId }, durability: "sync", recursionLimit: 4 * steps + 10 };
      const values = await agent.invoke({ messages: [new HumanMessage(benchRequest(steps, research))] }, config);
      checkPeerThread(name, steps, values.messages);
    },
    close: () => adapter.close(),
  };
}

/** Builds all three on the OpenAI wire, in `VARIANTS` order. */
export async function buildVariants(
  settings: Settings,
  database: Database,
  endpoint: Pick<ScriptedEndpoint, "baseUrl" | "anthropicBaseUrl">,
): Promise<Variant[]> {
  return [
    await warrantVariant(settings, database, endpoint),
    await peerVariant("create_react_agent", settings, database, endpoint),
    await peerVariant("create_agent", settings, database, endpoint),
  ];
}

/** Warrant and createReactAgent on the Anthropic wire (`ChatAnthropic` for the peer). */
export async function buildAnthropicVariants(
  settings: Settings,
  database: Database,
  endpoint: Pick<ScriptedEndpoint, "baseUrl" | "anthropicBaseUrl">,
  config?: WarrantConfig,
  extraTools: StructuredToolInterface[] = [],
): Promise<Variant[]> {
  return [
    await warrantVariant(settings, database, endpoint, config, "anthropic"),
    await peerVariant("create_react_agent", settings, database, endpoint, extraTools, "anthropic"),
  ];
}
