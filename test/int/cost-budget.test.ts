/**
 * The cost budget end to end: the model planner (ChatOpenAI) against a fake
 * OpenAI-compatible endpoint that reports usage, priced from the config's
 * `models` table, through the real agent graph on a real Postgres server.
 * The run stops with `budget_exhausted` (cost) once the priced usage reaches
 * the limit, and not before; a reply with impossible usage ends the run as
 * `planner_error` instead of switching the budgets off.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { plannerFor } from "../../src/bootstrap.js";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import { loadConfig } from "../../src/policy/config.js";
import { agentHarness, settings } from "./support/agent.js";
import { startFakeOpenAI, type FakeOpenAI, type ScriptedCompletion } from "./support/fake-openai.js";
import { backends, useBackend } from "./support/postgres.js";

const PRICE = { input_per_million_usd: 0.15, output_per_million_usd: 0.6 };
/** Each reply reports one million prompt tokens and 100 000 completion tokens: $0.15 + $0.06 = $0.21. */
const USAGE = { prompt_tokens: 1_000_000, completion_tokens: 100_000 };

function search(turn: number, usage: ScriptedCompletion["usage"] = USAGE): ScriptedCompletion {
  return {
    kind: "completion",
    tool_calls: [
      {
        id: `call_cost_${turn}`,
        name: "search_notes",
        arguments: JSON.stringify({ query: `attention variant ${turn}`, limit: 1 }),
      },
    ],
    finish_reason: "tool_calls",
    usage,
  };
}

let tools: ToolHost;
const fixture = useSandbox();
beforeAll(async () => {
  tools = fixture.add(await connectTools(await loadConfig(settings.configPath)));
});

describe.each(backends.filter((backend) => backend.name === "server"))("cost budget on $name Postgres", (backend) => {
  let fake: FakeOpenAI;
  const opened = useBackend(backend);
  const each = useSandbox("each");
  beforeEach(async () => {
    fake = each.add(await startFakeOpenAI());
  });

  const modelPlanner = (prices: Record<string, typeof PRICE>) =>
    plannerFor(
      { ...settings, planner: "model", model: { name: "priced-model", baseUrl: fake.baseUrl, apiKey: "test-key" } },
      prices,
    );
  const roomy = { tokens: 100_000_000, model_turns: 20, tool_calls: 20, no_progress_steps: 20 };

  it("stops the run with budget_exhausted (cost) once priced usage reaches the limit", async () => {
    fake.enqueue(search(1), search(2), search(3));
    const agent = agentHarness({
      database: opened().database,
      tools,
      planner: modelPlanner({ "priced-model": PRICE }),
      budgets: { ...roomy, cost_usd: 0.5 },
    });
    const { threadId, state } = await agent.run("alice", "Compare self-attention with cross-attention using my notes");
    // $0.21, $0.42 (room left), $0.63 ≥ $0.50: the third reply's cost stops the run before a fourth model call.
    expect(state.termination_reason).toMatchObject({ code: "budget_exhausted", budget: "cost" });
    expect(state.status).toBe("stopped");
    expect(fake.requests).toHaveLength(3);
    expect(fake.pending()).toBe(0);
    expect(state.usage.cost_usd).toBeCloseTo(0.63, 10);
    expect(state.usage).toMatchObject({ model_calls: 3, input_tokens: 3_000_000, output_tokens: 300_000 });
    const ended = (await opened().database.audit.list(threadId)).find((event) => event.kind === "run_ended");
    expect(ended).toMatchObject({ code: "budget_exhausted", detail: "cost budget used up (cost)" });
  });

  it("counts an unpriced model as free: only the other budgets stop it", async () => {
    fake.enqueue(search(1), search(2), search(3));
    const agent = agentHarness({
      database: opened().database,
      tools,
      planner: modelPlanner({}),
      budgets: { ...roomy, cost_usd: 0.01, model_turns: 3 },
    });
    const { state } = await agent.run("alice", "Compare self-attention with cross-attention using my notes");
    expect(state.usage.cost_usd).toBe(0);
    expect(state.termination_reason).toMatchObject({ code: "budget_exhausted", budget: "model_turns" });
  });

  it("ends the run as planner_error when the endpoint reports negative usage, instead of disabling the token budget", async () => {
    fake.enqueue(search(1, { prompt_tokens: -50_000_000, completion_tokens: 1 }));
    const agent = agentHarness({
      database: opened().database,
      tools,
      planner: modelPlanner({ "priced-model": PRICE }),
      budgets: { ...roomy, cost_usd: 0.5 },
    });
    const { threadId, state } = await agent.run("alice", "Compare self-attention with cross-attention using my notes");
    expect(state.termination_reason?.code).toBe("planner_error");
    expect(state.termination_reason?.detail).toMatch(/^model_invalid_usage: /);
    expect(state.usage).toMatchObject({ model_calls: 1, input_tokens: 0, output_tokens: 0, cost_usd: 0 });
    expect((await agent.state(threadId)).status).toBe("failed");
  });
});
