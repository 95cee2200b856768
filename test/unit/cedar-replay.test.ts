/**
 * Issue 40, items 3-4: `policy replay` between engines and with new Cedar
 * policies, and `policy explain` quoting the policies that decided. Recorded
 * steps are decided by the built-in engine over the shipped catalog (notes,
 * calendar, schedule, cases; alice, bob, dana); replayed under the shipped
 * Cedar policies nothing changes, under a changed policy exactly the calls
 * it forbids change, with `authorized` responsible.
 */
import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal.js";
import { decideAll } from "../../src/policy/decide.js";
import { builtinEngine } from "../../src/policy/engine.js";
import { compileCedar } from "../../src/policy/cedar.js";
import { explainRun, renderExplanation } from "../../src/trace/explain.js";
import { replay, type RecordedStep, type ReplayPolicy } from "../../src/trace/replay.js";
import type { RunTrace } from "../../src/trace/trace-entries.js";
import { readFileSync } from "node:fs";
import { shippedCatalog, shippedCedar, shippedConfig } from "../support/cedar-catalog.js";
import { ZERO_USAGE } from "../../src/policy/usage.js";

const config = shippedConfig();
const catalog = shippedCatalog(config);
const principals = (JSON.parse(readFileSync("src/domains/dev-principals.json", "utf8")) as { principals: Principal[] })
  .principals;
const who = (id: string) => principals.find((entry) => entry.user_id === id) as Principal;
const budgets = {
  tool_calls: 10,
  model_turns: 10,
  deadline_ms: 60_000,
  tokens: 100_000,
  cost_usd: 1,
  max_repeats: 2,
  no_progress_steps: 3,
};
const proposal = (call_id: string, name: string, args: Record<string, unknown>) => ({
  call_id,
  name,
  raw_arguments: JSON.stringify(args),
});

function recorded(owner: Principal, request: string, proposals: ReturnType<typeof proposal>[]): RecordedStep {
  const offer = { offered: catalog.map((tool) => tool.name), withheld: [] };
  const { decisions } = decideAll(
    proposals,
    {
      offer,
      catalog: { find: (name) => catalog.find((tool) => tool.name === name), isListed: () => true },
      owner,
      threadId: `t-${owner.user_id}`,
      runBound: /C-\d{3,}/.test(request) ? { case_id: /C-\d{3,}/.exec(request)?.[0] } : {},
      reviewPolicy: config.review_policy,
      maxRepeats: 2,
      now: 0,
    },
    { budgetLeft: 10, repeats: {} },
  );
  return {
    run_id: `r-${owner.user_id}`,
    thread_id: `t-${owner.user_id}`,
    at: "2026-12-01T10:00:00.000Z",
    state: {
      proposals,
      tool_offer: offer,
      usage: ZERO_USAGE,
      repeats: null,
      run: {
        run_id: `r-${owner.user_id}`,
        request,
        started_at: "2026-12-01T10:00:00.000Z",
        turn: 1,
        owner: owner.user_id,
        principal: owner,
        context: {},
      },
    } as RecordedStep["state"],
    decisions,
  };
}

const steps = [
  recorded(who("alice"), "revise attention", [
    proposal("a1", "read_note", { note_id: "cs301.bm25" }),
    proposal("a2", "read_note", { note_id: "db201.acid" }),
    proposal("a3", "search_notes", { query: "attention", course: "cs301" }),
    proposal("a4", "create_study_event", {
      title: "Revise",
      start: "2026-12-02T18:00:00Z",
      end: "2026-12-02T19:00:00Z",
    }),
    proposal("a5", "get_case_snapshot", { case_id: "C-101" }),
  ]),
  recorded(who("bob"), "plan", [
    proposal("b1", "read_note", { note_id: "cs301.bm25" }),
    proposal("b2", "calculate_schedule", { total_minutes: 240, days: 4, daily_limit: 90 }),
  ]),
  recorded(who("dana"), "look at C-101", [proposal("d1", "get_case_snapshot", { case_id: "C-101" })]),
];

const policyWith = (engine: ReplayPolicy["engine"]): ReplayPolicy => ({
  catalog,
  isListed: () => true,
  contracts: Object.values(config.tools),
  reviewPolicy: config.review_policy,
  maxTools: 64,
  budgets,
  stage: "default",
  principal: (recordedPrincipal) => recordedPrincipal,
  ...(engine ? { engine } : {}),
});

describe("policy replay between engines", () => {
  it("the shipped Cedar policies change no decision the built-in engine recorded", () => {
    const decided = steps.flatMap((step) => step.decisions.map((decision) => decision.type));
    expect(decided).toContain("deny");
    expect(decided).toContain("allow");
    const report = replay(steps, policyWith(shippedCedar(config)));
    expect(report).toMatchObject({ steps: 3, proposals: 8, changes: [] });
    expect(replay(steps, policyWith(builtinEngine)).changes).toEqual([]);
  });

  it("new policies (--policies): exactly the calls a new forbid names change, with authorized responsible", () => {
    const text = readFileSync("policies/study.cedar", "utf8");
    const freeze =
      `${text}\n@id("calendar.freeze")\n@code("access_denied")\n` +
      'forbid (principal, action == Warrant::Action::"create_study_event", resource);\n';
    const compiled = compileCedar({
      schemaFile: "policies/warrant.cedarschema",
      schema: readFileSync("policies/warrant.cedarschema", "utf8"),
      policies: [
        { file: "study.cedar", text: freeze },
        { file: "caseops.cedar", text: readFileSync("policies/caseops.cedar", "utf8") },
      ],
    });
    if (!compiled.engine) throw new Error(JSON.stringify(compiled.problems));
    const report = replay(steps, policyWith(compiled.engine));
    expect(report.changes.map((change) => [change.call_id, change.before, change.after, change.check])).toEqual([
      ["a4", "review (owner_or_reviewer)", "deny (authorized: access_denied)", "authorized"],
    ]);
  });
});

describe("policy explain", () => {
  it("names the determining policies and quotes their text", () => {
    const cedar = shippedCedar(config);
    const denied = replay(steps, policyWith(cedar));
    expect(denied.changes).toEqual([]);
    const trace = {
      run_id: "r-bob",
      thread_id: "t-bob",
      owner: "bob",
      request: "plan",
      timeline: [
        {
          kind: "decision",
          at: "2026-12-01T10:00:00.000Z",
          node: "authorize",
          call_id: "b1",
          tool: "read_note",
          outcome: "deny",
          check: "authorized",
          code: "access_denied",
          message: "the resource does not exist or is not accessible",
          arguments: null,
          policies: ["study.notes.course"],
        },
      ],
    } as unknown as RunTrace;
    const calls = explainRun(trace);
    expect(calls[0]?.decisions[0]?.policies).toEqual(["study.notes.course"]);
    const text = renderExplanation(trace, calls, (id) => cedar.policies.get(id)?.text);
    expect(text).toContain("determining policies: study.notes.course");
    expect(text).toContain("principal.grants.courses.contains(resource.owner)");
  });
});

describe("policy matrix from Cedar", () => {
  it("withholds what the policies refuse a principal outright, naming the policies", async () => {
    const { policyMatrix } = await import("../../src/policy/matrix.js");
    const cedar = shippedCedar(config);
    const rows = policyMatrix({
      tools: catalog.map((tool) => ({ ...tool, contract: { ...tool.contract, scopes: [] } })),
      principals: [who("rita")],
      reviewPolicy: config.review_policy,
      stages: ["default"],
      engine: cedar,
    });
    // Without the contracts' scopes only the policies say rita may not write to a calendar.
    expect(rows[0]?.withheld).toContainEqual({ tool: "create_study_event", reason: "policy: default deny" });
    expect(rows[0]?.offered).toContain("read_note");
  });
});
