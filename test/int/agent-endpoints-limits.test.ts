/**
 * Budgets and the run limit through `/mcp` and A2A (issue 44), as on the
 * LangGraph routes: one run at a time per principal (`too_many_runs`, and
 * no thread left behind), and a model-turn budget of one that stops the
 * notes question with the same termination reason as a LangGraph run; an
 * A2A task sent with `returnImmediately` is working, and `CancelTask` cancels it.
 */
import { TaskState, type Task } from "@a2a-js/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Planner } from "../../src/planners/planner.js";
import { a2aClientAs, mcpClientAs, userMessage } from "./support/agent-endpoints.js";
import { bookingPlanner, NOTES_QUESTION, startTestServer, type TestServer } from "./support/server.js";

const TIMEOUT_MS = 120_000;

let server: TestServer;
let release: () => void = () => undefined;
let held: Promise<void> = Promise.resolve();
/** Makes the next "hold" request wait until `release()`. */
function hold(): void {
  held = new Promise<void>((resolve) => {
    release = resolve;
  });
}

/** The test server's planner, except that a request saying "hold" waits until the test releases it. */
function holdingPlanner(): Planner {
  const inner = bookingPlanner();
  return {
    kind: "scripted",
    async plan(input) {
      if (/\bhold\b/i.test(input.request)) await held;
      return inner.plan(input);
    },
  };
}

beforeAll(async () => {
  hold();
  server = await startTestServer({
    planner: holdingPlanner(),
    settings: { WARRANT_MAX_ACTIVE_RUNS: "1", WARRANT_MAX_MODEL_TURNS: "1" },
  });
}, TIMEOUT_MS);
afterAll(async () => {
  release();
  await server?.close();
});

const threadCount = async () =>
  ((await (await server.fetch("/threads/search", { user: "alice", method: "POST", body: "{}" })).json()) as unknown[])
    .length;

describe("the run limit and the budgets apply to /mcp and A2A", () => {
  it(
    "refuses a run over the principal's limit with too_many_runs, through both, leaving no thread",
    async () => {
      const langgraph = await server.client("alice");
      const thread = await langgraph.threads.create();
      const holding = await langgraph.runs.create(thread.thread_id, "agent", {
        input: { messages: [{ role: "user", content: "hold on, then answer from my notes" }] },
      });
      const mcp = await mcpClientAs(server, "alice");
      try {
        const result = await mcp.callTool({ name: "agent", arguments: { message: NOTES_QUESTION } });
        expect(result.isError).toBe(true);
        const text = (result.content as { text: string }[])[0]?.text ?? "{}";
        expect(JSON.parse(text).error).toBe("too_many_runs");
      } finally {
        await mcp.close();
      }
      const a2a = await a2aClientAs(server, "alice");
      const refused = (await a2a.sendMessage(userMessage(NOTES_QUESTION)).then(
        () => undefined,
        (error: unknown) => error,
      )) as { name: string; data?: { metadata?: Record<string, string> }[] } | undefined;
      expect(refused?.name).toBe("UnsupportedOperationError");
      expect(refused?.data?.find((detail) => detail.metadata)?.metadata?.["code"]).toBe("too_many_runs");
      expect(await threadCount()).toBe(1);
      release();
      await langgraph.runs.join(thread.thread_id, holding.run_id);
    },
    TIMEOUT_MS,
  );

  it(
    "stops a run at its model-turn budget with the termination reason a LangGraph run gets",
    async () => {
      const langgraph = await server.client("alice");
      const thread = await langgraph.threads.create();
      const values = (await langgraph.runs.wait(thread.thread_id, "agent", {
        input: { messages: [{ role: "user", content: NOTES_QUESTION }] },
      })) as { termination_reason: { code: string; budget?: string } };
      expect(values.termination_reason).toMatchObject({ code: "budget_exhausted", budget: "model_turns" });

      const mcp = await mcpClientAs(server, "alice");
      try {
        const result = await mcp.callTool({ name: "agent", arguments: { message: NOTES_QUESTION } });
        expect(result.structuredContent).toMatchObject({
          state: "failed",
          answer: null,
          termination_reason: { code: values.termination_reason.code, budget: values.termination_reason.budget },
        });
      } finally {
        await mcp.close();
      }
      const a2a = await a2aClientAs(server, "alice");
      const task = (await a2a.sendMessage(userMessage(NOTES_QUESTION))) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
      expect(task.artifacts).toEqual([]);
      expect(task.metadata?.["termination_reason"]).toMatchObject({ code: "budget_exhausted", budget: "model_turns" });
    },
    TIMEOUT_MS,
  );

  it(
    "answers returnImmediately with a working task, and CancelTask cancels its run",
    async () => {
      hold();
      const a2a = await a2aClientAs(server, "alice");
      const request = userMessage("hold on, then answer from my notes");
      request.configuration = {
        acceptedOutputModes: [],
        taskPushNotificationConfig: undefined,
        returnImmediately: true,
      };
      const task = (await a2a.sendMessage(request)) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_WORKING);
      const cancelling = a2a.cancelTask({ tenant: "", id: task.id, metadata: undefined });
      // The run stops at its next safe point: once the held planner returns.
      await new Promise((resolve) => setTimeout(resolve, 300));
      release();
      expect((await cancelling).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      const mcp = await mcpClientAs(server, "alice");
      try {
        const [threadId, runId] = task.id.split(":");
        const read = await mcp.callTool({ name: "get_run", arguments: { thread_id: threadId, run_id: runId } });
        expect(read.structuredContent).toMatchObject({ state: "canceled" });
      } finally {
        await mcp.close();
      }
      const again = await a2aRefusal(a2a.cancelTask({ tenant: "", id: task.id, metadata: undefined }));
      expect(again).toBe("TaskNotCancelableError");
    },
    TIMEOUT_MS,
  );
});

async function a2aRefusal(call: Promise<unknown>): Promise<string | undefined> {
  return call.then(
    () => undefined,
    (error: { name?: string }) => error.name,
  );
}
