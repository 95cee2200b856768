/**
 * The policy tools' pure parts: every config problem with its path
 * (config-check.ts), the matrix of who may call what (matrix.ts), and the
 * what-if replay of recorded decisions (trace/replay.ts). No I/O.
 */
import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal.js";
import { buildCatalog, type ListedTool } from "../../src/mcp/catalog.js";
import { configProblems, parseConfigProblems } from "../../src/policy/config-check.js";
import { WarrantConfigSchema, type WarrantConfig } from "../../src/policy/config.js";
import { decideAll } from "../../src/policy/decide.js";
import { policyMatrix, stagesOf } from "../../src/policy/matrix.js";
import { checksPassed } from "../../src/trace/explain.js";
import { replay, type RecordedStep, type ReplayPolicy } from "../../src/trace/replay.js";
import { ZERO_USAGE } from "../../src/policy/usage.js";
import { proposal } from "../support/scripted-planner.js";

const student = (user_id: string, scopes: string[], tenant = "uni"): Principal => ({
  user_id,
  tenant,
  role: "student",
  scopes,
  grants: {},
});
const alice = student("alice", ["notes:read", "calendar:write"]);
const rita: Principal = { ...student("rita", ["notes:read", "approvals:decide"]), role: "reviewer" };

const CONFIG = {
  servers: { notes: { transport: "stdio", command: "node" }, calendar: { transport: "stdio", command: "node" } },
  tools: {
    read_note: { server: "notes", risk: "read", scopes: ["notes:read"] },
    get_case: {
      server: "notes",
      risk: "read",
      scopes: ["notes:read"],
      run_bound: { case_id: { from_request: "C-\\d+" } },
    },
    create_event: { server: "calendar", risk: "write_reversible", scopes: ["calendar:write"], stages: ["planning"] },
  },
};
const config = (patch: (raw: typeof CONFIG) => unknown = (raw) => raw): WarrantConfig =>
  WarrantConfigSchema.parse(patch(structuredClone(CONFIG)));

const LISTED: Record<string, ListedTool[]> = {
  notes: [
    { name: "read_note", inputSchema: { type: "object", properties: { note_id: { type: "string" } } } },
    {
      name: "get_case",
      inputSchema: { type: "object", properties: { case_id: { type: "string" } }, required: ["case_id"] },
    },
  ],
  calendar: [{ name: "create_event", inputSchema: { type: "object", properties: { title: { type: "string" } } } }],
};
const facts = (listed: Record<string, ListedTool[] | { error: string }> = LISTED) => ({
  listed,
  principals: [alice, rita],
  model: { planner: "rules" as const, name: "gpt-4o-mini" },
});

describe("config check", () => {
  it("reports every schema problem with its path, not only the first", () => {
    const text = JSON.stringify({
      ...CONFIG,
      tools: {
        a: { server: "nowhere", risk: "read" },
        b: { server: "notes", risk: "dangerous" },
      },
    });
    const { config: parsed, problems } = parseConfigProblems(text);
    expect(parsed).toBeUndefined();
    expect(problems.map((problem) => problem.path)).toEqual(expect.arrayContaining(["tools.b.risk"]));
    expect(parseConfigProblems("{").problems).toMatchObject([{ path: "(root)", severity: "error" }]);
    expect(
      parseConfigProblems(JSON.stringify({ ...CONFIG, tools: { a: { server: "nowhere", risk: "read" } } })).problems,
    ).toMatchObject([{ path: "tools.a.server", severity: "error" }]);
  });

  it("a valid config with its facts in order has no problem", () => {
    expect(configProblems(config(), facts())).toEqual([]);
  });

  it("a contract for a tool its server does not list", () => {
    const listed = { ...LISTED, calendar: [] };
    expect(configProblems(config(), facts(listed))).toEqual([
      { path: "tools.create_event", message: 'server "calendar" lists no tool "create_event"', severity: "error" },
    ]);
  });

  it("a server that could not be listed is a warning, and its contracts are not judged", () => {
    expect(configProblems(config(), facts({ ...LISTED, calendar: { error: "down" } }))).toMatchObject([
      { path: "servers.calendar", severity: "warning" },
    ]);
  });

  it("a run-bound or resource argument the tool's schema lacks", () => {
    const broken = config((raw) => {
      raw.tools.read_note = {
        ...raw.tools.read_note,
        run_bound: { course: { from_request: "cs\\d+" } },
        resource: { argument: "course", pattern: "^(.*)$", principal_field: "courses" },
      } as never;
      return raw;
    });
    expect(configProblems(broken, facts()).map((problem) => problem.path)).toEqual([
      "tools.read_note.run_bound.course",
      "tools.read_note.resource.argument",
    ]);
  });

  it("a review rule nobody in the directory can satisfy", () => {
    const fourEyes = config((raw) => ({ ...raw, review_policy: { write_reversible: "reviewer_not_owner" } }));
    expect(configProblems(fourEyes, facts())).toEqual([]);
    const alone = { ...facts(), principals: [alice] };
    expect(configProblems(fourEyes, alone)).toMatchObject([
      { path: "review_policy.write_reversible", severity: "error" },
    ]);
    // The owner may decide owner_or_reviewer alone: reachable.
    expect(configProblems(config(), alone)).toEqual([]);
    // A reviewer of another tenant does not count.
    expect(
      configProblems(fourEyes, { ...facts(), principals: [alice, { ...rita, tenant: "other" }] }).map((p) => p.path),
    ).toEqual(["review_policy.write_reversible"]);
  });

  it("a model planner whose model has no price", () => {
    const model = { planner: "model" as const, name: "gpt-x" };
    expect(configProblems(config(), { ...facts(), model })).toMatchObject([
      { path: "models.gpt-x", severity: "warning" },
    ]);
    const priced = config((raw) => ({
      ...raw,
      models: { "gpt-x": { input_per_million_usd: 1, output_per_million_usd: 2 } },
    }));
    expect(configProblems(priced, { ...facts(), model })).toEqual([]);
  });
});

describe("policy matrix", () => {
  const { tools } = buildCatalog(config().tools, LISTED);

  it("offers, withholds with the reason, and names who reviews, per principal and stage", () => {
    const stages = stagesOf(tools, "default");
    expect(stages).toEqual(["default", "planning"]);
    const rows = policyMatrix({ tools, principals: [alice, rita], reviewPolicy: config().review_policy, stages });
    const row = (who: string, stage: string) => rows.find((entry) => entry.principal === who && entry.stage === stage);
    expect(row("alice", "default")).toMatchObject({
      offered: ["read_note", "get_case"],
      withheld: [{ tool: "create_event", reason: "stage" }],
      review: [],
    });
    expect(row("alice", "planning")?.review).toEqual([
      { tool: "create_event", rule: "owner_or_reviewer", deciders: ["alice", "rita"] },
    ]);
    expect(row("rita", "planning")?.withheld).toEqual([{ tool: "create_event", reason: "scope" }]);
  });

  it("with no principals, no rows", () => {
    expect(policyMatrix({ tools, principals: [], reviewPolicy: config().review_policy, stages: ["default"] })).toEqual(
      [],
    );
  });
});

describe("replay", () => {
  const recordedWith = (shipped: WarrantConfig, owner: Principal): RecordedStep => {
    const { tools } = buildCatalog(shipped.tools, LISTED);
    const proposals = [
      proposal("read_note", { note_id: "n1" }),
      proposal("create_event", { title: "revise" }),
      proposal("nothing_like_it", {}),
    ];
    const offer = { offered: ["read_note", "get_case", "create_event"], withheld: [] };
    const { decisions } = decideAll(
      proposals,
      {
        offer,
        catalog: { find: (name) => tools.find((tool) => tool.name === name), isListed: () => false },
        owner,
        threadId: "t1",
        runBound: {},
        reviewPolicy: shipped.review_policy,
        maxRepeats: 2,
        now: 0,
      },
      { budgetLeft: 10, repeats: {} },
    );
    return {
      run_id: "r1",
      thread_id: "t1",
      at: "2026-12-01T10:00:00.000Z",
      state: {
        proposals,
        tool_offer: offer,
        usage: ZERO_USAGE,
        repeats: null,
        run: {
          run_id: "r1",
          request: "revise",
          started_at: "2026-12-01T10:00:00.000Z",
          turn: 1,
          owner: owner.user_id,
          principal: owner,
          context: {},
        },
      } as RecordedStep["state"],
      decisions,
    };
  };
  const policyFor = (other: WarrantConfig, principal = (p: Principal) => p): ReplayPolicy => {
    const { tools } = buildCatalog(other.tools, LISTED);
    return {
      catalog: tools,
      isListed: () => false,
      contracts: Object.values(other.tools),
      reviewPolicy: other.review_policy,
      maxTools: 8,
      budgets: {
        tool_calls: 10,
        model_turns: 10,
        deadline_ms: 60_000,
        tokens: 100_000,
        cost_usd: 1,
        max_repeats: 2,
        no_progress_steps: 3,
      },
      stage: "planning",
      principal,
    };
  };
  const step = recordedWith(config(), alice);

  it("an identical config changes nothing", () => {
    const report = replay([step], policyFor(config()));
    expect(report).toMatchObject({ runs: ["r1"], steps: 1, proposals: 3, changes: [], offers: [] });
  });

  it("a scope taken from the owner: exactly the proposals that used it are denied by `authorized`", () => {
    const withoutWrite = (principal: Principal) => ({ ...principal, scopes: ["notes:read"] });
    const report = replay([step], policyFor(config(), withoutWrite));
    expect(report.changes).toEqual([
      expect.objectContaining({
        call_id: step.state.proposals?.[1]?.call_id,
        tool: "create_event",
        before: "review (owner_or_reviewer)",
        after: "deny (authorized: tool_not_permitted)",
        check: "authorized",
        hypothetical: false,
      }),
    ]);
    expect(report.offers).toEqual([expect.objectContaining({ removed: ["create_event"], added: [] })]);
  });

  it("a tool's risk raised: allow → review; later steps of that run are hypothetical", () => {
    const raised = config((raw) => {
      raw.tools.read_note = { ...raw.tools.read_note, risk: "write_reversible" } as never;
      return raw;
    });
    const later = { ...step, at: "2026-12-01T10:01:00.000Z" };
    const report = replay([step, later], policyFor(raised));
    expect(report.changes.map((change) => [change.tool, change.before, change.after, change.hypothetical])).toEqual([
      ["read_note", "allow", "review (owner_or_reviewer)", false],
      ["read_note", "allow", "review (owner_or_reviewer)", true],
    ]);
  });
});

describe("explain", () => {
  it("names the checks passed before the refusing one, and all of them otherwise", () => {
    expect(checksPassed("authorized", "deny")).toEqual(["offered", "arguments", "run_bound"]);
    expect(checksPassed("offered", "deny")).toEqual([]);
    expect(checksPassed(null, "allow")).toEqual([
      "offered",
      "arguments",
      "run_bound",
      "authorized",
      "budget",
      "repeat",
    ]);
  });
});
