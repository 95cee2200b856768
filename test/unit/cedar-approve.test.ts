/**
 * Issue 40: who may answer a review as Cedar (the `approve` action). The
 * shipped policies/review.cedar decides exactly as the review policy's rule
 * (`mayDecide`) for every pair of principals of the directory and both
 * rules; a team-scoped reviewer rule refuses with a typed refusal naming the
 * policy; what the analysis of a policy finds it reads.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal.js";
import { mayDecide } from "../../src/policy/approval.js";
import { compileCedar } from "../../src/policy/cedar.js";
import { cedarSchemaFor } from "../../src/policy/cedar-schema.js";
import { contextKey, coveringPaths, prunedContext } from "../../src/policy/cedar-reach.js";
import { approverRefusal } from "../../src/policy/checks.js";
import { REVIEW_RULES } from "../../src/policy/decision.js";
import { builtinEngine } from "../../src/policy/engine.js";
import { shippedCatalog, shippedCedar } from "../support/cedar-catalog.js";

const directory = (
  JSON.parse(readFileSync("src/domains/dev-principals.json", "utf8")) as { principals: Principal[] }
).principals.map((principal) => ({ ...principal, grants: principal.grants ?? {} }));
const NOW = Date.parse("2026-03-02T10:00:00Z");

const TEAM_RULES = `
@id("review.owner")
permit (principal, action == Warrant::Action::"approve", resource)
when { context.rule == "owner_or_reviewer" && context.is_owner };

@id("review.reviewer")
permit (principal, action == Warrant::Action::"approve", resource)
when { principal.tenant == resource.tenant && principal.scopes.contains("approvals:decide") };

// A reviewer approves only for owners of a team they review.
@id("review.team")
forbid (principal, action == Warrant::Action::"approve", resource)
when { !context.is_owner && !principal.grants.teams.containsAny(resource.grants.teams) };
`;

describe("who may answer a review, in Cedar", () => {
  it("the shipped review.cedar decides as the review policy for every approver, owner and rule", () => {
    const engine = shippedCedar();
    let compared = 0;
    for (const approver of directory)
      for (const owner of directory)
        for (const rule of REVIEW_RULES) {
          const answer = engine.approve({ approver, owner, tool: "create_study_event", rule, now: NOW });
          expect(answer.allow, `${approver.user_id} for ${owner.user_id} under ${rule}`).toBe(
            mayDecide(approver, owner, rule),
          );
          expect(builtinEngine.approve({ approver, owner, tool: "create_study_event", rule, now: NOW }).allow).toBe(
            answer.allow,
          );
          compared += 1;
        }
    expect(compared).toBe(directory.length * directory.length * REVIEW_RULES.length);
  });

  it("a team-scoped reviewer: refused for another team's owner, naming the policy, typed approver_not_permitted", () => {
    const compiled = compileCedar({
      schemaFile: "s.cedarschema",
      schema: cedarSchemaFor(shippedCatalog(), ["teams"]),
      policies: [{ file: "review.cedar", text: TEAM_RULES }],
    });
    if (!compiled.engine) throw new Error(compiled.problems.map((problem) => problem.message).join("; "));
    const engine = compiled.engine;
    const base = { tenant: "uni", scopes: ["calendar:write"], role: "student" };
    const owner: Principal = { ...base, user_id: "olga", grants: { teams: ["x"] } };
    const reviewer = (user_id: string, teams: string[]): Principal => ({
      ...base,
      user_id,
      role: "reviewer",
      scopes: ["approvals:decide"],
      grants: { teams },
    });
    const request = (approver: Principal) => ({
      approver,
      owner,
      tool: "create_study_event",
      rule: "owner_or_reviewer" as const,
      now: NOW,
    });
    expect(engine.approve(request(reviewer("rx", ["x", "z"])))).toEqual({ allow: true, policies: ["review.reviewer"] });
    expect(engine.approve(request(reviewer("ry", ["y"])))).toEqual({ allow: false, policies: ["review.team"] });
    expect(engine.approve(request(owner))).toEqual({ allow: true, policies: ["review.owner"] });
    const pending = [{ tool: "create_study_event", rule: "owner_or_reviewer" as const, approval: { action_id: "a1" } }];
    expect(approverRefusal(reviewer("ry", ["y"]), owner, pending, engine, NOW)).toEqual({
      check: "approver",
      code: "approver_not_permitted",
      message: "you may not decide create_study_event (a1: owner or reviewer); policy review.team",
      policies: ["review.team"],
    });
    expect(approverRefusal(reviewer("rx", ["x"]), owner, pending, engine, NOW)).toBeNull();
  });

  it("a request carries, and a decision is cached on, exactly the context paths the policies read", () => {
    const context = { stage: "propose", time: { hour: 9, minute: 3 }, args: { limit: 5, query: "q" } };
    const paths = coveringPaths([
      ["args", "limit"],
      ["time", "hour"],
      ["args", "limit"],
      ["args", "missing"],
    ]);
    expect(paths).toEqual([
      ["args", "limit"],
      ["args", "missing"],
      ["time", "hour"],
    ]);
    expect(prunedContext(context, paths)).toEqual({ time: { hour: 9 }, args: { limit: 5 } });
    expect(contextKey({ ...context, args: { limit: 5, query: "other" } }, paths)).toBe(contextKey(context, paths));
    expect(contextKey({ ...context, time: { hour: 10, minute: 3 } }, paths)).not.toBe(contextKey(context, paths));
    expect(coveringPaths([["args"], ["args", "limit"]])).toEqual([["args"]]);
    expect(prunedContext(context, [[]])).toBe(context);
  });
});
