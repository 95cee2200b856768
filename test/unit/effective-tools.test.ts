/**
 * The effective tool set for one step: catalog ∩ scopes ∩ stage ∩ risk ∩
 * healthy servers, then top-k by relevance plus the always-available tools.
 */
import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal.js";
import { buildCatalog } from "../../src/mcp/catalog.js";
import type { CatalogTool } from "../../src/policy/contracts.js";
import { ToolContractSchema } from "../../src/policy/contracts.js";
import { effectiveTools, type EffectiveToolsInput } from "../../src/policy/effective-tools.js";
import { RISKS } from "../../src/policy/contracts.js";

const alice: Principal = {
  user_id: "alice",
  tenant: "uni",
  role: "student",
  scopes: ["notes:read"],
  grants: { courses: ["cs301"] },
};

function tool(
  name: string,
  description: string,
  contract: Record<string, unknown> = {},
  server = "notes",
): CatalogTool {
  const parsed = ToolContractSchema.parse({ server, risk: "read", ...contract });
  const { tools } = buildCatalog(
    { [name]: parsed },
    { [server]: [{ name, description, inputSchema: { type: "object" } }] },
  );
  const built = tools[0];
  if (!built) throw new Error(`${name} not in catalog`);
  return built;
}

function input(tools: CatalogTool[], overrides: Partial<EffectiveToolsInput> = {}): EffectiveToolsInput {
  return {
    tools,
    principal: alice,
    stage: "research",
    allowedRisks: RISKS,
    isHealthy: () => true,
    maxTools: 8,
    request: "",
    ...overrides,
  };
}

const names = (tools: readonly CatalogTool[]) => tools.map((entry) => entry.name);

describe("effectiveTools: filters", () => {
  it("gives the empty set for the empty catalog", () => {
    expect(effectiveTools(input([]))).toEqual({ offered: [], withheld: [] });
  });

  it("offers every eligible tool, in catalog order, when within maxTools", () => {
    const tools = [tool("b_tool", "B"), tool("a_tool", "A")];
    expect(effectiveTools(input(tools))).toEqual({ offered: tools, withheld: [] });
  });

  it("withholds a tool whose scopes the principal lacks as `scope`", () => {
    const tools = [
      tool("search_notes", "Search", { scopes: ["notes:read"] }),
      tool("grade", "Grade", { scopes: ["grades:write"] }),
    ];
    const result = effectiveTools(input(tools));
    expect(names(result.offered)).toEqual(["search_notes"]);
    expect(result.withheld).toEqual([{ tool: "grade", reason: "scope" }]);
  });

  it("withholds a tool not allowed in this stage as `stage`; `any` matches every stage", () => {
    const tools = [
      tool("anywhere", "A"),
      tool("drafting_only", "D", { stages: ["drafting"] }),
      tool("research_tool", "R", { stages: ["drafting", "research"] }),
    ];
    const result = effectiveTools(input(tools, { stage: "research" }));
    expect(names(result.offered)).toEqual(["anywhere", "research_tool"]);
    expect(result.withheld).toEqual([{ tool: "drafting_only", reason: "stage" }]);
  });

  it("withholds a tool whose risk is not allowed as `risk`", () => {
    const tools = [
      tool("reader", "R"),
      tool("writer", "W", { risk: "write_reversible" }),
      tool("deleter", "D", { risk: "write_irreversible" }),
    ];
    const result = effectiveTools(input(tools, { allowedRisks: ["read", "write_reversible"] }));
    expect(names(result.offered)).toEqual(["reader", "writer"]);
    expect(result.withheld).toEqual([{ tool: "deleter", reason: "risk" }]);
  });

  it("withholds a tool of an unhealthy server as `unhealthy`", () => {
    const tools = [tool("search_notes", "S"), tool("calendar_add", "C", {}, "calendar")];
    const asked: string[] = [];
    const result = effectiveTools(
      input(tools, {
        isHealthy: (server) => {
          asked.push(server);
          return server !== "calendar";
        },
      }),
    );
    expect(names(result.offered)).toEqual(["search_notes"]);
    expect(result.withheld).toEqual([{ tool: "calendar_add", reason: "unhealthy" }]);
    expect(asked).toEqual(["notes", "calendar"]);
  });

  it("reports the first failing filter in the order scope, stage, risk, unhealthy", () => {
    const failsAll = tool("bad", "B", { scopes: ["nope"], stages: ["other"], risk: "write_irreversible" });
    const failsStageRisk = tool("bad2", "B", { stages: ["other"], risk: "write_irreversible" });
    const failsRiskHealth = tool("bad3", "B", { risk: "write_irreversible" });
    const result = effectiveTools(
      input([failsAll, failsStageRisk, failsRiskHealth], { allowedRisks: ["read"], isHealthy: () => false }),
    );
    expect(result.offered).toEqual([]);
    expect(result.withheld).toEqual([
      { tool: "bad", reason: "scope" },
      { tool: "bad2", reason: "stage" },
      { tool: "bad3", reason: "risk" },
    ]);
  });

  it("withholds everything with no allowed risks", () => {
    const result = effectiveTools(input([tool("reader", "R")], { allowedRisks: [] }));
    expect(result).toEqual({ offered: [], withheld: [{ tool: "reader", reason: "risk" }] });
  });
});

describe("effectiveTools: top-k selection", () => {
  const help = tool("help", "Explain what the assistant can do.", { always_available: true });
  const search = tool("search_notes", "Search the course notes by query.");
  const read = tool("read_note", "Read one note by its id.");
  const calendar = tool("add_event", "Add an event to the calendar.");
  const weather = tool("weather", "Current weather for a city.");
  const catalog = [calendar, help, weather, search, read];

  it("keeps always-available tools plus the most relevant ones, in catalog order, and withholds the rest as not_relevant", () => {
    const result = effectiveTools(
      input(catalog, { maxTools: 3, request: "Search my notes for graph algorithms and read the best note" }),
    );
    expect(names(result.offered)).toEqual(["help", "search_notes", "read_note"]);
    expect(result.withheld).toEqual([
      { tool: "add_event", reason: "not_relevant" },
      { tool: "weather", reason: "not_relevant" },
    ]);
  });

  it("keeps an always-available tool even when it is irrelevant to the request", () => {
    const result = effectiveTools(input(catalog, { maxTools: 2, request: "what is the weather in the city" }));
    expect(names(result.offered)).toEqual(["help", "weather"]);
    expect(result.withheld.map((entry) => entry.tool)).toEqual(["add_event", "search_notes", "read_note"]);
    expect(result.withheld.every((entry) => entry.reason === "not_relevant")).toBe(true);
  });

  it("breaks ties by catalog order", () => {
    const a = tool("alpha", "Nothing in common.");
    const b = tool("bravo", "Nothing in common.");
    const c = tool("charlie", "Nothing in common.");
    const result = effectiveTools(input([c, a, b], { maxTools: 2, request: "unrelated words" }));
    expect(names(result.offered)).toEqual(["charlie", "alpha"]);
    expect(result.withheld).toEqual([{ tool: "bravo", reason: "not_relevant" }]);
  });

  it("ranks a later, more relevant tool above an earlier, less relevant one", () => {
    const result = effectiveTools(input([calendar, weather, search], { maxTools: 1, request: "search notes" }));
    expect(names(result.offered)).toEqual(["search_notes"]);
    expect(result.withheld).toEqual([
      { tool: "add_event", reason: "not_relevant" },
      { tool: "weather", reason: "not_relevant" },
    ]);
  });

  it("lists filter reasons before not_relevant, and selects only among eligible tools", () => {
    const hidden = tool("grade", "Search grades.", { scopes: ["grades:read"] });
    const result = effectiveTools(input([hidden, calendar, search], { maxTools: 1, request: "search" }));
    expect(names(result.offered)).toEqual(["search_notes"]);
    expect(result.withheld).toEqual([
      { tool: "grade", reason: "scope" },
      { tool: "add_event", reason: "not_relevant" },
    ]);
  });

  it("offers exactly maxTools when there are enough eligible tools", () => {
    for (const maxTools of [1, 2, 3, 4]) {
      const result = effectiveTools(input(catalog, { maxTools, request: "read a note" }));
      expect(result.offered).toHaveLength(maxTools);
      expect(result.offered.length + result.withheld.length).toBe(catalog.length);
    }
  });
});
