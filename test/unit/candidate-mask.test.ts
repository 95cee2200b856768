/**
 * Issue 23: the run's candidate set is fixed at its start (tenant ∩ scopes
 * ∩ risk, narrowed by relevance once); per-step restrictions (stage, health)
 * mask it. A tool the mask withholds is still in the model's tools block,
 * and `authorize` refuses a call to it with the reason it was withheld.
 */
import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal.js";
import { buildCatalog } from "../../src/mcp/catalog.js";
import type { CatalogTool } from "../../src/policy/contracts.js";
import { toolBlock } from "../../src/planners/tool-block.js";
import { toToolSpec, ToolContractSchema } from "../../src/policy/contracts.js";
import { offered, type DecideContext } from "../../src/policy/checks.js";
import { candidateTools, effectiveTools } from "../../src/policy/effective-tools.js";
import { RISKS } from "../../src/policy/contracts.js";

const alice: Principal = {
  user_id: "alice",
  tenant: "uni",
  role: "student",
  scopes: ["notes:read"],
  grants: { courses: ["cs301"] },
};

function tool(name: string, description: string, server: string, contract: Record<string, unknown> = {}): CatalogTool {
  const parsed = ToolContractSchema.parse({ server, risk: "read", ...contract });
  const { tools } = buildCatalog(
    { [name]: parsed },
    { [server]: [{ name, description, inputSchema: { type: "object" } }] },
  );
  const built = tools[0];
  if (!built) throw new Error(`${name} not in catalog`);
  return built;
}

const CATALOG = [
  tool("search_notes", "Search the course notes", "notes"),
  tool("read_note", "Read one note", "notes", { stages: ["reading"] }),
  tool("weather", "Weather forecast for a city", "weather"),
  tool("stocks", "Stock quotes", "stocks"),
  tool("grades", "Student grades", "registry", { scopes: ["grades:read"] }),
];
const COUNTERS = { budgetLeft: 10, repeats: {} };
const selection = { tools: CATALOG, principal: alice, allowedRisks: RISKS, maxTools: 2, request: "search my notes" };

function decideContext(offer: ReturnType<typeof effectiveTools>): DecideContext {
  return {
    offer: { offered: offer.offered.map((entry) => entry.name), withheld: offer.withheld },
    catalog: { find: (name) => CATALOG.find((entry) => entry.name === name), isListed: () => true },
    owner: alice,
    threadId: "thread-1",
    runBound: {},
    reviewPolicy: { read: "none", write_reversible: "owner_or_reviewer", write_irreversible: "reviewer_not_owner" },
    maxRepeats: 2,
    now: 0,
  } as DecideContext;
}

describe("the run's candidate set and the step's mask", () => {
  it("fixes candidates by scope, risk and relevance, not by stage or health", () => {
    expect(candidateTools(selection)).toEqual(["search_notes", "read_note"]);
  });

  it("masks a candidate per step and keeps every other tool out as not_relevant", () => {
    const candidates = candidateTools(selection);
    const step = effectiveTools({
      ...selection,
      candidates,
      stage: "research",
      isHealthy: (server) => server !== "nowhere",
    });
    expect(step.offered.map((entry) => entry.name)).toEqual(["search_notes"]);
    expect(step.withheld).toEqual([
      { tool: "read_note", reason: "stage" },
      { tool: "weather", reason: "not_relevant" },
      { tool: "stocks", reason: "not_relevant" },
      { tool: "grades", reason: "scope" },
    ]);
    const unhealthy = effectiveTools({ ...selection, candidates, stage: "reading", isHealthy: () => false });
    expect(unhealthy.offered).toEqual([]);
    expect(unhealthy.withheld.slice(0, 2)).toEqual([
      { tool: "search_notes", reason: "unhealthy" },
      { tool: "read_note", reason: "unhealthy" },
    ]);
  });

  it("keeps the masked tool in the tools block and authorize refuses it with its withheld reason", () => {
    const candidates = candidateTools(selection);
    const step = effectiveTools({ ...selection, candidates, stage: "research", isHealthy: () => true });
    const specs = CATALOG.filter((entry) => candidates.includes(entry.name)).map(toToolSpec);
    for (const allowedTools of [true, false]) {
      const block = toolBlock(specs, step.offered.map(toToolSpec), allowedTools);
      expect(block.tools.map((entry) => entry.function.name)).toEqual(["read_note", "search_notes"]);
      if (allowedTools)
        expect(block.toolChoice).toEqual({
          type: "allowed_tools",
          allowed_tools: { mode: "auto", tools: [{ type: "function", function: { name: "search_notes" } }] },
        });
      else expect(block.note).toContain(JSON.stringify(["search_notes"]));
    }
    // The model calls the masked tool anyway: refused, with the reason it was withheld.
    const result = offered.run(
      { proposal: { call_id: "c1", name: "read_note", raw_arguments: "{}" } },
      decideContext(step),
      COUNTERS,
    );
    expect(result).toMatchObject({ ok: false, denial: { code: "tool_not_permitted", withheld: "stage" } });
    const allowed = offered.run(
      { proposal: { call_id: "c2", name: "search_notes", raw_arguments: "{}" } },
      decideContext(step),
      COUNTERS,
    );
    expect(allowed).toMatchObject({ ok: true });
  });

  it("sends nothing extra when the step allows the whole block", () => {
    const specs = CATALOG.slice(0, 2).map(toToolSpec);
    expect(toolBlock(specs, specs, true)).toEqual({ tools: expect.any(Array) });
    expect(toolBlock([], [], false)).toEqual({ tools: [] });
  });
});
