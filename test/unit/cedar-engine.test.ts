/**
 * The Cedar engine behind `authorized`: typed refusals naming the policies
 * that decided, default deny, fail closed on anything Cedar cannot evaluate,
 * diagnostics for malformed policies and schema mismatches, and the config's
 * `policy.engine` (built-in by default).
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal.js";
import { compileCedar, watchedCedarEngine } from "../../src/policy/cedar.js";
import { cedarSchemaFor } from "../../src/policy/cedar-schema.js";
import { PolicyEngineConfigSchema, parseConfig } from "../../src/policy/config.js";
import { builtinEngine, type AuthorizationRequest } from "../../src/policy/engine.js";
import { policyEngineFor, policyEngineProblems } from "../../src/policy/policy-engine.js";
import { shippedCatalog } from "../support/cedar-catalog.js";

const catalog = shippedCatalog();
const schema = readFileSync("policies/warrant.cedarschema", "utf8");
const alice: Principal = {
  user_id: "alice",
  tenant: "uni",
  role: "student",
  scopes: ["notes:read", "calendar:read", "calendar:write"],
  grants: { courses: ["cs301"] },
  time_zone: "Europe/Berlin",
};
const A = "Warrant::Action";

function request(tool: string, args: Record<string, unknown>, extra: Partial<AuthorizationRequest> = {}) {
  const found = catalog.find((entry) => entry.name === tool);
  if (!found) throw new Error(tool);
  return {
    principal: alice,
    tool: found,
    args,
    stage: "propose" as const,
    run: { budgetLeft: 5, repeats: 0 },
    now: Date.parse("2026-03-02T10:00:00.000Z"),
    reviewed: false,
    ...extra,
  };
}

function engineOf(policies: string) {
  const compiled = compileCedar({
    schemaFile: "s.cedarschema",
    schema,
    policies: [{ file: "p.cedar", text: policies }],
  });
  if (!compiled.engine) throw new Error(compiled.problems.map((problem) => problem.message).join("; "));
  return compiled.engine;
}

describe("the Cedar engine", () => {
  it("denies by default (tool_not_permitted, no policy) and allows what a permit names, with its id", () => {
    const engine = engineOf(`@id("schedule") permit (principal, action == ${A}::"calculate_schedule", resource);`);
    expect(engine.authorize(request("calculate_schedule", { days: 2 }))).toEqual({
      allow: true,
      policies: ["schedule"],
    });
    expect(engine.authorize(request("list_events", {}))).toMatchObject({
      allow: false,
      code: "tool_not_permitted",
      policies: [],
    });
  });

  it("an argument-based limit and a time window in the principal's zone, as forbids with their code", () => {
    const engine = engineOf(`
      @id("schedule") permit (principal, action == ${A}::"calculate_schedule", resource);
      @id("calendar") permit (principal, action == ${A}::"create_study_event", resource);
      @id("limit") @code("access_denied")
      forbid (principal, action == ${A}::"calculate_schedule", resource)
      when { context.args has daily_limit && context.args.daily_limit > 120 };
      @id("hours") @code("access_denied")
      forbid (principal, action == ${A}::"create_study_event", resource)
      when { context.time.hour < 7 || context.time.hour >= 23 };`);
    expect(engine.authorize(request("calculate_schedule", { daily_limit: 120 })).allow).toBe(true);
    expect(engine.authorize(request("calculate_schedule", { daily_limit: 121 }))).toMatchObject({
      allow: false,
      code: "access_denied",
      policies: ["limit"],
    });
    // 10:00 UTC is 11:00 in Berlin; 21:30 UTC is 22:30 there; 22:30 UTC is 23:30 there.
    expect(engine.authorize(request("create_study_event", {})).allow).toBe(true);
    const at = (iso: string) => request("create_study_event", {}, { now: Date.parse(iso) });
    expect(engine.authorize(at("2026-03-02T21:30:00Z")).allow).toBe(true);
    expect(engine.authorize(at("2026-03-02T22:30:00Z"))).toMatchObject({ allow: false, policies: ["hours"] });
  });

  it("fails closed with a typed reason: an argument the schema types otherwise, an action the schema lacks", () => {
    const engine = engineOf(`@id("all") permit (principal, action, resource);`);
    expect(engine.authorize(request("calculate_schedule", { days: 1.5 }))).toMatchObject({
      allow: false,
      code: "access_denied",
      engineError: "evaluation_error",
    });
    const unknown = {
      ...request("calculate_schedule", {}),
      tool: { ...request("calculate_schedule", {}).tool, name: "drop_db" },
    };
    expect(engine.authorize(unknown)).toMatchObject({ allow: false, engineError: "missing_entity" });
  });

  it("reports malformed policies and policies that do not type-check, with the policy id", () => {
    const syntax = compileCedar({
      schemaFile: "s",
      schema,
      policies: [{ file: "bad.cedar", text: "permit (principal, action resource);" }],
    });
    expect(syntax.engine).toBeUndefined();
    expect(syntax.problems[0]?.file).toBe("bad.cedar");
    const typed = compileCedar({
      schemaFile: "s",
      schema,
      policies: [
        {
          file: "typed.cedar",
          text: `@id("typo") permit (principal, action == ${A}::"read_note", resource) when { context.args.note == "x" };`,
        },
      ],
    });
    expect(typed.engine).toBeUndefined();
    expect(typed.problems).toEqual([expect.objectContaining({ file: "typed.cedar", policy: "typo" })]);
    expect(typed.problems[0]?.message).toContain("note");
    const code = compileCedar({
      schemaFile: "s",
      schema,
      policies: [{ file: "c.cedar", text: `@id("x") @code("nope") forbid (principal, action, resource);` }],
    });
    expect(code.problems).toEqual([expect.objectContaining({ policy: "x" })]);
  });

  it("checks the schema against the catalog: every contracted tool has an action in its risk group", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "warrant-cedar-"));
    const configFile = path.join(dir, "warrant.config.json");
    const withoutOne = cedarSchemaFor(catalog.filter((tool) => tool.name !== "read_note"));
    writeFileSync(path.join(dir, "s.cedarschema"), withoutOne);
    writeFileSync(path.join(dir, "p.cedar"), `@id("all") permit (principal, action, resource);`);
    const files = { engine: "cedar" as const, cedar: { schema: "s.cedarschema", policies: ["p.cedar"] } };
    expect(policyEngineProblems(files, configFile, catalog).map((problem) => problem.message)).toEqual([
      "the Cedar schema has no action for the contracted tool read_note",
    ]);
    writeFileSync(path.join(dir, "s.cedarschema"), cedarSchemaFor(catalog));
    expect(policyEngineProblems(files, configFile, catalog)).toEqual([]);
  });

  it("re-reads changed files at the next check; a change that does not compile refuses every call", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "warrant-cedar-"));
    writeFileSync(path.join(dir, "s.cedarschema"), schema);
    const policyFile = path.join(dir, "p.cedar");
    writeFileSync(policyFile, `@id("all") permit (principal, action, resource);`);
    const engine = watchedCedarEngine(dir, { schema: "s.cedarschema", policies: ["p.cedar"] });
    expect(engine.authorize(request("list_events", {})).allow).toBe(true);
    writeFileSync(policyFile, `@id("none") forbid (principal, action, resource);\n`);
    expect(engine.authorize(request("list_events", {}))).toMatchObject({ allow: false, policies: ["none"] });
    writeFileSync(policyFile, "permit (principal,");
    expect(engine.authorize(request("list_events", {}))).toMatchObject({
      allow: false,
      engineError: "policies_invalid",
    });
  });

  it("the config chooses the engine: built-in by default, cedar needs its files", () => {
    expect(PolicyEngineConfigSchema.parse(undefined)).toEqual({ engine: "builtin" });
    expect(PolicyEngineConfigSchema.safeParse({ engine: "cedar" }).success).toBe(false);
    expect(policyEngineFor({ engine: "builtin" }, "warrant.config.json")).toBe(builtinEngine);
    const shipped = parseConfig(readFileSync("warrant.config.json", "utf8"));
    expect(policyEngineFor({ ...shipped.policy, engine: "cedar" }, "warrant.config.json").name).toBe("cedar");
  });
});
