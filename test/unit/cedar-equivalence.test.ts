/**
 * The shipped Cedar policies (policies/study.cedar, policies/caseops.cedar)
 * decide exactly as the built-in engine: over every recorded proposal of the
 * eval (eval/results/runs.json: 34 tasks × 6 configurations, each repeat),
 * with the task's principal and the resource its tool sequence names — and,
 * where a refused proposal's arguments were not recorded, every resource the
 * eval names — then over adversarial arguments for every principal of the
 * directory. Compared at the engine and through the whole pipeline
 * (`decideOne`: the same decision, check and code).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type Principal, PrincipalSchema } from "../../src/auth/principal.js";
import type { CatalogTool } from "../../src/policy/contracts.js";
import { decideOne } from "../../src/policy/decide.js";
import type { DecideContext } from "../../src/policy/checks.js";
import { builtinEngine, type PolicyEngine } from "../../src/policy/engine.js";
import { summarize } from "../../src/trace/replay.js";
import { TASKS } from "../../eval/tasks/index.js";
import { shippedCatalog, shippedCedar, shippedConfig } from "../support/cedar-catalog.js";

const config = shippedConfig();
const catalog = shippedCatalog(config);
const cedar = shippedCedar(config);
const directory = new Map(
  (JSON.parse(readFileSync("src/domains/dev-principals.json", "utf8")) as { principals: unknown[] }).principals
    .map((entry) => PrincipalSchema.parse(entry))
    .map((principal) => [principal.user_id, principal] as const),
);
const runs = (
  JSON.parse(readFileSync("eval/results/runs.json", "utf8")) as {
    runs: { task_id: string; configuration: string; tool_sequence: string[] }[];
  }
).runs;
const NOW = Date.parse("2026-03-02T10:00:00.000Z");

/** `tool(a,b): ok` or `tool: denied code` → the tool and the values it named. */
function parseEntry(entry: string): { tool: string; values: string[] } {
  const match = /^([A-Za-z0-9_-]+)(?:\(([^)]*)\))?:/.exec(entry);
  if (!match?.[1]) throw new Error(`unreadable tool sequence entry ${entry}`);
  return { tool: match[1], values: match[2] ? match[2].split(",") : [] };
}

const noteIds = new Set<string>();
const caseIds = new Set<string>(["C-101", "C-102", "C-103"]);
const documentIds = new Set<string>();
for (const run of runs)
  for (const entry of run.tool_sequence) {
    const { tool, values } = parseEntry(entry);
    if (tool === "read_note" && values[0]) noteIds.add(values[0]);
    if (tool === "resolve_document_alias" && values[0]) documentIds.add(values[0]);
  }
const courses = new Set([...noteIds].map((id) => id.split(".")[0] as string));

/** The arguments a recorded entry stands for (every candidate resource when the entry did not record them). */
function argumentsFor(tool: string, values: string[]): Record<string, unknown>[] {
  switch (tool) {
    case "read_note":
      return (values[0] ? [values[0]] : [...noteIds]).map((note_id) => ({ note_id }));
    case "search_notes":
      return [{ query: "attention" }, ...[...courses].map((course) => ({ query: "attention", course }))];
    case "resolve_document_alias":
      return values.length === 2
        ? [{ document_id: values[0], case_id: values[1] }]
        : [...documentIds].flatMap((document_id) => [...caseIds].map((case_id) => ({ document_id, case_id })));
    case "get_case_snapshot":
    case "get_policy_requirements":
    case "list_unclassified_documents":
      return (values[0] ? [values[0]] : [...caseIds]).map((case_id) => ({ case_id }));
    case "calculate_schedule":
      return [{ total_minutes: 240, days: 4, daily_limit: 90 }];
    case "create_study_event":
      return [{ title: "Study", start: "2026-03-03T18:00:00Z", end: "2026-03-03T19:00:00Z" }];
    default:
      return [{}];
  }
}

/** Arguments a hostile model might try, per tool with a resource rule (and plain ones for the others). */
const ADVERSARIAL: Record<string, Record<string, unknown>[]> = {
  read_note: [
    { note_id: "db201.acid" },
    { note_id: "ph110.exam-2-solutions" },
    { note_id: "../cs301.bm25" },
    { note_id: "CS301.bm25" },
    { note_id: "cs301" },
    { note_id: "cs301.bm25\u0000db201" },
    { note_id: "" },
    { note_id: "db201..cs301.bm25" },
  ],
  search_notes: [
    { query: "x", course: "db201" },
    { query: "x", course: "cs301 " },
    { query: "x", course: "ph110" },
    { query: "x", course: "cs3011" },
    { query: "x", course: "" },
    { query: "x", limit: 1000 },
  ],
};

function toolNamed(name: string): CatalogTool {
  const tool = catalog.find((entry) => entry.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool;
}

function contextFor(principal: Principal, engine: PolicyEngine, caseId?: string): DecideContext {
  return {
    offer: { offered: catalog.map((tool) => tool.name), withheld: [] },
    catalog: { find: (name) => catalog.find((tool) => tool.name === name), isListed: () => true },
    owner: principal,
    threadId: "thread-equivalence",
    runBound: caseId ? { case_id: caseId } : {},
    reviewPolicy: config.review_policy,
    maxRepeats: 3,
    now: NOW,
    engine,
  };
}

interface Compared {
  seen: Set<string>;
  cases: number;
  allowed: number;
  denied: number;
  differences: string[];
}

function compare(principal: Principal, tool: string, args: Record<string, unknown>, into: Compared) {
  // Recorded runs repeat the same calls: each distinct (principal, tool, arguments) is compared once.
  const seenKey = `${principal.user_id} ${tool} ${JSON.stringify(args)}`;
  if (into.seen.has(seenKey)) return;
  into.seen.add(seenKey);
  const request = {
    principal,
    tool: toolNamed(tool),
    args,
    stage: "propose" as const,
    run: { budgetLeft: 10, repeats: 0 },
    now: NOW,
    reviewed: false,
  };
  const built = builtinEngine.authorize(request);
  const viaCedar = cedar.authorize(request);
  const key = `${principal.user_id} ${tool} ${JSON.stringify(args)}`;
  into.cases += 1;
  if (built.allow) into.allowed += 1;
  else into.denied += 1;
  const word = (answer: typeof built) => (answer.allow ? "allow" : `deny ${answer.code}`);
  if (word(built) !== word(viaCedar)) into.differences.push(`${key}: builtin ${word(built)}, cedar ${word(viaCedar)}`);
  if (!viaCedar.allow && viaCedar.engineError) into.differences.push(`${key}: cedar engine error ${viaCedar.message}`);
  // The whole pipeline: the same decision, check and code.
  const caseId = typeof args["case_id"] === "string" ? args["case_id"] : undefined;
  const proposal = { call_id: "call-1", name: tool, raw_arguments: JSON.stringify(args) };
  const counters = { budgetLeft: 10, repeats: {} };
  const before = summarize(decideOne(proposal, contextFor(principal, builtinEngine, caseId), counters).decision);
  const after = summarize(decideOne(proposal, contextFor(principal, cedar, caseId), counters).decision);
  if (before !== after) into.differences.push(`${key}: pipeline builtin ${before}, cedar ${after}`);
}

describe("the shipped Cedar policies decide as the built-in engine", () => {
  it("over every recorded proposal of the eval (34 tasks × 6 configurations)", () => {
    const tasks = new Map(TASKS.map((task) => [task.id, task]));
    expect(new Set(runs.map((run) => run.task_id)).size).toBe(34);
    expect(new Set(runs.map((run) => run.configuration)).size).toBe(6);
    const compared: Compared = { seen: new Set(), cases: 0, allowed: 0, denied: 0, differences: [] };
    let proposals = 0;
    for (const run of runs) {
      const task = tasks.get(run.task_id);
      const principal = task ? directory.get(task.user) : undefined;
      if (!principal) throw new Error(`no principal for ${run.task_id}`);
      for (const entry of run.tool_sequence) {
        const { tool, values } = parseEntry(entry);
        proposals += 1;
        for (const args of argumentsFor(tool, values)) compare(principal, tool, args, compared);
      }
    }
    expect(proposals).toBeGreaterThan(1000);
    expect(compared.differences).toEqual([]);
    // Both outcomes are exercised: the comparison is not vacuous.
    expect(compared.allowed).toBeGreaterThan(20);
    expect(compared.denied).toBeGreaterThan(20);
  });

  it("over adversarial arguments, for every principal of the directory and every tool", () => {
    const compared: Compared = { seen: new Set(), cases: 0, allowed: 0, denied: 0, differences: [] };
    for (const principal of directory.values())
      for (const tool of catalog)
        for (const args of [...(ADVERSARIAL[tool.name] ?? []), ...argumentsFor(tool.name, [])])
          compare(principal, tool.name, args, compared);
    expect(compared.differences).toEqual([]);
    expect(compared.denied).toBeGreaterThan(50);
    expect(compared.allowed).toBeGreaterThan(50);
  });

  it("names the determining policies on a Cedar denial", () => {
    const bob = directory.get("bob") as Principal;
    const denied = decideOne(
      { call_id: "c1", name: "read_note", raw_arguments: JSON.stringify({ note_id: "cs301.bm25" }) },
      contextFor(bob, cedar),
      { budgetLeft: 10, repeats: {} },
    ).decision;
    expect(denied).toMatchObject({ type: "deny", check: "authorized", code: "access_denied" });
    expect(denied.type === "deny" ? denied.policies : undefined).toEqual(["study.notes.course"]);
  });
});
