/**
 * The model planner binds its tools block once and reuses the bound model
 * while the block is the same (a per-step cost, issue 23), yet every request
 * still carries the block and the `tool_choice` of its own step: a
 * restriction that comes and goes, and a definition whose text changes, reach
 * the wire at the step they apply to.
 */
import { HumanMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createModelPlanner } from "../../src/planners/model.js";
import type { ToolSpec } from "../../src/policy/contracts.js";
import { startFakeOpenAI, type FakeOpenAI } from "./support/fake-openai.js";

const REQUEST = "Find my notes on attention";
const SEARCH: ToolSpec = {
  name: "search_notes",
  description: "Search lecture notes.",
  parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
};
const READ: ToolSpec = {
  name: "read_note",
  description: "Read one note.",
  parameters: { type: "object", properties: { note_id: { type: "string" } }, required: ["note_id"] },
};
const RESTRICTED = {
  type: "allowed_tools",
  allowed_tools: { mode: "auto", tools: [{ type: "function", function: { name: "read_note" } }] },
};

type WireTool = { function: { name: string; description: string } };

describe("the model planner's bound model", () => {
  let server: FakeOpenAI;
  beforeEach(async () => {
    server = await startFakeOpenAI();
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await server.close();
  });

  it("is bound once per distinct block and every request carries its own step's tools and tool_choice", async () => {
    const bind = vi.spyOn(ChatOpenAI.prototype, "bindTools");
    const planner = createModelPlanner({
      model: "fake-model",
      baseUrl: server.baseUrl,
      maxRetries: 0,
      allowedTools: true,
    });
    const renamed: ToolSpec = { ...READ, description: "Read one note, whole.", parameters: READ.parameters };
    // Offer per turn: all, all, restricted, all, all with read_note's description changed (same schema object).
    const turns: { tools: ToolSpec[]; candidates: ToolSpec[] }[] = [
      { tools: [SEARCH, READ], candidates: [SEARCH, READ] },
      { tools: [READ, SEARCH], candidates: [READ, SEARCH] },
      { tools: [READ], candidates: [SEARCH, READ] },
      { tools: [SEARCH, READ], candidates: [SEARCH, READ] },
      { tools: [SEARCH, renamed], candidates: [SEARCH, renamed] },
    ];
    for (const [index, offer] of turns.entries()) {
      server.enqueue({
        kind: "completion",
        content: JSON.stringify({ type: "final", answer: "done", citations: [] }),
        finish_reason: "stop",
      });
      await planner.plan({
        request: REQUEST,
        messages: [new HumanMessage(REQUEST)],
        ...offer,
        evidence: [],
        turn: index + 1,
        context: {},
      });
    }
    const bodies = server.requests.map((request) => request.body);
    expect(bodies).toHaveLength(turns.length);
    const descriptions = bodies.map((body) =>
      (body["tools"] as WireTool[]).map((tool) => `${tool.function.name}: ${tool.function.description}`),
    );
    const original = ["read_note: Read one note.", "search_notes: Search lecture notes."];
    expect(descriptions.slice(0, 4)).toEqual([original, original, original, original]);
    expect(descriptions[4]).toEqual(["read_note: Read one note, whole.", "search_notes: Search lecture notes."]);
    expect(bodies.map((body) => body["tool_choice"])).toEqual([undefined, undefined, RESTRICTED, undefined, undefined]);
    // Unrestricted, restricted, and the changed definition: three bindings for five requests.
    expect(bind).toHaveBeenCalledTimes(3);
  });
});
