/**
 * Issue 42 through the real graph (plan → authorize → execute → observe on a
 * memory host and MemorySaver), once per provider wire: OpenAI Chat
 * Completions (support/fake-openai.ts) and Anthropic Messages
 * (support/fake-anthropic.ts), each reached over HTTP by the shipped model
 * planner. The same hostile replies go through each wire and end in the
 * same typed refusals (unknown tool, a NUL in the name, bad arguments, deep
 * nesting, a repeated call); a tool the step withholds is masked
 * (`allowed_tools` on OpenAI, the appended note on Anthropic) and, called
 * anyway, refused `tool_not_permitted` with its `withheld` reason. OpenAI
 * requests carry one `prompt_cache_key` per thread; its cached-token usage
 * is read and priced. `WARRANT_MODEL` names are parsed at start.
 */
import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildAgent } from "../../graphs/agent.js";
import type { Principal } from "../../src/auth/principal.js";
import { plannerFor } from "../../src/bootstrap.js";
import { loadSettings } from "../../src/env.js";
import { isConfigError } from "../../src/errors.js";
import { buildCatalog, type ListedTool } from "../../src/mcp/catalog.js";
import type { NormalizedResult } from "../../src/mcp/normalize.js";
import type { ToolHost } from "../../src/mcp/tool-host.js";
import { createModelPlanner, promptCacheKeyOf } from "../../src/planners/model.js";
import { parseModelName } from "../../src/model-name.js";
import type { Planner } from "../../src/planners/planner.js";
import { MAX_ARGUMENT_DEPTH } from "../../src/policy/arguments.js";
import { ToolContractSchema } from "../../src/policy/contracts.js";
import { runConfigFor } from "../../src/run-config.js";
import { runOptions } from "../../src/graph/routes.js";
import type { State } from "../../src/state.js";
import { memoryHost } from "../support/memory-host.js";
import { startFakeAnthropic, type FakeAnthropic } from "./support/fake-anthropic.js";
import { startFakeOpenAI, type FakeOpenAI } from "./support/fake-openai.js";
import { settings } from "./support/agent.js";

const alice: Principal = {
  user_id: "alice",
  tenant: "uni",
  role: "student",
  scopes: ["notes:read"],
  grants: { courses: ["cs301"] },
};
const REQUEST = "Compare self-attention with cross-attention using my notes";
const FINAL_TEXT = JSON.stringify({ answer: "Both relate positions.", citations: [], abstained: false });

/** `read_note` on server notes, `read_backup` on server backup (healthy or not); every call recorded. */
function tools(backupHealthy: boolean) {
  const object = { type: "object", properties: { note_id: { type: "string" } }, required: ["note_id"] };
  const listed: Record<string, ListedTool[]> = {
    notes: [{ name: "read_note", description: "Read one note by its id", inputSchema: object }],
    backup: [{ name: "read_backup", description: "Read one note from the backup copy", inputSchema: object }],
  };
  const contract = (server: string) => ToolContractSchema.parse({ server, risk: "read", scopes: ["notes:read"] });
  const { tools: catalog } = buildCatalog({ read_note: contract("notes"), read_backup: contract("backup") }, listed);
  const calls: string[] = [];
  const host: ToolHost & { calls: string[] } = {
    calls,
    maxTools: 8,
    catalog: () => catalog,
    isHealthy: (server) => server !== "backup" || backupHealthy,
    isListed: (name) => catalog.some((tool) => tool.name === name),
    async call(tool, args): Promise<NormalizedResult> {
      calls.push(tool.name);
      const note = { note_id: String(args["note_id"]), source_id: `cs301/${String(args["note_id"])}`, text: "Notes." };
      return { ok: true, text: JSON.stringify(note), structured: note };
    },
    async readResource() {
      return { ok: false, code: "tool_not_permitted", message: "no resources" };
    },
    async getPrompt() {
      return { ok: false, code: "tool_not_permitted", message: "no prompts" };
    },
    async close() {},
  };
  return host;
}

/** One provider's scripted endpoint, as the tests script it. */
interface Wire {
  name: "openai" | "anthropic";
  planner(): Planner;
  /** One reply proposing one call with this raw argument text. */
  call(id: string, name: string, args: string): void;
  final(): void;
  bodies(): Record<string, unknown>[];
  pending(): number;
  close(): Promise<void>;
}

async function openWire(name: Wire["name"]): Promise<Wire> {
  if (name === "openai") {
    const server: FakeOpenAI = await startFakeOpenAI();
    return {
      name,
      planner: () =>
        createModelPlanner({
          model: "fake-model",
          provider: "openai",
          baseUrl: server.baseUrl,
          maxRetries: 0,
          allowedTools: true,
        }),
      call: (id, tool, args) =>
        server.enqueue({
          kind: "completion",
          tool_calls: [{ id, name: tool, arguments: args }],
          finish_reason: "tool_calls",
        }),
      final: () => server.enqueue({ kind: "completion", content: FINAL_TEXT, finish_reason: "stop" }),
      bodies: () => server.requests.map((request) => request.body),
      pending: () => server.pending(),
      close: () => server.close(),
    };
  }
  const server: FakeAnthropic = await startFakeAnthropic();
  return {
    name,
    planner: () =>
      createModelPlanner({ model: "claude-test", provider: "anthropic", baseUrl: server.baseUrl, maxRetries: 0 }),
    call: (id, tool, args) =>
      server.enqueue({
        kind: "message",
        content: [{ type: "tool_use", id, name: tool, input: args }],
        stop_reason: "tool_use",
      }),
    final: () =>
      server.enqueue({ kind: "message", content: [{ type: "text", text: FINAL_TEXT }], stop_reason: "end_turn" }),
    bodies: () => server.requests.map((request) => request.body),
    pending: () => server.pending(),
    close: () => server.close(),
  };
}

let threads = 0;
async function run(wire: Wire, options: { backupHealthy: boolean; maxRepeats?: number }) {
  const host = tools(options.backupHealthy);
  const memory = memoryHost({
    planner: wire.planner(),
    tools: host,
    budgets: { model_turns: 20, tool_calls: 20, max_repeats: options.maxRepeats ?? 10, no_progress_steps: 20 },
  });
  const graph = buildAgent(memory).compile({ checkpointer: new MemorySaver() });
  threads += 1;
  const threadId = `providers-${wire.name}-${threads}`;
  const config = { ...runConfigFor({ threadId, principal: alice }), ...runOptions(memory.budgets) };
  await graph.invoke({ messages: [new HumanMessage(REQUEST)] }, config);
  const state = (await graph.getState(config)).values as State;
  return { state, host, memory, threadId };
}

const nested = (levels: number) => `{"note_id": ${"[".repeat(levels - 1)}"x"${"]".repeat(levels - 1)}}`;

describe.each(["openai", "anthropic"] as const)("the %s wire through the graph (issue 42)", (name) => {
  let wire: Wire;
  beforeEach(async () => {
    wire = await openWire(name);
  });
  afterEach(async () => {
    await wire.close();
  });

  it("refuses the adversarial set with the same codes: unknown tool, NUL name, bad arguments, deep nesting, a repeat", async () => {
    wire.call("call_unknown", "delete_everything", '{"note_id":"n1"}');
    wire.call("call_nul", "read\u0000note", '{"note_id":"n1"}');
    wire.call("call_bad", "read_note", '{"note_id": 5}');
    wire.call("call_deep", "read_note", nested(MAX_ARGUMENT_DEPTH + 14));
    wire.call("call_first", "read_note", '{"note_id":"cs301.n1"}');
    wire.call("call_again", "read_note", '{"note_id":"cs301.n1"}');
    const { state, host, memory } = await run(wire, { backupHealthy: true, maxRepeats: 1 });
    expect(wire.pending()).toBe(0);
    const denied = memory.auditStore.events
      .filter((event) => event.kind === "denied")
      .map((event) => [event.subject, event.code]);
    expect(denied).toEqual([
      ["call_unknown", "unknown_tool"],
      ["call_nul", "unknown_tool"],
      ["call_bad", "invalid_arguments"],
      ["call_deep", "invalid_arguments"],
      ["call_again", "repeated_action"],
    ]);
    expect(state.termination_reason?.code).toBe("repeated_action");
    // Only the one valid call ran, once.
    expect(host.calls).toEqual(["read_note"]);
    expect(state.ledger.map((entry) => entry.call_id)).toEqual(["call_first"]);
  });

  it("masks a withheld tool and refuses it with its withheld reason when the model calls it anyway", async () => {
    wire.call("call_masked", "read_backup", '{"note_id":"cs301.n1"}');
    wire.final();
    const { state, host } = await run(wire, { backupHealthy: false });
    expect(wire.pending()).toBe(0);
    expect(state.status).toBe("completed");
    const [first] = wire.bodies();
    const toolNames = JSON.stringify(first?.["tools"]);
    expect(toolNames).toContain('"read_backup"');
    if (name === "openai") {
      expect(first?.["tool_choice"]).toEqual({
        type: "allowed_tools",
        allowed_tools: { mode: "auto", tools: [{ type: "function", function: { name: "read_note" } }] },
      });
    } else {
      expect(first).not.toHaveProperty("tool_choice");
      const last = ((first?.["messages"] ?? []) as { role: string; content: unknown }[]).at(-1);
      expect(last?.role).toBe("user");
      expect(JSON.stringify(last?.content)).toContain("read_note");
    }
    expect(host.calls).toEqual([]);
    expect(state.ledger).toEqual([]);
    expect(state.denials).toEqual([
      expect.objectContaining({
        call_id: "call_masked",
        tool: "read_backup",
        code: "tool_not_permitted",
        check: "offered",
        withheld: "unhealthy",
      }),
    ]);
  });
});

describe("OpenAI prompt_cache_key and cached usage (issue 42)", () => {
  let wire: Wire;
  let server: FakeOpenAI;
  beforeEach(async () => {
    wire = await openWire("openai");
    server = await startFakeOpenAI();
  });
  afterEach(async () => {
    await wire.close();
    await server.close();
  });

  it("sends one prompt_cache_key per thread, the same at every step, never the thread id itself", async () => {
    wire.call("call_1", "read_note", '{"note_id":"cs301.n1"}');
    wire.final();
    const first = await run(wire, { backupHealthy: true });
    wire.final();
    const second = await run(wire, { backupHealthy: true });
    const keys = wire.bodies().map((body) => body["prompt_cache_key"]);
    expect(keys).toEqual([
      promptCacheKeyOf(first.threadId),
      promptCacheKeyOf(first.threadId),
      promptCacheKeyOf(second.threadId),
    ]);
    expect(keys[0]).not.toBe(keys[2]);
    expect(String(keys[0])).not.toContain(first.threadId);
  });

  it("sends no prompt_cache_key to an openai-compatible server", async () => {
    server.enqueue({ kind: "completion", content: FINAL_TEXT, finish_reason: "stop" });
    const planner = createModelPlanner({ model: "local", baseUrl: server.baseUrl, maxRetries: 0 });
    await planner.plan({ request: REQUEST, messages: [], tools: [], evidence: [], turn: 1, thread_id: "t1" });
    expect(server.requests[0]?.body).not.toHaveProperty("prompt_cache_key");
  });

  it("reads cached_tokens into the usage and prices them at the cached rate", async () => {
    const usage = { prompt_tokens: 1000, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 800 } };
    server.enqueue({ kind: "completion", content: FINAL_TEXT, finish_reason: "stop", usage });
    const planner = plannerFor(
      { ...settings, planner: "model", model: { name: "openai:priced", baseUrl: server.baseUrl, apiKey: "k" } },
      {
        priced: {
          input_per_million_usd: 1,
          output_per_million_usd: 4,
          cached_input_per_million_usd: 0.25,
        },
      },
    );
    const result = await planner.plan({ request: REQUEST, messages: [], tools: [], evidence: [], turn: 1 });
    expect(result.usage).toEqual({ input_tokens: 1000, output_tokens: 10, cached_input_tokens: 800 });
    expect(planner.price?.cached_input_per_million_usd).toBe(0.25);
  });

  it.each([
    ["cached_tokens as text", "800"],
    ["negative cached_tokens", -1],
    ["cached_tokens above the prompt", 5000],
  ])("refuses %s as model_invalid_usage", async (_label, cached) => {
    const usage = { prompt_tokens: 1000, completion_tokens: 10, prompt_tokens_details: { cached_tokens: cached } };
    server.enqueue({ kind: "completion", content: FINAL_TEXT, finish_reason: "stop", usage });
    const planner = createModelPlanner({ model: "m", provider: "openai", baseUrl: server.baseUrl, maxRetries: 0 });
    const error: unknown = await planner
      .plan({ request: REQUEST, messages: [], tools: [], evidence: [], turn: 1 })
      .then(
        () => undefined,
        (rejection: unknown) => rejection,
      );
    expect((error as { code?: string }).code).toBe("model_invalid_usage");
  });
});

describe("WARRANT_MODEL by name (issue 42)", () => {
  it.each([
    ["openai:gpt-4.1-mini", { provider: "openai", model: "gpt-4.1-mini" }],
    ["anthropic:claude-sonnet-4-5", { provider: "anthropic", model: "claude-sonnet-4-5" }],
    ["google-genai:gemini-2.5-flash", { provider: "google-genai", model: "gemini-2.5-flash" }],
    ["openai-compatible:qwen3:8b", { provider: "openai-compatible", model: "qwen3:8b" }],
    ["qwen3:8b", { provider: "openai-compatible", model: "qwen3:8b" }],
    ["gpt-4o-mini", { provider: "openai-compatible", model: "gpt-4o-mini" }],
  ])("parses %s", (name, expected) => {
    expect(parseModelName(name)).toEqual(expected);
  });

  it.each([
    ["google-vertexai:gemini-2.5-flash", "@langchain/google-vertexai"],
    ["anthropic:", "no model"],
    ["openai:  ", "no model"],
  ])("refuses %s at start with a typed config error", (name, detail) => {
    let error: unknown;
    try {
      loadSettings({ WARRANT_MODEL: name, ANTHROPIC_API_KEY: "k" });
    } catch (caught) {
      error = caught;
    }
    expect(isConfigError(error) && error.code).toBe("config_invalid");
    expect(String((error as Error).message)).toContain(detail);
  });

  it("refuses openai-compatible: without a base URL, and accepts it with one", () => {
    expect(() => loadSettings({ WARRANT_MODEL: "openai-compatible:llama3" })).toThrow(/OPENAI_BASE_URL/);
    const loaded = loadSettings({
      WARRANT_MODEL: "openai-compatible:llama3",
      OPENAI_BASE_URL: "http://127.0.0.1:1/v1",
    });
    expect(loaded.planner).toBe("model");
  });

  it("builds the Anthropic planner from the settings with ANTHROPIC_BASE_URL and its price by full or bare name", () => {
    const loaded = loadSettings({
      WARRANT_MODEL: "anthropic:claude-test",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:1",
      ANTHROPIC_API_KEY: "k",
    });
    expect(loaded.model.anthropicBaseUrl).toBe("http://127.0.0.1:1");
    const price = { input_per_million_usd: 3, output_per_million_usd: 15, cache_write_per_million_usd: 3.75 };
    expect(plannerFor(loaded, { "anthropic:claude-test": price }).price).toEqual(price);
    expect(plannerFor(loaded, { "claude-test": price }).price).toEqual(price);
  });
});
