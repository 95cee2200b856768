/**
 * Issue 23 through the real graph (plan → authorize → execute → observe on a
 * memory host and MemorySaver) with the shipped model planner reaching a fake
 * OpenAI-compatible server over HTTP:
 *
 *  - over a long run the system message and the `tools` block of every
 *    request are byte-identical, and the user's request is in every request;
 *  - a tool the step withholds (its server unhealthy) stays in the `tools`
 *    block, is masked by `tool_choice` `allowed_tools` or by the appended
 *    note, and when the model calls it anyway it is refused
 *    `tool_not_permitted` with its withheld reason and never runs;
 *  - compaction changes only the model's view: the ledger keeps every call,
 *    the trace's offer records the compaction, every ref stays named in the
 *    request, and a citation of a compacted result is accepted.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal.js";
import { buildCatalog, type ListedTool } from "../../src/mcp/catalog.js";
import type { NormalizedResult } from "../../src/mcp/normalize.js";
import type { ToolHost } from "../../src/mcp/tool-host.js";
import { readFencedToolResult } from "../../src/planners/fence.js";
import { createModelPlanner } from "../../src/planners/model.js";
import { wireCallId } from "../../src/planners/wire-call-ids.js";
import { ToolContractSchema } from "../../src/policy/contracts.js";
import { graphHarness } from "../support/harness.js";
import { memoryHost } from "../support/memory-host.js";
import { useSandbox } from "../support/sandbox.js";
import { startScriptedModel } from "../support/scripted-model.js";
import type { FakeOpenAI } from "./support/fake-openai.js";

const alice: Principal = {
  user_id: "alice",
  tenant: "uni",
  role: "student",
  scopes: ["notes:read"],
  grants: { courses: ["cs301"] },
};
const REQUEST = "Compare self-attention with cross-attention using my notes";

type Wire = { role: string; content: unknown; tool_call_id?: string };
const messagesOf = (body: Record<string, unknown>) => body["messages"] as Wire[];

const NOTE_TEXT = "Attention relates every position of a sequence to every other position. ".repeat(6);

/** `read_note` on server notes, `read_backup` on server backup (whose health the test switches); every call recorded. */
function tools(backupHealthy: () => boolean) {
  const object = { type: "object", properties: { note_id: { type: "string" } }, required: ["note_id"] };
  const listed: Record<string, ListedTool[]> = {
    notes: [{ name: "read_note", description: "Read one note by its id", inputSchema: object }],
    backup: [{ name: "read_backup", description: "Read one note from the backup copy", inputSchema: object }],
  };
  const contract = (server: string) => ToolContractSchema.parse({ server, risk: "read", scopes: ["notes:read"] });
  const { tools: catalog } = buildCatalog({ read_note: contract("notes"), read_backup: contract("backup") }, listed);
  const calls: { tool: string; args: Record<string, unknown> }[] = [];
  const host: ToolHost & { calls: typeof calls } = {
    calls,
    maxTools: 8,
    catalog: () => catalog,
    isHealthy: (server) => server !== "backup" || backupHealthy(),
    isListed: (name) => catalog.some((tool) => tool.name === name),
    async call(tool, args): Promise<NormalizedResult> {
      calls.push({ tool: tool.name, args });
      const note = { note_id: String(args["note_id"]), source_id: `cs301/${String(args["note_id"])}`, text: NOTE_TEXT };
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

function harness(
  server: FakeOpenAI,
  options: { allowedTools: boolean; budgetTokens?: number; backup?: () => boolean },
) {
  const host = tools(options.backup ?? (() => true));
  const planner = createModelPlanner({
    model: "fake-model",
    baseUrl: server.baseUrl,
    maxRetries: 0,
    allowedTools: options.allowedTools,
    ...(options.budgetTokens !== undefined ? { contextBudgetTokens: options.budgetTokens } : {}),
  });
  const memory = memoryHost({
    planner,
    tools: host,
    budgets: { model_turns: 100, tool_calls: 100, max_repeats: 100, no_progress_steps: 100 },
  });
  const h = graphHarness(memory, { principal: alice });
  return {
    host,
    memory,
    threadId: h.threadId,
    start: async () => {
      await h.start(REQUEST);
      return h.values();
    },
  };
}

const call = (id: string, name: string, noteId: string) => ({
  kind: "completion" as const,
  tool_calls: [{ id, name, arguments: JSON.stringify({ note_id: noteId }) }],
  finish_reason: "tool_calls",
});
const final = (citations: string[]) => ({
  kind: "completion" as const,
  content: JSON.stringify({ answer: "Both relate positions.", citations, abstained: false }),
  finish_reason: "stop",
});

describe("the model planner's requests through the graph (issue 23)", () => {
  const sandbox = useSandbox("each");
  let server: FakeOpenAI;
  beforeEach(async () => {
    server = await startScriptedModel(sandbox);
  });

  for (const allowedTools of [true, false]) {
    const mode = allowedTools ? "on" : "off";
    it(`keeps system and tools fixed, the request in view, and refuses a masked tool (allowed_tools ${mode})`, async () => {
      const STEPS = 24;
      // The backup server is down from the 10th request on; the model calls its tool at the 12th anyway.
      let requests = 0;
      const h = harness(server, { allowedTools, backup: () => requests < 9 });
      for (let step = 1; step <= STEPS; step += 1)
        server.enqueue(call(`call_${step}`, step === 12 ? "read_backup" : "read_note", `cs301.n${step}`));
      server.enqueue(final([]));
      const counting = server.requests;
      const push = counting.push.bind(counting);
      counting.push = (...items) => {
        requests += items.length;
        return push(...items);
      };
      const state = await h.start();
      expect(server.pending()).toBe(0);
      expect(state.status).toBe("completed");

      const bodies = server.requests.map((request) => request.body);
      expect(bodies).toHaveLength(STEPS + 1);
      const tools = JSON.stringify(bodies[0]?.["tools"]);
      const system = JSON.stringify(messagesOf(bodies[0] ?? {})[0]);
      expect(tools).toContain('"read_backup"');
      for (const body of bodies) {
        expect(JSON.stringify(body["tools"])).toBe(tools);
        const messages = messagesOf(body);
        expect(JSON.stringify(messages[0])).toBe(system);
        expect(messages.filter((message) => message.role === "user")).toEqual([{ role: "user", content: REQUEST }]);
      }
      // Every step after the backup went down carries the mask: allowed_tools, or the note appended last.
      bodies.forEach((body, index) => {
        const last = messagesOf(body).at(-1);
        if (index < 9) {
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

      // The masked tool never ran: refused with the reason it was withheld, no ledger row, no call.
      expect(h.host.calls.map((entry) => entry.tool)).not.toContain("read_backup");
      expect(h.host.calls).toHaveLength(STEPS - 1);
      const denied = h.memory.auditStore.events.filter((event) => event.kind === "denied");
      expect(denied).toEqual([
        expect.objectContaining({ subject: "call_12", code: "tool_not_permitted", tool: "read_backup" }),
      ]);
      expect(denied[0]?.detail.startsWith("offered (unhealthy):")).toBe(true);
      // The typed refusal in state: the offer check, with the reason the step withheld the tool.
      expect(state.denials).toEqual([
        expect.objectContaining({
          call_id: "call_12",
          tool: "read_backup",
          code: "tool_not_permitted",
          check: "offered",
          withheld: "unhealthy",
        }),
      ]);
      expect(state.ledger.map((entry) => entry.call_id)).not.toContain("call_12");
      expect(state.ledger).toHaveLength(STEPS - 1);
    });
  }

  it("compacts only the model's view: ledger, trace and citable refs keep every result", async () => {
    const STEPS = 16;
    const h = harness(server, { allowedTools: true, budgetTokens: 1_200 });
    for (let step = 1; step <= STEPS; step += 1) server.enqueue(call(`call_${step}`, "read_note", `cs301.n${step}`));
    // The answer cites the first result, which the view shows compacted by then.
    server.enqueue(final(["cs301.n1@1", `cs301.n${STEPS}@1`]));
    const state = await h.start();
    expect(server.pending()).toBe(0);

    const bodies = server.requests.map((request) => request.body);
    const last = messagesOf(bodies.at(-1) ?? {});
    const fenced = last
      .filter((message) => message.role === "tool")
      .map((m) => readFencedToolResult(String(m.content)));
    // The view was compacted, and still names every call and every ref.
    expect(fenced.filter((result) => result?.compacted === true).length).toBeGreaterThan(STEPS / 2);
    expect(fenced.at(-1)?.compacted).toBeUndefined();
    expect(fenced.flatMap((result) => result?.refs ?? [])).toEqual(
      Array.from({ length: STEPS }, (_, index) => `cs301.n${index + 1}@1`),
    );
    // Each result is paired with its call by the wire id (the call's ordinal), never the id the model minted.
    expect(last.filter((message) => message.role === "tool").map((message) => message.tool_call_id)).toEqual(
      Array.from({ length: STEPS }, (_, index) => wireCallId(index + 1)),
    );
    expect(
      last.flatMap((message) => (message as { tool_calls?: { id: string }[] }).tool_calls?.map((c) => c.id) ?? []),
    ).toEqual(Array.from({ length: STEPS }, (_, index) => wireCallId(index + 1)));

    // State, ledger and evidence keep every result whole; the citation of a compacted result is accepted.
    expect(state.status).toBe("completed");
    expect(state.result?.citations.map((citation) => citation.ref)).toEqual(["cs301.n1@1", `cs301.n${STEPS}@1`]);
    expect(state.ledger.map((entry) => entry.call_id)).toEqual(
      Array.from({ length: STEPS }, (_, index) => `call_${index + 1}`),
    );
    expect(state.ledger.every((entry) => entry.status === "succeeded")).toBe(true);
    expect(state.evidence.map((item) => item.ref)).toEqual(
      Array.from({ length: STEPS }, (_, index) => `cs301.n${index + 1}@1`),
    );
    expect(state.evidence[0]?.excerpt).toBe(NOTE_TEXT.slice(0, 600));
    // The trace's record of the last plan turn: the compaction it made.
    expect(state.tool_offer?.context).toMatchObject({ compactions: expect.any(Number) });
    expect(state.tool_offer?.context?.compactions).toBeGreaterThan(0);
    expect(state.tool_offer?.context?.compacted_results).toBeGreaterThan(STEPS / 2);
  });
});
