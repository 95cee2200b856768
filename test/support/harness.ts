/**
 * The one graph harness: the real agent graph compiled on a host (the
 * in-memory host of memory-host.ts, or a runtime's host on a real database),
 * one fresh thread, and the few things tests do with it: start a run, resume
 * it (as any principal), read the state, the pending interrupts, the typed
 * code of a tool message. Every invocation uses the configuration the entry
 * points use (runConfigFor and runOptions of the host's budgets).
 *
 *   const h = graphHarness(memoryHost({ planner: scriptedPlanner(steps), tools }), { principal: alice });
 *   await h.start("schedule a study session");
 *   expect(await h.toolCode(write.call_id)).toBe("ok");
 */
import { randomUUID } from "node:crypto";
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { Command, MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { expect } from "vitest";
import { buildAgent } from "../../graphs/agent.js";
import type { Principal } from "../../src/auth/principal.js";
import { runOptions } from "../../src/graph/routes.js";
import type { Host } from "../../src/host.js";
import type { InterruptPayload } from "../../src/policy/resume.js";
import { runConfigFor } from "../../src/run-config.js";
import type { State } from "../../src/state.js";

export interface HarnessOptions {
  /** Who starts the run and, unless a call says otherwise, resumes it. */
  principal: Principal;
  /** Where checkpoints go (default: a fresh MemorySaver). */
  checkpointer?: BaseCheckpointSaver;
  /** The thread's id (default: a fresh one). */
  threadId?: string;
  /** Give every invocation a fresh run id, as the server does (default: none). */
  runIds?: boolean;
}

let threads = 0;

export function graphHarness<H extends Host>(host: H, options: HarnessOptions) {
  const graph = buildAgent(host).compile({ checkpointer: options.checkpointer ?? new MemorySaver() });
  threads += 1;
  const threadId = options.threadId ?? `harness-${threads}-${randomUUID()}`;
  const configFor = (principal: Principal = options.principal) => ({
    ...runConfigFor({ threadId, principal, ...(options.runIds ? { runId: randomUUID() } : {}) }),
    ...runOptions(host.budgets),
  });
  const config = configFor();
  const snapshot = () => graph.getState({ configurable: { thread_id: threadId } });
  const harness = {
    host,
    graph,
    threadId,
    /** The configuration of an invocation by the run's principal (a fresh run id each call with `runIds`). */
    config,
    configFor,
    start: (request: string, principal?: Principal) =>
      graph.invoke({ messages: [new HumanMessage(request)] }, configFor(principal)),
    resume: (value: unknown, principal?: Principal) =>
      graph.invoke(new Command({ resume: value }), configFor(principal)),
    approve: (principal?: Principal) => harness.resume({ decisions: [{ type: "approve" }] }, principal),
    values: async () => (await snapshot()).values as State,
    interrupts: async (): Promise<InterruptPayload[]> =>
      (await snapshot()).tasks.flatMap((task) => task.interrupts.map((entry) => entry.value as InterruptPayload)),
    /** The error code of the tool message answering `callId`, or "ok" for a successful result. */
    toolCode: async (callId: string): Promise<string> => {
      const messages = ((await snapshot()).values as State).messages;
      const found = messages.filter(
        (message): message is ToolMessage => ToolMessage.isInstance(message) && message.tool_call_id === callId,
      );
      expect(found, `one tool message for ${callId}`).toHaveLength(1);
      const message = found[0] as ToolMessage;
      if (message.status !== "error") return "ok";
      return (JSON.parse(String(message.content)) as { error: { code: string } }).error.code;
    },
  };
  return harness;
}

export type GraphHarness<H extends Host = Host> = ReturnType<typeof graphHarness<H>>;
