/**
 * What the prebuilt peers are built from, apart from Warrant: their chat
 * model against the scripted endpoint and their MCP client for the notes
 * server. The served reference (bench/reference-server.ts) imports this and
 * nothing of Warrant's graph: importing `graphs/agent.ts` builds Warrant's
 * graph, which replaces core's `runWithConfig` in the process
 * (`useLeanRunContext`), and the reference must run on stock LangChain, as
 * its users run it. bench/variants.ts re-exports these for the in-process
 * variants.
 */
import { ChatAnthropic } from "@langchain/anthropic";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { ChatOpenAI } from "@langchain/openai";
import { REPO_ROOT, type Settings } from "../src/env.js";
import { loadConfig } from "../src/policy/config.js";
import type { ScriptedEndpoint } from "./scripted-endpoint.js";

/** The model name every variant sends (the scripted endpoint ignores it). */
export const BENCH_MODEL = "bench-scripted";

/**
 * The provider wire a variant's model speaks to the scripted endpoint: OpenAI
 * Chat Completions or Anthropic Messages (both non-streaming, over HTTP).
 */
export type Wire = "openai" | "anthropic";
export const WIRES: readonly Wire[] = ["openai", "anthropic"];

/**
 * The peers' model, bound the way their users bind it, no cache settings:
 * `ChatOpenAI` (non-streaming: streaming fetches tiktoken ranks and hangs
 * offline) or `ChatAnthropic`, against the scripted endpoint.
 */
export function peerModel(
  endpoint: Pick<ScriptedEndpoint, "baseUrl" | "anthropicBaseUrl">,
  wire: Wire = "openai",
  /** For a server that streams the graph with callbacks (which makes a chat model stream): the endpoint answers whole replies. */
  disableStreaming = false,
) {
  if (wire === "anthropic")
    return new ChatAnthropic({
      model: BENCH_MODEL,
      apiKey: "bench-key",
      anthropicApiUrl: endpoint.anthropicBaseUrl,
      temperature: 0,
      maxRetries: 0,
      disableStreaming,
    });
  return new ChatOpenAI({
    model: BENCH_MODEL,
    apiKey: "not-needed",
    configuration: { baseURL: endpoint.baseUrl },
    temperature: 0,
    maxRetries: 0,
    disableStreaming,
  });
}

/** The peers' MCP client: the same notes server program over stdio. */
export async function notesAdapter(settings: Settings): Promise<MultiServerMCPClient> {
  const notes = (await loadConfig(settings.configPath)).servers["notes"];
  if (notes?.transport !== "stdio") throw new Error("the shipped notes server is not stdio");
  return new MultiServerMCPClient({
    mcpServers: {
      notes: { transport: "stdio", command: process.execPath, args: notes.args, cwd: REPO_ROOT, stderr: "ignore" },
    },
  });
}
