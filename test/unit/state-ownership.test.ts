/**
 * Field ownership (DESIGN §3): every node returns only the fields it owns,
 * and a second writer of a single-owner field in one step fails loudly.
 */
import { HumanMessage } from "@langchain/core/messages";
import { Command, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { buildAgent } from "../../graphs/agent.js";
import { AgentState, FIELD_OWNERS, type NodeName } from "../../src/state.js";
import { memoryHost, memoryTools } from "../support/memory-host.js";
import { calls, proposal, scriptedPlanner } from "../support/scripted-planner.js";

const alice = {
  user_id: "alice",
  tenant: "uni",
  role: "student",
  scopes: ["notes:read"],
  grants: { courses: ["cs301"] },
};

describe("field ownership", () => {
  it("each of the five nodes writes only its own fields", async () => {
    const planner = scriptedPlanner([
      calls(
        proposal("read_note", { note_id: "cs301.a" }),
        proposal("create_event", { title: "study" }),
        proposal("nope", {}),
      ),
      { type: "final", answer: "done", citations: ["cs301.a@1"], abstained: false },
    ]);
    const tools = memoryTools((tool) =>
      tool === "read_note"
        ? {
            ok: true,
            text: "{}",
            structured: { note_id: "cs301.a", source_id: "cs301/l1", text: "A note.", version: 1 },
          }
        : { ok: true, text: "{}", structured: { created: true } },
    );
    const written = new Map<NodeName, Set<string>>();
    const graph = buildAgent(memoryHost({ planner, tools }), (name, node) => {
      const wrapped = async (...args: Parameters<typeof node>) => {
        const update = (await node(...args)) as Record<string, unknown>;
        const keys = written.get(name) ?? new Set<string>();
        for (const key of Object.keys(update)) keys.add(key);
        written.set(name, keys);
        return update;
      };
      return wrapped as unknown as typeof node;
    }).compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "t1", langgraph_auth_user: alice } };

    await graph.invoke({ messages: [new HumanMessage("read and schedule")] }, config);
    await graph.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config);
    planner.assertDone();

    expect([...written.keys()].sort()).toEqual(["authorize", "execute", "human_review", "observe", "plan"]);
    for (const [node, keys] of written) {
      const owned: readonly string[] = FIELD_OWNERS[node];
      for (const key of keys) expect(owned, `${node} wrote ${key}`).toContain(key);
    }
    const state = (await graph.getState(config)).values;
    expect(state["status"]).toBe("completed");
    expect(tools.calls.map((call) => call.tool).sort()).toEqual(["create_event", "read_note"]);
  });

  it("fails loudly when two nodes write a single-owner field in one step", async () => {
    const graph = new StateGraph(AgentState)
      .addNode("first", async () => ({ proposals: [] }))
      .addNode("second", async () => ({ proposals: [] }))
      .addEdge(START, "first")
      .addEdge(START, "second")
      .addEdge("first", END)
      .addEdge("second", END)
      .compile();
    await expect(graph.invoke({ messages: [] })).rejects.toMatchObject({
      lc_error_code: "INVALID_CONCURRENT_GRAPH_UPDATE",
    });
  });

  it("rejects an illegal status write through the reducer", async () => {
    const graph = new StateGraph(AgentState)
      .addNode("rogue", async () => ({ status: "tool_running" as const }))
      .addEdge(START, "rogue")
      .addEdge("rogue", END)
      .compile();
    await expect(graph.invoke({ messages: [] })).rejects.toMatchObject({ code: "illegal_transition" });
  });
});
