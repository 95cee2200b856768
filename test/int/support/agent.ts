/**
 * Builds the real agent graph for integration tests: real notes MCP server,
 * real Postgres (server or embedded), a planner of the test's choosing.
 */
import { randomUUID } from "node:crypto";
import { HumanMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { buildAgent } from "../../../graphs/agent.js";
import { findPrincipal, loadPrincipalDirectory, type Principal } from "../../../src/auth/principal.js";
import { createRuntime } from "../../../src/bootstrap.js";
import { loadSettings, type Budgets } from "../../../src/env.js";
import type { Host } from "../../../src/host.js";
import { connectTools, type ToolHost } from "../../../src/mcp/tool-host.js";
import { loadConfig } from "../../../src/policy/config.js";
import type { Database } from "../../../src/stores/open-database.js";
import type { Planner } from "../../../src/planners/planner.js";
import { runConfigFor } from "../../../src/run-config.js";
import { runOptions } from "../../../src/graph/routes.js";
import type { State } from "../../../src/state.js";
import type { Sandbox } from "../../support/sandbox.js";

export const settings = loadSettings({});

/** Every MCP server of the shipped warrant.config.json, connected; closed at `sandbox`'s teardown. */
export async function connectShippedTools(sandbox: Sandbox): Promise<ToolHost> {
  return sandbox.add(await connectTools(await loadConfig(settings.configPath)));
}

export async function principal(userId: string): Promise<Principal> {
  return findPrincipal(await loadPrincipalDirectory(settings.principalsPath), userId);
}

export interface AgentHarness {
  budgets: Budgets;
  run(userId: string, request: string, threadId?: string): Promise<{ threadId: string; state: State }>;
  resume(userId: string, threadId: string, value: unknown): Promise<State>;
  state(threadId: string): Promise<State>;
  interrupts(threadId: string): Promise<unknown[]>;
}

/** Which graph a harness runs: the agent (default) or the fixed workflow, both built around the harness's host. */
export type GraphBuilder = (host: Host) => { compile(options: { checkpointer: Database["saver"] }): unknown };

type AgentGraph = ReturnType<ReturnType<typeof buildAgent>["compile"]>;

export function agentHarness(options: {
  database: Database;
  tools: ToolHost;
  planner: Planner;
  budgets?: Partial<Budgets>;
  now?: () => number;
  runBound?: Record<string, string>;
  build?: GraphBuilder;
}): AgentHarness {
  const budgets = { ...settings.budgets, ...options.budgets };
  const runtime = createRuntime(
    { ...settings, budgets },
    {
      database: options.database,
      tools: options.tools,
      planner: options.planner,
      ...(options.now ? { now: options.now } : {}),
    },
  );
  // Both graphs share the state schema, so the harness reads either the same way.
  const graph = (options.build ?? buildAgent)(runtime.host).compile({
    checkpointer: options.database.saver,
  }) as AgentGraph;
  const configFor = async (userId: string, threadId: string) => ({
    ...runConfigFor({ threadId, principal: await principal(userId), runBound: options.runBound ?? {} }),
    ...runOptions(budgets),
  });
  const state = async (threadId: string) =>
    (await graph.getState({ configurable: { thread_id: threadId } })).values as State;
  return {
    budgets,
    async run(userId, request, threadId = randomUUID()) {
      await graph.invoke({ messages: [new HumanMessage(request)] }, await configFor(userId, threadId));
      return { threadId, state: await state(threadId) };
    },
    async resume(userId, threadId, value) {
      await graph.invoke(new Command({ resume: value }), await configFor(userId, threadId));
      return state(threadId);
    },
    state,
    async interrupts(threadId) {
      const snapshot = await graph.getState({ configurable: { thread_id: threadId } });
      return snapshot.tasks.flatMap((task) => task.interrupts.map((item) => item.value));
    },
  };
}
