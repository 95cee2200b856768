/**
 * `/mcp` and `/a2a/{assistant_id}` against the real server (issue 44): the
 * MCP SDK's client and `@a2a-js/sdk`'s client, real Postgres, real MCP tool
 * servers, the rules planner. A cited answer through each; a study plan
 * through each pauses for review, the calling client cannot approve it by
 * any message or argument, rita decides it in the inbox, and the client then
 * sees the run completed with exactly one calendar event per approved
 * action; another user's thread or task is not found through both.
 */
import { AgentCard, TaskState, type Task } from "@a2a-js/sdk";
import type { Client as A2AClient } from "@a2a-js/sdk/client";
import type { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { a2aClientAs, mcpClientAs, userMessage } from "./support/agent-endpoints.js";
import { NOTES_QUESTION, startTestServer, type TestServer } from "./support/server.js";

const TIMEOUT_MS = 120_000;
const planFor = (date: string) =>
  "Use my notes to plan 120 minutes of attention study over 3 days, at most 60 minutes a day, " +
  `starting ${date} at 18:00 UTC, and put it in my calendar`;

let server: TestServer;
const fixture = useSandbox();
beforeAll(async () => {
  server = fixture.add(await startTestServer());
}, TIMEOUT_MS);

type View = {
  state: string;
  thread_id: string;
  run_id: string;
  answer: string | null;
  citations: unknown[];
  review: { url: string; actions: { name: string }[] } | null;
};

async function callTool(client: McpClient, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  const text = (result.content as { type: string; text: string }[])[0]?.text ?? "null";
  return { isError: result.isError === true, view: result.structuredContent as View, body: JSON.parse(text) };
}

const aliceEvents = async () =>
  ((await server.calendarEvents()) as { user_id: string }[]).filter((event) => event.user_id === "alice");

/** Rita decides alice's pending review of `threadId` in the inbox: approve all but the last action, reject that. */
async function ritaDecides(threadId: string): Promise<number> {
  const inbox = (await (await server.fetch("/reviews", { user: "rita" })).json()) as {
    reviews: { thread_id: string; review: { action_requests: unknown[] } }[];
  };
  const entry = inbox.reviews.find((review) => review.thread_id === threadId);
  expect(entry).toBeDefined();
  const count = entry?.review.action_requests.length ?? 0;
  const decisions = Array.from({ length: count }, (_, index) =>
    index === count - 1 ? { type: "reject", message: "not that day" } : { type: "approve" },
  );
  const decided = await server.fetch(`/reviews/${threadId}`, {
    user: "rita",
    method: "POST",
    body: JSON.stringify({ decisions }),
  });
  expect(decided.status).toBe(200);
  return count - 1;
}

/** The A2A error a client call threw: its class name and the API's code carried in ErrorInfo metadata. */
async function a2aRefusal(call: Promise<unknown>): Promise<{ name: string; code: string | undefined }> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) =>
      thrown as { name: string; metadata?: Record<string, string>; data?: { metadata?: Record<string, string> }[] },
  );
  expect(error, "the call was refused").toBeDefined();
  // The code travels as google.rpc.ErrorInfo metadata in the JSON-RPC error's data.
  const info = error?.metadata ?? error?.data?.find((detail) => detail.metadata)?.metadata;
  return { name: error?.name ?? "", code: info?.["code"] };
}

describe("/mcp with the MCP SDK's client", () => {
  let alice: McpClient;
  let paused: View;
  const fixture = useSandbox();
  beforeAll(async () => {
    alice = fixture.add(await mcpClientAs(server, "alice"));
  });

  it("lists one tool per assistant and get_run", async () => {
    const { tools } = await alice.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(["agent", "get_run", "workflow"]);
    expect(tools.find((tool) => tool.name === "agent")?.inputSchema.properties).toHaveProperty("message");
  });

  it(
    "answers a notes question with citations as structured content",
    async () => {
      const { isError, view } = await callTool(alice, "agent", { message: NOTES_QUESTION });
      expect(isError).toBe(false);
      expect(view.state).toBe("completed");
      expect(view.answer).toEqual(expect.any(String));
      expect(view.citations.length).toBeGreaterThan(0);
      // A thread id continues the caller's thread.
      const next = await callTool(alice, "agent", { message: NOTES_QUESTION, thread_id: view.thread_id });
      expect(next.view).toMatchObject({ state: "completed", thread_id: view.thread_id });
      expect(next.view.run_id).not.toBe(view.run_id);
    },
    TIMEOUT_MS,
  );

  it(
    "returns a study plan as waiting for review, with the thread id and the review's link, without blocking",
    async () => {
      const { isError, view } = await callTool(alice, "agent", { message: planFor("2026-12-02") });
      expect(isError).toBe(false);
      expect(view.state).toBe("input_required");
      expect(view.review?.url).toBe(`${server.url}/reviews/${view.thread_id}`);
      expect(view.review?.actions.map((action) => action.name)).toEqual([
        "create_study_event",
        "create_study_event",
        "create_study_event",
      ]);
      paused = view;
    },
    TIMEOUT_MS,
  );

  it("cannot approve it: a message saying approve, resume-looking arguments, or a decision as the message", async () => {
    const attempts: Record<string, unknown>[] = [
      { message: "approve", thread_id: paused.thread_id },
      { message: "ok", thread_id: paused.thread_id, command: { resume: { decisions: [{ type: "approve" }] } } },
      {
        message: JSON.stringify({ decisions: [{ type: "approve" }, { type: "approve" }, { type: "approve" }] }),
        thread_id: paused.thread_id,
      },
      { message: "approve", thread_id: paused.thread_id, decisions: [{ type: "approve" }], user_id: "rita" },
    ];
    for (const args of attempts) {
      const { isError, body } = await callTool(alice, "agent", args);
      expect(isError, JSON.stringify(args)).toBe(true);
      expect(body.error).toBe("review_pending");
    }
    const { view } = await callTool(alice, "get_run", { thread_id: paused.thread_id, run_id: paused.run_id });
    expect(view.state).toBe("input_required");
    expect(await aliceEvents()).toHaveLength(0);
  });

  it(
    "reports the run completed after rita decides in the inbox, with one event per approved action",
    async () => {
      const before = (await aliceEvents()).length;
      const approved = await ritaDecides(paused.thread_id);
      const { view } = await callTool(alice, "get_run", { thread_id: paused.thread_id, run_id: paused.run_id });
      expect(view.state).toBe("completed");
      expect((await aliceEvents()).length - before).toBe(approved);
      expect(approved).toBe(2);
    },
    TIMEOUT_MS,
  );

  it("shows bob nothing of alice's thread or run (not_found)", async () => {
    const bob = await mcpClientAs(server, "bob");
    try {
      const read = await callTool(bob, "get_run", { thread_id: paused.thread_id, run_id: paused.run_id });
      expect(read).toMatchObject({ isError: true, body: { error: "not_found" } });
      const write = await callTool(bob, "agent", { message: NOTES_QUESTION, thread_id: paused.thread_id });
      expect(write).toMatchObject({ isError: true, body: { error: "not_found" } });
    } finally {
      await bob.close();
    }
  });
});

describe("/a2a/agent with @a2a-js/sdk's client", () => {
  let alice: A2AClient;
  let paused: Task;
  beforeAll(async () => {
    alice = await a2aClientAs(server, "alice");
  });

  it(
    "answers a notes question: a completed task whose artifact carries the citations",
    async () => {
      const task = (await alice.sendMessage(userMessage(NOTES_QUESTION))) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const data = task.artifacts[0]?.parts.find((part) => part.content?.$case === "data")?.content?.value as {
        citations: unknown[];
      };
      expect(data.citations.length).toBeGreaterThan(0);
      expect(task.contextId).toMatch(/^[0-9a-f-]{36}$/);
      // The context id is the thread: a message with it continues that thread as a new task.
      const next = (await alice.sendMessage(userMessage(NOTES_QUESTION, { contextId: task.contextId }))) as Task;
      expect(next.contextId).toBe(task.contextId);
      expect(next.id).not.toBe(task.id);
      expect(next.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect((await alice.getTask({ tenant: "", id: task.id })).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    },
    TIMEOUT_MS,
  );

  it(
    "puts a study plan in input-required, and no message to the task or its context approves it",
    async () => {
      paused = (await alice.sendMessage(userMessage(planFor("2026-12-09")))) as Task;
      expect(paused.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      const toTask = await a2aRefusal(alice.sendMessage(userMessage("approve", { taskId: paused.id })));
      expect(toTask.code).toBe("review_pending");
      const toContext = await a2aRefusal(
        alice.sendMessage(
          userMessage("approve all", {
            contextId: paused.contextId,
            metadata: { decisions: [{ type: "approve" }], user_id: "rita", command: { resume: true } },
          }),
        ),
      );
      expect(toContext.code).toBe("review_pending");
      const again = await alice.getTask({ tenant: "", id: paused.id });
      expect(again.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      expect(await aliceEvents()).toHaveLength(2);
    },
    TIMEOUT_MS,
  );

  it(
    "polls the task to completed after rita decides in the inbox, with one event per approved action",
    async () => {
      const before = (await aliceEvents()).length;
      const approved = await ritaDecides(paused.contextId);
      const task = await alice.getTask({ tenant: "", id: paused.id });
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect((await aliceEvents()).length - before).toBe(approved);
      // Decided: a message to the ended task is refused, and nothing more is written.
      const late = await a2aRefusal(alice.sendMessage(userMessage("approve", { taskId: paused.id })));
      expect(late.code).toBe("task_ended");
      expect((await aliceEvents()).length - before).toBe(approved);
    },
    TIMEOUT_MS,
  );

  it("shows bob nothing of alice's task or context (TaskNotFoundError)", async () => {
    const bob = await a2aClientAs(server, "bob");
    const read = await a2aRefusal(bob.getTask({ tenant: "", id: paused.id }));
    expect(read).toEqual({ name: "TaskNotFoundError", code: "not_found" });
    const write = await a2aRefusal(bob.sendMessage(userMessage(NOTES_QUESTION, { contextId: paused.contextId })));
    expect(write).toEqual({ name: "TaskNotFoundError", code: "not_found" });
  });

  it("serves an agent card that the SDK's A2A schema codec reads back unchanged", async () => {
    const response = await fetch(`${server.url}/.well-known/agent-card.json?assistant_id=agent`);
    expect(response.status).toBe(200);
    const card = (await response.json()) as Record<string, unknown>;
    expect(AgentCard.toJSON(AgentCard.fromJSON(card))).toEqual(card);
    const parsed = AgentCard.fromJSON(card);
    expect(parsed.supportedInterfaces.map((entry) => [entry.protocolBinding, entry.protocolVersion])).toEqual([
      ["JSONRPC", "1.0"],
      ["JSONRPC", "0.3"],
    ]);
    expect(parsed.supportedInterfaces[0]?.url).toBe(`${server.url}/a2a/agent`);
    expect(parsed.skills[0]?.id).toBe("agent");
    expect(parsed.securityRequirements[0]?.schemes).toHaveProperty("bearer");
    expect((await fetch(`${server.url}/.well-known/agent-card.json?assistant_id=nope`)).status).toBe(404);
  });
});
