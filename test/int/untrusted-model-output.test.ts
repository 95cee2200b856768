/**
 * Model output is untrusted text (issue 12): a planner's tool names, call
 * ids, arguments and prose reach the checkpoint, the ledger and the audit
 * table. Driven through the real agent graph on a real Postgres server with
 * real MCP servers: each hostile reply ends as a typed refusal the model
 * sees, the run ends normally, and the thread stays readable afterwards.
 */
import { randomUUID } from "node:crypto";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import { MAX_ARGUMENT_DEPTH } from "../../src/policy/arguments.js";
import type { Proposal } from "../../src/policy/contracts.js";
import { INVALID_TOOL_NAME } from "../../src/planners/sanitize.js";
import { loadConfig } from "../../src/policy/config.js";
import { isSafeKey, isStorableText } from "../../src/policy/safe-text.js";
import type { State } from "../../src/state.js";
import { calls, scriptedPlanner } from "../support/scripted-planner.js";
import { agentHarness, settings } from "./support/agent.js";
import { backends, type OpenedBackend } from "./support/postgres.js";

const FINAL = { type: "final" as const, answer: "done", citations: [], abstained: false };
const nested = (levels: number) => `{"query": ${"[".repeat(levels - 1)}"x"${"]".repeat(levels - 1)}}`;

function toolErrors(state: State): { id: string; name: string | undefined; code: string; message: string }[] {
  return state.messages
    .filter((message): message is ToolMessage => ToolMessage.isInstance(message) && message.status === "error")
    .map((message) => {
      const { error } = JSON.parse(String(message.content)) as { error: { code: string; message: string } };
      return { id: message.tool_call_id, name: message.name, ...error };
    });
}

function proposedCalls(state: State) {
  return state.messages
    .filter((message): message is AIMessage => AIMessage.isInstance(message))
    .flatMap((message) => message.tool_calls ?? []);
}

let tools: ToolHost;
beforeAll(async () => {
  tools = await connectTools(await loadConfig(settings.configPath));
});
afterAll(async () => {
  await tools?.close();
});

const serverBackend = backends.filter((backend) => backend.name === "server");

describe.each(serverBackend)("untrusted model output on $name Postgres", (backend) => {
  let opened: OpenedBackend;
  beforeAll(async () => {
    opened = await backend.open();
  }, 60_000);
  afterAll(async () => {
    await opened?.cleanup();
  });

  /** One hostile proposal, then a final answer; returns the state read back from Postgres and the thread's audit rows. */
  async function runOne(hostile: Proposal) {
    const planner = scriptedPlanner([calls(hostile), FINAL]);
    const agent = agentHarness({ database: opened.database, tools, planner });
    const { threadId, state } = await agent.run("alice", "probe");
    planner.assertDone();
    // Read back again, as GET /state does: the checkpoint deserializes.
    const reread = await agent.state(threadId);
    expect(reread.status).toBe("completed");
    const audit = await opened.database.audit.list(threadId);
    const ledger = await opened.database.ledger.list(threadId);
    return { state, audit, ledger, planner };
  }

  it.each([
    ["NUL", "search\u0000notes"],
    ["a lone surrogate", "search_notes\ud800"],
    ["a bidi override", "search_\u202enotes"],
  ])("refuses a tool name with %s as unknown_tool, storing only a placeholder", async (_label, name) => {
    const { state, audit, ledger } = await runOne({
      call_id: "call_name_probe",
      name,
      raw_arguments: '{"query":"attention"}',
    });
    expect(state.termination_reason?.code).toBe("final_answer");
    expect(toolErrors(state)).toEqual([
      {
        id: "call_name_probe",
        name: INVALID_TOOL_NAME,
        code: "unknown_tool",
        check: "offered",
        message: expect.stringMatching(/^the proposed tool name contains/),
      },
    ]);
    expect(proposedCalls(state).map((call) => call.name)).toEqual([INVALID_TOOL_NAME]);
    expect(ledger).toEqual([]);
    expect(
      audit.filter((event) => event.kind === "denied").map((event) => [event.subject, event.tool, event.code]),
    ).toEqual([["call_name_probe", INVALID_TOOL_NAME, "unknown_tool"]]);
  });

  it.each([
    ["NUL", "call\u0000probe"],
    ["a lone surrogate", "call_\udc00"],
    ["a zero-width space", "call_\u200bprobe"],
  ])("refuses a call id with %s, replacing it with a fresh id everywhere", async (_label, callId) => {
    const { state, audit, ledger } = await runOne({
      call_id: callId,
      name: "search_notes",
      raw_arguments: '{"query":"attention"}',
    });
    expect(state.termination_reason?.code).toBe("final_answer");
    const [error] = toolErrors(state);
    expect(error).toMatchObject({ name: "search_notes", code: "invalid_arguments" });
    expect(error?.id).toMatch(/^call_[0-9a-f-]{36}$/);
    expect(proposedCalls(state).map((call) => call.id)).toEqual([error?.id]);
    expect(ledger).toEqual([]);
    expect(audit.find((event) => event.kind === "denied")?.subject).toBe(error?.id);
  });

  it.each([
    ["64 levels (about 140 bytes)", 64],
    ["20 000 levels", 20_000],
  ])("refuses arguments nested %s as invalid_arguments; the thread stays readable", async (_label, levels) => {
    const { state, ledger } = await runOne({
      call_id: `call_deep_${levels}`,
      name: "search_notes",
      raw_arguments: nested(levels),
    });
    expect(state.termination_reason?.code).toBe("final_answer");
    expect(toolErrors(state)).toEqual([
      {
        id: `call_deep_${levels}`,
        name: "search_notes",
        code: "invalid_arguments",
        check: "arguments",
        message: `arguments nest deeper than ${MAX_ARGUMENT_DEPTH} levels`,
      },
    ]);
    expect(proposedCalls(state).map((call) => call.args)).toEqual([{}]);
    expect(ledger).toEqual([]);
  });

  it("checkpoints arguments at exactly the depth limit and reads them back", async () => {
    // The schema refuses them (query must be a string), but the AI message keeps the parsed value.
    const { state } = await runOne({
      call_id: "call_deep_limit",
      name: "search_notes",
      raw_arguments: nested(MAX_ARGUMENT_DEPTH),
    });
    expect(toolErrors(state).map((error) => error.code)).toEqual(["invalid_arguments"]);
    let depth = 0;
    let value: unknown = proposedCalls(state)[0]?.args;
    while (typeof value === "object" && value !== null) {
      depth += 1;
      value = Array.isArray(value) ? value[0] : Object.values(value)[0];
    }
    expect(depth).toBe(MAX_ARGUMENT_DEPTH);
  });

  it.each([
    ["NUL in a value", String.raw`{"query":"atten\u0000tion"}`, 'argument "query" contains U+0000'],
    [
      "a lone surrogate in a value",
      String.raw`{"query":"\ud800"}`,
      'argument "query" contains a lone surrogate (U+D800)',
    ],
    [
      "NUL in an unknown key",
      String.raw`{"query":"x","\u0000":1}`,
      String.raw`argument "\u{0}" has a key that contains U+0000`,
    ],
    ["a raw NUL in the text", '{"query":"x"\u0000}', undefined],
  ])("refuses %s as invalid_arguments with a storable message", async (_label, raw, message) => {
    const { state, audit } = await runOne({ call_id: "call_text_probe", name: "search_notes", raw_arguments: raw });
    const [error] = toolErrors(state);
    expect(error?.code).toBe("invalid_arguments");
    if (message) expect(error?.message).toBe(message);
    const denied = audit.find((event) => event.kind === "denied");
    expect(denied?.code).toBe("invalid_arguments");
    expect(isStorableText(denied?.detail ?? "\u0000")).toBe(true);
  });

  it("stores a final answer and a needs_human reason with NUL and lone surrogates made storable", async () => {
    const answer = scriptedPlanner([
      { type: "final", answer: "forty\u0000two\ud800", citations: [], abstained: false },
    ]);
    const first = agentHarness({ database: opened.database, tools, planner: answer });
    const { threadId, state } = await first.run("alice", "probe");
    expect(state.status).toBe("completed");
    expect(state.result?.answer).toBe("forty\ufffdtwo\ufffd");
    expect((await first.state(threadId)).result?.answer).toBe("forty\ufffdtwo\ufffd");

    const reason = scriptedPlanner([{ type: "needs_human", reason: "ask\u0000 a\ud800 person" }]);
    const second = agentHarness({ database: opened.database, tools, planner: reason });
    const run = await second.run("alice", "probe");
    expect(run.state.termination_reason).toMatchObject({ code: "needs_human", detail: "ask\ufffd a\ufffd person" });
    const ended = (await opened.database.audit.list(run.threadId)).find((event) => event.kind === "run_ended");
    expect(ended?.detail).toBe("ask\ufffd a\ufffd person");
  });

  it("stores audit details and run outcomes that quote unstorable text (e.g. a tool's error message)", async () => {
    const owner = { tenant: "uni", user_id: "alice" };
    const threadId = randomUUID();
    const runId = randomUUID();
    await opened.database.threads.create(owner, { thread_id: threadId, metadata: {} });
    await opened.database.threads.createRun(owner, {
      run_id: runId,
      thread_id: threadId,
      assistant_id: "agent",
      status: "running",
      metadata: {},
      kwargs: {},
    });
    const detail = "outcome_unknown: create_study_event (call_1): server said \u0000\ud800";
    await opened.database.threads.setRunStatus(
      runId,
      "error",
      { error: "x", message: "boom\u0000" },
      { status: "needs_human", termination_reason: { code: "needs_human", detail }, pending_review: false },
    );
    const run = await opened.database.threads.getRun(owner, threadId, runId);
    expect(run?.outcome?.termination_reason).toMatchObject({
      detail: "outcome_unknown: create_study_event (call_1): server said \ufffd\ufffd",
    });
    expect(run?.error).toEqual({ error: "x", message: "boom\ufffd" });
    await opened.database.audit.record([
      {
        thread_id: threadId,
        run_id: runId,
        kind: "run_ended",
        subject: "",
        node: "observe",
        actor: "alice",
        code: "needs_human",
        tool: null,
        detail,
        at: new Date().toISOString(),
      },
    ]);
    expect((await opened.database.audit.list(threadId))[0]?.detail).toBe(
      "outcome_unknown: create_study_event (call_1): server said \ufffd\ufffd",
    );
  });

  it("keeps every stored name and id a safe identifier", async () => {
    const { state } = await runOne({ call_id: "call\u202e\u0000x", name: "x\u0000\u200b", raw_arguments: "{}" });
    for (const call of proposedCalls(state)) {
      expect(isSafeKey(call.id ?? "")).toBe(true);
      expect(isSafeKey(call.name)).toBe(true);
    }
    for (const decision of state.decisions ?? [])
      expect(isSafeKey(decision.call_id) && isSafeKey(decision.tool)).toBe(true);
  });
});
