/**
 * Issue 23: the model planner's requests over a long run, against the fake
 * OpenAI-compatible server. Within a run the system message and the `tools`
 * block are byte-identical, each request extends the one before (only the
 * appended note may differ), the user's request is in every request of a
 * 32-step run, and a step's restriction reaches the model as `tool_choice`
 * `allowed_tools` (when the model is configured for it) or as an appended
 * note, never by changing the `tools` block.
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { plannerContext } from "../../src/planners/context.js";
import { createModelPlanner } from "../../src/planners/model.js";
import type { ToolSpec } from "../../src/policy/contracts.js";
import type { Evidence } from "../../src/state/evidence.js";
import { startFakeOpenAI, type FakeOpenAI } from "./support/fake-openai.js";

const REQUEST = "Compare self-attention with cross-attention using my notes";
const SEARCH: ToolSpec = {
  name: "search_notes",
  description: "Search lecture notes.",
  parameters: {
    type: "object",
    required: ["query"],
    properties: { query: { type: "string" }, limit: { type: "integer" } },
    additionalProperties: false,
  },
};
const READ: ToolSpec = {
  name: "read_note",
  description: "Read one note.",
  parameters: { type: "object", properties: { note_id: { type: "string" } }, required: ["note_id"] },
};
const STEPS = 32;

type Wire = { role: string; content: unknown };
const messagesOf = (body: Record<string, unknown>) => body["messages"] as Wire[];

/** Runs `STEPS` planner turns as the plan node would, the offer narrowing on every third turn. */
async function longRun(server: FakeOpenAI, allowedTools: boolean): Promise<Record<string, unknown>[]> {
  const planner = createModelPlanner({ model: "fake-model", baseUrl: server.baseUrl, maxRetries: 0, allowedTools });
  const state: BaseMessage[] = [new HumanMessage(REQUEST)];
  const evidence: Evidence[] = [];
  for (let turn = 1; turn <= STEPS; turn += 1) {
    const id = `call_${turn}`;
    server.enqueue({
      kind: "completion",
      tool_calls: [{ id, name: "search_notes", arguments: JSON.stringify({ query: `q${turn}` }) }],
      finish_reason: "tool_calls",
    });
    // Candidates listed in a different order at each turn: the block must not depend on it.
    const candidates = turn % 2 === 0 ? [SEARCH, READ] : [READ, SEARCH];
    await planner.plan({
      request: REQUEST,
      messages: plannerContext(state),
      tools: turn % 3 === 0 ? [READ] : [SEARCH, READ],
      candidates,
      // Grows at every step, as state.evidence does: it must not reach anything before the transcript.
      evidence: [...evidence],
      turn,
    });
    state.push(new AIMessage({ content: "", tool_calls: [{ id, name: "search_notes", args: { query: `q${turn}` } }] }));
    const note = { note_id: `cs301.n${turn}`, source_id: `cs301/l${turn}`, text: "text ".repeat(40), version: 1 };
    state.push(new ToolMessage({ tool_call_id: id, name: "read_note", content: JSON.stringify(note), artifact: note }));
    evidence.push({
      ref: `${note.note_id}@1`,
      source_id: note.source_id,
      item_id: note.note_id,
      excerpt: note.text,
      version: "1",
      tool: "read_note",
      call_id: id,
    });
  }
  return server.requests.map((request) => request.body);
}

describe("the model planner's request over a long run", () => {
  let server: FakeOpenAI;
  beforeEach(async () => {
    server = await startFakeOpenAI();
  });
  afterEach(async () => {
    await server.close();
  });

  for (const allowedTools of [true, false]) {
    it(`keeps system message and tools byte-identical and the request in view (allowed_tools ${allowedTools ? "on" : "off"})`, async () => {
      const bodies = await longRun(server, allowedTools);
      expect(bodies).toHaveLength(STEPS);
      const first = bodies[0] ?? {};
      const tools = JSON.stringify(first["tools"]);
      const system = JSON.stringify(messagesOf(first)[0]);
      // Tools sorted by name, schema keys sorted.
      expect(tools.indexOf('"read_note"')).toBeLessThan(tools.indexOf('"search_notes"'));
      expect(tools).toContain('"parameters":{"additionalProperties":false,"properties"');
      let previous: Wire[] = [];
      for (const body of bodies) {
        expect(JSON.stringify(body["tools"])).toBe(tools);
        const messages = messagesOf(body);
        expect(JSON.stringify(messages[0])).toBe(system);
        expect(messages[1]).toEqual({ role: "user", content: REQUEST });
        // Append-only: everything of the previous request but its appended note comes first, unchanged.
        const stable = (list: Wire[]) => (list.at(-1)?.role === "system" && list.length > 1 ? list.slice(0, -1) : list);
        expect(JSON.stringify(messages.slice(0, stable(previous).length))).toBe(JSON.stringify(stable(previous)));
        previous = messages;
      }
      bodies.forEach((body, index) => {
        const turn = index + 1;
        const last = messagesOf(body).at(-1);
        if (turn % 3 !== 0) {
          expect(body).not.toHaveProperty("tool_choice");
          expect(last?.role).not.toBe("system");
        } else if (allowedTools) {
          expect(body["tool_choice"]).toEqual({
            type: "allowed_tools",
            allowed_tools: { mode: "auto", tools: [{ type: "function", function: { name: "read_note" } }] },
          });
          expect(last?.role).not.toBe("system");
        } else {
          expect(body).not.toHaveProperty("tool_choice");
          expect(last?.role).toBe("system");
          expect(String(last?.content)).toContain(JSON.stringify(["read_note"]));
        }
      });
    });
  }
});
