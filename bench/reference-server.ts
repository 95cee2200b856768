/**
 * The bench's served reference (`npm run bench -- --only throughput`):
 * LangGraph's prebuilt `createReactAgent` served the way a LangGraph.js user
 * serves a graph from their own process, with LangGraph's own embeddable API
 * server (`createEmbedServer` of `@langchain/langgraph-api`, a subset of the
 * LangGraph Platform routes: threads, runs, streams) on `@hono/node-server`.
 * One process, like `WARRANT_WORKERS=1`; the same scripted model endpoint
 * over HTTP (BENCH_ENDPOINT), the same notes MCP server program over stdio,
 * and the stock `PostgresSaver` on the same database (DATABASE_URL). Threads
 * are kept in memory, as the embed server's examples keep them: that is less
 * work than Warrant's threads table, so the reference is not handicapped.
 *
 * Run by bench/workers.ts as a child process (`node --import tsx
 * bench/reference-server.ts`); prints `reference listening on <url>`.
 */
import { serve } from "@hono/node-server";
import { createEmbedServer, type ThreadSaver } from "@langchain/langgraph-api/experimental/embed";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import pg from "pg";
import { loadSettings } from "../src/env.js";
import { notesAdapter, peerModel } from "./peers.js";

type Metadata = Record<string, unknown>;

/** Threads in a Map: what a thread route reads and writes. */
function memoryThreads(): ThreadSaver {
  const threads = new Map<string, { thread_id: string; metadata: Metadata }>();
  return {
    get: async (id) => {
      const thread = threads.get(id);
      if (thread === undefined) throw new Error(`thread ${id} not found`);
      return thread;
    },
    set: async (id, { kind, metadata }) => {
      const before = kind === "patch" ? (threads.get(id)?.metadata ?? {}) : {};
      const thread = { thread_id: id, metadata: { ...before, ...metadata } };
      threads.set(id, thread);
      return thread;
    },
    delete: async (id) => {
      threads.delete(id);
    },
  };
}

// Stock LangChain, as its users run it: nothing here may bring in Warrant's graph, whose module replaces core's
// runWithConfig for the whole process (useLeanRunContext; bench/peers.ts). The method is core's class method unless
// something assigned its own.
if (Object.hasOwn(AsyncLocalStorageProviderSingleton, "runWithConfig"))
  throw new Error("the reference server must run on stock @langchain/core: something replaced runWithConfig");

const settings = loadSettings(process.env);
const endpoint = process.env["BENCH_ENDPOINT"];
if (settings.databaseUrl === undefined || endpoint === undefined)
  throw new Error("the reference server needs DATABASE_URL and BENCH_ENDPOINT");
// The same pool size Warrant's server opens.
const pool = new pg.Pool({ connectionString: settings.databaseUrl, max: settings.pool.max });
const checkpointer = new PostgresSaver(pool);
await checkpointer.setup();
const adapter = await notesAdapter(settings);
// The server streams the graph with callbacks, which makes a chat model stream its tokens; the bench's endpoint
// (like Warrant's planner) answers whole replies, so the model is told not to stream, as a user would tell it.
const llm = peerModel({ baseUrl: endpoint, anthropicBaseUrl: endpoint }, "openai", true);
const agent = createReactAgent({ llm, tools: await adapter.getTools() });
const app = createEmbedServer({ graph: { agent }, threads: memoryThreads(), checkpointer });
const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, (info) => {
  console.log(`reference listening on http://127.0.0.1:${info.port}`);
});
process.once("SIGTERM", () => {
  server.close();
  void Promise.allSettled([adapter.close(), pool.end()]).then(() => process.exit(0));
});
